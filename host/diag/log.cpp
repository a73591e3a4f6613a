#include "diag/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace htp {

namespace {

bool parse_level(const std::string &name, spdlog::level::level_enum &out) {
  auto lvl = spdlog::level::from_str(name);
  // from_str maps unknown names to "off"; accept "off" only when it was asked for.
  if (lvl == spdlog::level::off && name != "off") return false;
  out = lvl;
  return true;
}

std::shared_ptr<spdlog::logger> make_logger() {
  auto logger = spdlog::stderr_color_mt("htp");
  logger->set_pattern("htp: %l: %v");
  spdlog::level::level_enum lvl = spdlog::level::warn;
  if (const char *env = std::getenv("HTP_LOG_LEVEL")) parse_level(env, lvl);
  logger->set_level(lvl);
  return logger;
}

}  // namespace

spdlog::logger &log() {
  static std::shared_ptr<spdlog::logger> logger = make_logger();
  return *logger;
}

bool set_log_level(const std::string &level) {
  spdlog::level::level_enum lvl;
  if (!parse_level(level, lvl)) return false;
  log().set_level(lvl);
  return true;
}

}  // namespace htp
