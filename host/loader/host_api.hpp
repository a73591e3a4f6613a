// The host side of the C ABI: the per-plugin context behind HtpHost and the function table.
#pragma once

#include <htp/abi.h>

#include <string>
#include <vector>

#include "diag/diagnostic.hpp"
#include "registry/component.hpp"

/// Per-plugin context (opaque to plugins); registrations made during init are staged in `pending`
/// and enter the registry only when init succeeds.
struct HtpHost {
  std::string plugin_name;
  bool registering = false;
  std::vector<htp::Component> pending;
};

/// A diagnostic sink handed to one plugin call.
struct HtpDiag {
  htp::DiagnosticList *list = nullptr;
  std::string plugin_name;
};

namespace htp {

/// The function table for one plugin context.
HtpHostApi make_host_api(HtpHost *host);

/// Copies a borrowed HtpStr after validating it (NULL with a length, absurd lengths).
bool copy_htp_str(HtpStr s, std::string &out, std::string &why);

}  // namespace htp
