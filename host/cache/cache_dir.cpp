#include "cache/cache_dir.hpp"

#include <cstdlib>

namespace htp {

namespace fs = std::filesystem;

fs::path default_cache_dir() {
  if (const char *d = std::getenv("HTP_CACHE_DIR"); d && *d) return d;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "htp";
  if (const char *h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "htp";
  return fs::temp_directory_path() / "htp-cache";
}

}  // namespace htp
