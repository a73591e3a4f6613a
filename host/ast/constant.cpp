#include "ast/constant.hpp"

#include <charconv>
#include <cstring>

namespace htp::ast {

static bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

bool operator==(const Float &a, const Float &b) {
  return same_bits(a.value, b.value);
}

bool operator==(const Complex &a, const Complex &b) {
  return same_bits(a.real, b.real) && same_bits(a.imag, b.imag);
}

bool parse_int_constant(std::string_view decimal, Constant &out) {
  size_t digits_at = !decimal.empty() && decimal[0] == '-' ? 1 : 0;
  if (decimal.size() == digits_at) return false;
  for (size_t i = digits_at; i < decimal.size(); ++i)
    if (decimal[i] < '0' || decimal[i] > '9') return false;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(decimal.data(), decimal.data() + decimal.size(), v);
  if (ec == std::errc() && end == decimal.data() + decimal.size()) {
    out = v;
    return true;
  }
  // Canonical spelling: no leading zeros, no "-0".
  size_t first = digits_at;
  while (first + 1 < decimal.size() && decimal[first] == '0')
    ++first;
  std::string canonical = digits_at ? "-" : "";
  canonical.append(decimal.substr(first));
  out = BigInt{std::move(canonical)};
  return true;
}

} // namespace htp::ast
