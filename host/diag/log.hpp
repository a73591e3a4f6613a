// The host's logger: spdlog, always to stderr (stdout carries only requested output).
#pragma once

#include <string>

#include <spdlog/logger.h>

namespace htp {

/// The "htp" logger, created on first use with a stderr sink; level from HTP_LOG_LEVEL (default warn).
spdlog::logger &log();

/// Sets the log level by name (trace|debug|info|warn|error|critical|off); false when the name is unknown.
bool set_log_level(const std::string &level);

}  // namespace htp
