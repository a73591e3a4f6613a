// Errors of the layout library as values: a diagnostic code, a message and, for text, the column.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace htp::axe {

/// Why a layout operation failed. `column` is the 0-based byte column in layout text, or -1.
struct LayoutError {
  std::string code;    ///< diagnostic code, e.g. "layout.join"
  std::string message; ///< one sentence saying what is wrong and how to fix it
  int column = -1;
};

/// A value or the LayoutError that prevented it (C++20 stand-in for std::expected).
template <class T> class Result {
public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT(google-explicit-constructor)
  Result(LayoutError error) : v_(std::move(error)) {} // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T &value() const { return std::get<0>(v_); }
  T &value() { return std::get<0>(v_); }
  const T &operator*() const { return value(); }
  T &operator*() { return value(); }
  const T *operator->() const { return &value(); }
  T *operator->() { return &value(); }
  const LayoutError &error() const { return std::get<1>(v_); }

private:
  std::variant<T, LayoutError> v_;
};

/// Shorthand for a failed Result.
inline LayoutError fail(std::string code, std::string message, int column = -1) {
  return LayoutError{std::move(code), std::move(message), column};
}

} // namespace htp::axe
