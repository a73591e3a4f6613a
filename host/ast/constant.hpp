// The value of a Python constant: everything ast.Constant.value (and MatchSingleton.value) can hold.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace htp::ast {

/// Python's None.
struct NoneValue {
  friend bool operator==(NoneValue, NoneValue) { return true; }
};
/// Python's Ellipsis (`...`).
struct EllipsisValue {
  friend bool operator==(EllipsisValue, EllipsisValue) { return true; }
};
/// A Python int outside the int64 range, as its decimal spelling with an optional leading '-'.
struct BigInt {
  std::string decimal;
  friend bool operator==(const BigInt &, const BigInt &) = default;
};
/// A Python float; equality is bitwise, so -0.0 != 0.0 and a NaN equals itself.
struct Float {
  double value = 0;
  friend bool operator==(const Float &a, const Float &b);
};
/// A Python complex; equality compares both parts bitwise.
struct Complex {
  double real = 0;
  double imag = 0;
  friend bool operator==(const Complex &a, const Complex &b);
};
/// A Python str as generalized UTF-8: each code point encoded on its own, so lone surrogates
/// (which Python allows in str) take three bytes each, like Python's 'surrogatepass' error handler.
struct Str {
  std::string utf8;
  friend bool operator==(const Str &, const Str &) = default;
};
/// A Python bytes value.
struct Bytes {
  std::string data;
  friend bool operator==(const Bytes &, const Bytes &) = default;
};

/// A Python constant. int64 ints are held as int64_t, larger ones as BigInt.
using Constant = std::variant<NoneValue, bool, int64_t, BigInt, Float, Complex, Str, Bytes, EllipsisValue>;

/// Sets `out` to the int of a decimal spelling (optional '-', digits): int64_t when it fits, else BigInt;
/// false when the spelling is not a decimal integer.
bool parse_int_constant(std::string_view decimal, Constant &out);

} // namespace htp::ast
