// Reading files that came from elsewhere (packages, inputs, manifests) without being led astray: only a
// regular file is opened (never a FIFO, device, socket or symlink, so no read blocks or escapes), and its
// size is checked against a limit before anything is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"

namespace htp {

/// Default limits for the documents the host reads.
inline constexpr uint64_t kMaxDocumentBytes = uint64_t{64} << 20;  ///< manifests, lockfiles, reports
inline constexpr uint64_t kMaxArrayBytes = uint64_t{16} << 30;     ///< .npy inputs

/// What is at `path`, without following a symlink: "a regular file", "a directory", "a symlink",
/// "a FIFO", "a socket", "a device", "nothing".
std::string file_kind(const std::filesystem::path &path);

/// The bytes of the regular file at `path` (opened with O_NOFOLLOW | O_NONBLOCK: a symlink, FIFO, device
/// or socket is refused before it is read from), at most `max_bytes`; an `io.read` diagnostic naming
/// `path`, what it is and the limit otherwise.
Expected<std::string> read_regular_file(const std::filesystem::path &path, uint64_t max_bytes);

/// Streams the regular file at `path` (same checks, no size limit) in chunks to `sink`.
std::optional<Diagnostic> stream_regular_file(const std::filesystem::path &path,
                                              const std::function<void(const char *, size_t)> &sink);

}  // namespace htp
