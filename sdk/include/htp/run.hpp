// htp/run.hpp — the C++ layer over ABI 1.2's package running, for binding authors.
//
//   static void run(htp::RunContext &ctx) {
//     const htp::RunTensor &a = ctx.tensor("A");            // DLPack tensor in host memory
//     float *out = ctx.tensor("C").data<float>();
//     ctx.write_report(R"({"schema":"htp.run.v1","path":"cpu-sim"})");
//   }
//   r.add(htp::BindingSpec{.info = {...}, .targets = {"mine-sim"}, .run = htp::run_body<run>});
//
// Errors: ctx.error(code, message) reports and lets run continue; throw htp::RunError to stop.
#pragma once

#include <htp/plugin.hpp>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace htp {

/// Thrown from binding code to stop the run with this message (code "run.error").
class RunError : public std::runtime_error {
public:
  explicit RunError(const std::string &message, std::string code = "run.error")
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string &code() const { return code_; }

private:
  std::string code_;
};

/// A run error's message that starts with where in the program it happened, "prog.py:19:9: ..." or
/// "prog.py:19: ..." (column 1-based), at its start or after one word of the binding's own ("aie-sim: prog.py:
/// 19:9: ..."): that place as a span (column 0-based; 0 when not given) and the message without it. Other
/// messages: an empty span and the message.
inline std::pair<SourceSpan, std::string> located_message(const std::string &message) {
  // Digits at `at` followed by ':', as a number; `at` moves past the ':'.
  auto number = [&](size_t &at, uint32_t &out) {
    size_t end = at;
    uint64_t v = 0;
    while (end < message.size() && end - at < 9 && message[end] >= '0' && message[end] <= '9')
      v = v * 10 + static_cast<uint64_t>(message[end++] - '0');
    if (end == at || end >= message.size() || message[end] != ':') return false;
    out = static_cast<uint32_t>(v);
    at = end + 1;
    return true;
  };
  auto at = [&](size_t from) -> std::optional<std::pair<SourceSpan, std::string>> {
    const size_t colon = message.find(':', from);
    if (colon == std::string::npos || colon == from) return std::nullopt;
    for (size_t i = from; i < colon; ++i)
      if (message[i] == ' ') return std::nullopt;
    SourceSpan span;
    size_t pos = colon + 1;
    if (!number(pos, span.line) || span.line == 0) return std::nullopt;
    if (pos < message.size() && message[pos] != ' ') {
      if (!number(pos, span.col) || span.col == 0) return std::nullopt;
      span.col -= 1;
    }
    if (pos >= message.size() || message[pos] != ' ') return std::nullopt;
    span.file = message.substr(from, colon - from);
    span.end_line = span.line;
    span.end_col = span.col;
    return std::make_pair(span, message.substr(0, from) + message.substr(pos + 1));
  };
  if (auto found = at(0)) return *found;
  const size_t word = message.find(": ");
  if (word != std::string::npos && message.find(' ') > word)
    if (auto found = at(word + 2)) return *found;
  return {SourceSpan{}, message};
}

/// A tensor argument: a borrowed DLTensor in host memory (C-contiguous).
struct RunTensor {
  DLTensor *dl = nullptr;
  template <class T> T *data() const { return reinterpret_cast<T *>(static_cast<char *>(dl->data) + dl->byte_offset); }
  void *bytes() const { return static_cast<char *>(dl->data) + dl->byte_offset; }
  std::vector<int64_t> shape() const { return std::vector<int64_t>(dl->shape, dl->shape + dl->ndim); }
  int64_t elements() const {
    int64_t n = 1;
    for (int i = 0; i < dl->ndim; ++i) n *= dl->shape[i];
    return n;
  }
  size_t element_bytes() const { return (dl->dtype.bits * dl->dtype.lanes + 7) / 8; }
};

/// The run request with typed access.
class RunContext {
public:
  RunContext(const HtpHostApi *api, const HtpRunRequest *req, HtpDiag *sink) : api_(api), req_(req), sink_(sink) {}

  std::string package_dir() const { return from_htp_str(req_->package_dir); }
  std::string target() const { return from_htp_str(req_->target); }
  std::string entry() const { return from_htp_str(req_->entry); }
  std::string cache_dir() const { return from_htp_str(req_->cache_dir); }
  std::string run_dir() const { return from_htp_str(req_->run_dir); }
  std::string options_json() const { return from_htp_str(req_->options_json); }
  size_t arg_count() const { return req_->arg_count; }
  const HtpRunArg &arg(size_t i) const { return req_->args[i]; }
  std::string arg_name(size_t i) const { return from_htp_str(req_->args[i].name); }

  /// The argument named `name`; throws RunError when there is none.
  const HtpRunArg &arg(std::string_view name) const {
    for (size_t i = 0; i < req_->arg_count; ++i)
      if (from_htp_str(req_->args[i].name) == name) return req_->args[i];
    throw RunError("entry '" + entry() + "' has no argument '" + std::string(name) + "'");
  }
  /// The tensor argument named `name`; throws RunError when it is a scalar.
  RunTensor tensor(std::string_view name) const {
    const HtpRunArg &a = arg(name);
    if (!a.tensor) throw RunError("argument '" + std::string(name) + "' is a scalar, not a tensor");
    return RunTensor{a.tensor};
  }

  /// Reports an error; the run fails at the end.
  void error(std::string_view code, std::string_view message) {
    failed_ = true;
    Host(api_).error(sink_, code, message);
  }
  void note(std::string_view code, std::string_view message) const {
    Host(api_).report(sink_, HTP_SEV_NOTE, code, message);
  }
  void log(HtpLogLevel level, std::string_view message) const { Host(api_).log(level, message); }
  /// Writes `<run_dir>/report.json` (htp.run.v1).
  void write_report(std::string_view json) const {
    std::ofstream f(run_dir() + "/report.json", std::ios::binary | std::ios::trunc);
    f << json;
    if (!f) throw RunError("cannot write " + run_dir() + "/report.json");
  }
  bool failed() const { return failed_; }
  HtpDiag *diag() const { return sink_; }
  const HtpHostApi *api() const { return api_; }

private:
  const HtpHostApi *api_;
  const HtpRunRequest *req_;
  HtpDiag *sink_;
  bool failed_ = false;
};

namespace detail {
template <void (*Fn)(RunContext &)>
HtpStatus run_body_trampoline(void *, const HtpHostApi *api, const HtpRunRequest *req, HtpDiag *sink) {
  try {
    RunContext ctx(api, req, sink);
    Fn(ctx);
    return ctx.failed() ? HTP_ERR : HTP_OK;
  } catch (const RunError &e) {
    auto [span, message] = located_message(e.what());  // (a runtime check's message names the program's line)
    Host(api).error(sink, e.code(), message, span);
    return HTP_ERR;
  } catch (...) {
    return report_exception(api, sink);
  }
}
}  // namespace detail

/// Adapts `void fn(htp::RunContext&)` to HtpBindingDesc.run.
template <void (*Fn)(RunContext &)> constexpr auto run_body = &detail::run_body_trampoline<Fn>;

}  // namespace htp
