// SHA-256 digests of files and byte strings (OpenSSL), as lowercase hex.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "diag/diagnostic.hpp"

namespace htp {

/// Lowercase hex of `n` bytes.
std::string hex_encode(const unsigned char *data, size_t n);

/// Hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

/// Hex SHA-256 of the file's content, or an error naming the file when it cannot be read.
Expected<std::string> sha256_file(const std::filesystem::path &path);

}  // namespace htp
