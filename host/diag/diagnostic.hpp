// Diagnostics: errors are values that carry a location and a reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace htp {

enum class Severity { Note, Warning, Error };

/// A source range: lines 1-based, columns 0-based byte offsets (as Python's ast); line 0 = unknown.
struct Span {
  std::string file;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t end_line = 0;
  uint32_t end_col = 0;

  bool known() const { return line != 0; }
  friend bool operator==(const Span &, const Span &) = default;
};

/// One diagnostic; `notes` are attached follow-up lines (candidates, the other side of a conflict, ...).
struct Diagnostic {
  Severity severity = Severity::Error;
  std::string code;     ///< Stable machine-readable code, e.g. "loader.abi-major"; may be empty.
  std::string message;  ///< One sentence, no trailing newline.
  Span span;            ///< Where it applies; unknown when it has no location.
  std::vector<Diagnostic> notes;

  static Diagnostic error(std::string code, std::string message, Span span = {});
  static Diagnostic warning(std::string code, std::string message, Span span = {});
  static Diagnostic note(std::string message, Span span = {});

  /// Adds a note and returns *this, for chaining.
  Diagnostic &with_note(std::string message, Span span = {});

  /// Renders as `file:line:col: error: message` (column printed 1-based), notes on following lines.
  std::string render() const;
};

const char *severity_name(Severity s);

/// The items joined by `separator` ("a, b, c"), for messages that list things.
std::string join_text(const std::vector<std::string> &items, const char *separator = ", ");

/// Collects diagnostics of one operation.
class DiagnosticList {
public:
  void report(Diagnostic d) {
    errors_ += d.severity == Severity::Error;
    items_.push_back(std::move(d));
  }
  void append(const DiagnosticList &other);
  /// Whether an error was reported (O(1): the rewrite driver asks after every pattern it offers a node).
  bool has_errors() const { return errors_ != 0; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<Diagnostic> &items() const { return items_; }
  /// All diagnostics rendered, one per line (notes indented beneath their diagnostic).
  std::string render() const;

private:
  std::vector<Diagnostic> items_;
  size_t errors_ = 0;
};

/// A value or the diagnostic explaining why there is none.
template <class T> class Expected {
public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Diagnostic error) : v_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T &value() { return std::get<T>(v_); }
  const T &value() const { return std::get<T>(v_); }
  T &operator*() { return value(); }
  const T &operator*() const { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  const Diagnostic &error() const { return std::get<Diagnostic>(v_); }

private:
  std::variant<T, Diagnostic> v_;
};

}  // namespace htp
