// The per-user cache directory. Writers of it use the primitives of io/atomic_file.hpp (included here for
// them): an exclusive file lock and write-to-temporary-then-rename.
#pragma once

#include <filesystem>

#include "io/atomic_file.hpp"

namespace htp {

/// $HTP_CACHE_DIR, else $XDG_CACHE_HOME/htp, else $HOME/.cache/htp, else <tmp>/htp-cache.
std::filesystem::path default_cache_dir();

}  // namespace htp
