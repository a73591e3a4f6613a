// The Unicode facts the AST needs: generalized UTF-8 (Python str may hold lone surrogates) and
// Python's notion of a printable character.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace htp::ast {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

/// Decodes the code point at `pos` of generalized UTF-8 (surrogates accepted) and moves `pos` past it;
/// an invalid byte decodes as U+FFFD and is skipped alone.
uint32_t decode_utf8(std::string_view text, size_t &pos);

/// As decode_utf8 for strict UTF-8: nothing for an invalid byte (skipped alone) or an encoded surrogate
/// (its three bytes skipped).
std::optional<uint32_t> decode_strict_utf8(std::string_view text, size_t &pos);

/// Appends `cp` (<= 0x10FFFF) as generalized UTF-8: a surrogate takes three bytes, like Python's
/// 'surrogatepass' error handler.
void append_utf8(std::string &out, uint32_t cp);

/// Whether `text` is strict UTF-8 (no surrogates, no overlong forms).
bool is_valid_utf8(std::string_view text);

/// Whether `text` is generalized UTF-8 (strict UTF-8, or surrogates as Python's 'surrogatepass' writes them):
/// what an AST text field may hold.
bool is_generalized_utf8(std::string_view text);

/// `text` with every byte that is not part of a valid UTF-8 sequence replaced by U+FFFD (valid text unchanged).
std::string replace_invalid_utf8(std::string_view text);

/// Whether `text` (generalized UTF-8) holds a surrogate code point.
bool has_surrogates(std::string_view text);

/// Python's str.isprintable() for the one character `cp`.
bool is_printable(uint32_t cp);

} // namespace htp::ast
