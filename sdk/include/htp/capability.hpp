// htp/capability.hpp — the capability grammar: one parser, printer and matcher shared by host and SDK.
//
// Header-only, standard library only. The grammar, the value kinds and the matching rules are specified in
// docs/capabilities.md; in short:
//
//   capability  := ['?'] Namespace '.' Name [ '(' [ param { ',' param } ] ')' ]
//   param       := key '=' value | key ('>=' | '>' | '<=' | '<') range-rest
//   value       := symbol | integer | "string" | version | range
//   range       := comparator { ',' comparator }     comparator := ('>='|'>'|'<='|'<'|'='|'^'|'~') version
//
// A comma inside a parameter list continues a version range when the next non-blank character is a range
// operator (= < > ^ ~), and starts the next parameter otherwise (keys begin with a letter), so
// `IR.Graph(version>=1.2,<2, kind=dense)` needs no quoting. The canonical printer writes no blanks, sorts
// parameters by key and writes a text value bare when it is a symbol, quoted otherwise; what it prints
// parses back to an equal value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace htp {

/// Why capability text is malformed: the 0-based byte column where parsing stopped and a reason.
struct CapabilityError {
  std::size_t column = 0;
  std::string reason;
};

/// A parsed value or the CapabilityError explaining why there is none.
template <class T> class CapabilityResult {
public:
  /// A parsed value.
  CapabilityResult(T value) : v_(std::move(value)) {}
  /// A failure.
  CapabilityResult(CapabilityError error) : v_(std::move(error)) {}

  /// True when parsing succeeded.
  bool ok() const { return std::holds_alternative<T>(v_); }
  /// Same as ok().
  explicit operator bool() const { return ok(); }
  /// The parsed value; only valid when ok().
  const T &value() const { return std::get<T>(v_); }
  T &value() { return std::get<T>(v_); }
  const T &operator*() const { return value(); }
  const T *operator->() const { return &value(); }
  /// The error; only valid when !ok().
  const CapabilityError &error() const { return std::get<CapabilityError>(v_); }

private:
  std::variant<T, CapabilityError> v_;
};

/// A semantic version (SemVer 2.0). `parts` records how many numeric parts were written (1–3), so a
/// partial version such as `1.2` prints back as written and acts as a prefix in ranges.
struct SemanticVersion {
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  std::uint64_t patch = 0;
  int parts = 3;
  std::vector<std::string> prerelease; ///< Dot-separated pre-release identifiers, e.g. {"rc", "1"}.
  std::string build;                   ///< Build metadata after '+'; kept for printing, ignored in order.

  friend bool operator==(const SemanticVersion &, const SemanticVersion &) = default;
};

/// Range operators: = > >= < <= ^ (same left-most non-zero part) ~ (same minor when given).
enum class VersionOp { Eq, Gt, Ge, Lt, Le, Caret, Tilde };

/// One comparator of a range, e.g. `>=1.2`.
struct VersionComparator {
  VersionOp op = VersionOp::Eq;
  SemanticVersion version;

  friend bool operator==(const VersionComparator &, const VersionComparator &) = default;
};

/// A conjunction of comparators (`>=1.2,<2`): a version is in the range when every comparator holds.
struct VersionRange {
  std::vector<VersionComparator> comparators;

  friend bool operator==(const VersionRange &, const VersionRange &) = default;
};

/// A parameter value: text (a bare symbol or a quoted string), an integer, a version or a version range.
using CapabilityValue = std::variant<std::string, std::int64_t, SemanticVersion, VersionRange>;

/// One `key=value` parameter.
struct CapabilityParam {
  std::string key;
  CapabilityValue value;

  friend bool operator==(const CapabilityParam &, const CapabilityParam &) = default;
};

/// A parsed capability. `params` are sorted by key and keys are unique.
struct Capability {
  std::string ns;   ///< Namespace, e.g. "Uses".
  std::string name; ///< Name within the namespace, e.g. "Intrinsic".
  std::vector<CapabilityParam> params;
  bool optional = false; ///< A leading '?': an optional requirement.

  /// "Namespace.Name", the key providers are indexed by.
  std::string qualified_name() const { return ns + "." + name; }
  /// The value of `key`, or nullptr when the capability does not name it.
  const CapabilityValue *find(std::string_view key) const {
    auto it = std::lower_bound(params.begin(), params.end(), key,
                               [](const CapabilityParam &p, std::string_view k) { return p.key < k; });
    return it != params.end() && it->key == key ? &it->value : nullptr;
  }

  friend bool operator==(const Capability &, const Capability &) = default;
};

/// Facts (what is provided or used) take no '?' and no ranges; requirements and patterns may.
enum class CapabilityMode { Fact, Requirement };

/// Why a requirement does not match a fact with the same Namespace.Name: the key and a short reason.
struct CapabilityMismatch {
  std::string key;    ///< The differing key; empty when Namespace.Name differ.
  std::string reason; ///< e.g. "has variant=a2a3, required variant=a2a3sim".
};

namespace capability_detail {

inline bool is_ident_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}
inline bool is_symbol_char(char c) {
  return is_ident_char(c) || c == '.' || c == '-';
}
inline bool is_semver_ident_char(char c) {
  return (is_ident_char(c) && c != '_') || c == '-';
}
inline bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
inline bool is_range_op_start(char c) {
  return c == '=' || c == '<' || c == '>' || c == '^' || c == '~';
}

inline bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_digit(c); });
}

/// Compares two numeric strings without leading zeros by value.
inline int compare_numeric(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

/// Recursive-descent parser over one capability text; `pos` is the byte column.
class Parser {
public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::optional<CapabilityError> error;

  std::size_t pos() const { return pos_; }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  void skip_blanks() {
    while (!at_end() && is_blank(s_[pos_]))
      ++pos_;
  }
  bool fail(std::size_t column, std::string reason) {
    if (!error) error = CapabilityError{column, std::move(reason)};
    return false;
  }

  bool identifier(std::string &out, const char *what) {
    if (!is_ident_start(peek())) return fail(pos_, std::string("expected ") + what + describe_here());
    std::size_t start = pos_;
    while (is_ident_char(peek()))
      ++pos_;
    out.assign(s_.substr(start, pos_ - start));
    return true;
  }

  bool number_part(std::uint64_t &out, const char *what) {
    std::size_t start = pos_;
    if (!is_digit(peek()))
      return fail(pos_, std::string("expected the ") + what + " number" + describe_here());
    while (is_digit(peek()))
      ++pos_;
    std::string_view digits = s_.substr(start, pos_ - start);
    if (digits.size() > 1 && digits[0] == '0')
      return fail(start,
                  std::string("the ") + what + " number " + std::string(digits) + " has a leading zero");
    std::uint64_t v = 0;
    for (char c : digits) {
      if (v > (UINT64_MAX - static_cast<std::uint64_t>(c - '0')) / 10)
        return fail(start, std::string("the ") + what + " number " + std::string(digits) + " is too large");
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    out = v;
    return true;
  }

  bool dotted_identifiers(std::vector<std::string> &out, bool numeric_rules, const char *what) {
    do {
      std::size_t start = pos_;
      while (is_semver_ident_char(peek()))
        ++pos_;
      std::string_view id = s_.substr(start, pos_ - start);
      if (id.empty()) return fail(pos_, std::string("expected a ") + what + " identifier" + describe_here());
      if (numeric_rules && all_digits(id) && id.size() > 1 && id[0] == '0')
        return fail(start, std::string("the numeric ") + what + " identifier " + std::string(id) +
                               " has a leading zero");
      out.emplace_back(id);
      if (peek() != '.') break;
      ++pos_;
    } while (true);
    return true;
  }

  bool version(SemanticVersion &v) {
    v = SemanticVersion{};
    if (!number_part(v.major, "major")) return false;
    v.parts = 1;
    if (peek() == '.') {
      ++pos_;
      if (!number_part(v.minor, "minor")) return false;
      v.parts = 2;
      if (peek() == '.') {
        ++pos_;
        if (!number_part(v.patch, "patch")) return false;
        v.parts = 3;
      }
    }
    if (peek() == '-' || peek() == '+') {
      if (v.parts != 3)
        return fail(pos_, "pre-release and build suffixes need a full MAJOR.MINOR.PATCH version");
      if (peek() == '-') {
        ++pos_;
        if (!dotted_identifiers(v.prerelease, true, "pre-release")) return false;
      }
      if (peek() == '+') {
        ++pos_;
        std::vector<std::string> build;
        if (!dotted_identifiers(build, false, "build")) return false;
        for (std::size_t i = 0; i < build.size(); ++i)
          v.build += (i ? "." : "") + build[i];
      }
    }
    return true;
  }

  bool range_op(VersionOp &op) {
    char c = peek();
    if (c == '>' || c == '<') {
      bool eq = peek(1) == '=';
      op = c == '>' ? (eq ? VersionOp::Ge : VersionOp::Gt) : (eq ? VersionOp::Le : VersionOp::Lt);
      pos_ += eq ? 2 : 1;
      return true;
    }
    if (c == '=')
      op = VersionOp::Eq;
    else if (c == '^')
      op = VersionOp::Caret;
    else if (c == '~')
      op = VersionOp::Tilde;
    else
      return fail(pos_, std::string("expected a range operator (>=, >, <=, <, =, ^, ~)") + describe_here());
    ++pos_;
    return true;
  }

  /// Parses comparators; inside a parameter list a ',' continues the range only before a range operator.
  bool range(VersionRange &r, bool in_params) {
    while (true) {
      VersionComparator c;
      if (!range_op(c.op)) return false;
      skip_blanks();
      if (!version(c.version)) return false;
      r.comparators.push_back(std::move(c));
      std::size_t save = pos_;
      skip_blanks();
      if (peek() != ',') {
        pos_ = save;
        return true;
      }
      std::size_t comma = pos_;
      ++pos_;
      skip_blanks();
      if (in_params && !is_range_op_start(peek())) {
        pos_ = comma;
        return true;
      }
    }
  }

  bool string_literal(std::string &out) {
    std::size_t open = pos_;
    ++pos_; // the opening quote
    while (true) {
      if (at_end()) return fail(open, "unterminated string");
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c == '\\') {
        char e = peek(1);
        if (e == '"' || e == '\\')
          out += e;
        else if (e == 'n')
          out += '\n';
        else if (e == 't')
          out += '\t';
        else if (e == '\0')
          return fail(open, "unterminated string");
        else
          return fail(pos_, std::string("unknown escape '\\") + e + "' in string");
        pos_ += 2;
        continue;
      }
      out += c;
      ++pos_;
    }
  }

  bool value(CapabilityValue &out, CapabilityMode mode) {
    char c = peek();
    std::size_t start = pos_;
    if (c == '"') {
      std::string s;
      if (!string_literal(s)) return false;
      out = std::move(s);
      return true;
    }
    if (is_range_op_start(c)) {
      if (mode != CapabilityMode::Requirement)
        return fail(start, "a version range is only allowed in a requirement");
      VersionRange r;
      if (!range(r, true)) return false;
      out = std::move(r);
      return true;
    }
    if (is_ident_start(c)) {
      while (is_symbol_char(peek()))
        ++pos_;
      out = std::string(s_.substr(start, pos_ - start));
      return true;
    }
    if (c == '-' || is_digit(c)) {
      bool negative = c == '-';
      std::size_t digits = negative ? pos_ + 1 : pos_;
      std::size_t end = digits;
      while (end < s_.size() && is_digit(s_[end]))
        ++end;
      if (end == digits) return fail(digits, "expected digits after '-'");
      if (!negative && end < s_.size() && (s_[end] == '.' || s_[end] == '+' || s_[end] == '-')) {
        SemanticVersion v;
        if (!version(v)) return false;
        out = std::move(v);
        return true;
      }
      std::uint64_t mag = 0;
      const std::uint64_t limit = negative ? static_cast<std::uint64_t>(INT64_MAX) + 1 : INT64_MAX;
      for (std::size_t i = digits; i < end; ++i) {
        std::uint64_t d = static_cast<std::uint64_t>(s_[i] - '0');
        if (mag > (limit - d) / 10)
          return fail(start,
                      "integer " + std::string(s_.substr(start, end - start)) + " does not fit in 64 bits");
        mag = mag * 10 + d;
      }
      pos_ = end;
      out = negative ? (mag == limit ? INT64_MIN : -static_cast<std::int64_t>(mag))
                     : static_cast<std::int64_t>(mag);
      return true;
    }
    return fail(start, std::string("expected a value (symbol, integer, \"string\", version or range)") +
                           describe_here());
  }

  bool param(CapabilityParam &p, CapabilityMode mode) {
    if (!identifier(p.key, "a parameter key")) return false;
    skip_blanks();
    char c = peek();
    if (c == '>' || c == '<') {
      if (mode != CapabilityMode::Requirement)
        return fail(pos_, "a version range is only allowed in a requirement");
      VersionRange r;
      if (!range(r, true)) return false;
      p.value = std::move(r);
      return true;
    }
    if (c != '=') return fail(pos_, "expected '=' after key '" + p.key + "'" + describe_here());
    ++pos_;
    skip_blanks();
    return value(p.value, mode);
  }

  bool capability(Capability &cap, CapabilityMode mode) {
    skip_blanks();
    if (peek() == '?') {
      if (mode != CapabilityMode::Requirement)
        return fail(pos_, "'?' marks an optional requirement and is not allowed here");
      cap.optional = true;
      ++pos_;
      skip_blanks();
    }
    if (!identifier(cap.ns, "a namespace")) return false;
    if (peek() != '.') return fail(pos_, "expected '.' between namespace and name" + describe_here());
    ++pos_;
    if (!identifier(cap.name, "a name after '.'")) return false;
    // Where each key starts, for the duplicate-key error: eight inline, more on the heap.
    std::size_t inline_columns[8] = {};
    std::vector<std::size_t> more_columns;
    std::size_t params_seen = 0;
    auto key_column = [&](std::size_t i) { return i < 8 ? inline_columns[i] : more_columns[i - 8]; };
    skip_blanks();
    if (peek() == '(') {
      ++pos_;
      skip_blanks();
      if (peek() != ')') {
        // One allocation for the parameters: commas bound their number (range commas only overestimate).
        cap.params.reserve(1 + static_cast<std::size_t>(std::count(s_.begin() + static_cast<std::ptrdiff_t>(pos_),
                                                                   s_.end(), ',')));
        while (true) {
          if (params_seen < 8)
            inline_columns[params_seen] = pos_;
          else
            more_columns.push_back(pos_);
          ++params_seen;
          CapabilityParam p;
          if (!param(p, mode)) return false;
          cap.params.push_back(std::move(p));
          skip_blanks();
          if (peek() == ',') {
            ++pos_;
            skip_blanks();
            continue;
          }
          if (peek() == ')') break;
          return fail(pos_, "expected ',' or ')'" + describe_here());
        }
      }
      ++pos_; // ')'
      skip_blanks();
    }
    if (!at_end()) return fail(pos_, "unexpected '" + std::string(1, peek()) + "' after the capability");
    bool sorted_already = true;
    for (std::size_t i = 1; i < cap.params.size(); ++i)
      if (!(cap.params[i - 1].key < cap.params[i].key)) sorted_already = false;
    if (sorted_already) return true;
    // Sort by key (stable, so the first of two equal keys is found first) and reject duplicates.
    std::vector<std::size_t> order(cap.params.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return cap.params[a].key < cap.params[b].key; });
    for (std::size_t i = 1; i < order.size(); ++i)
      if (cap.params[order[i]].key == cap.params[order[i - 1]].key)
        return fail(std::max(key_column(order[i]), key_column(order[i - 1])),
                    "duplicate key '" + cap.params[order[i]].key + "'");
    std::vector<CapabilityParam> sorted;
    sorted.reserve(order.size());
    for (std::size_t i : order)
      sorted.push_back(std::move(cap.params[i]));
    cap.params = std::move(sorted);
    return true;
  }

  std::string describe_here() const {
    if (at_end()) return " at the end of the text";
    return std::string(", found '") + peek() + "'";
  }

private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

/// Numeric part i (0 major, 1 minor, 2 patch) of v; a part not written counts as 0.
inline std::uint64_t part(const SemanticVersion &v, int i) {
  if (i == 0) return v.major;
  if (i == 1) return v.parts >= 2 ? v.minor : 0;
  return v.parts >= 3 ? v.patch : 0;
}

/// A comparator bound without allocation: X.Y.Z, or X.Y.Z-0 (below every X.Y.Z pre-release) when
/// `pre_zero`; `infinite` when bumping overflowed.
struct Bound {
  std::uint64_t p[3] = {0, 0, 0};
  bool pre_zero = false;
  bool infinite = false;
};

/// The smallest version above every version that starts with v's first `count` numbers: X.Y.Z-0.
inline Bound bump(const SemanticVersion &v, int count) {
  Bound b{{part(v, 0), part(v, 1), part(v, 2)}, true, false};
  int i = count <= 1 ? 0 : (count == 2 ? 1 : 2);
  if (b.p[i] == UINT64_MAX) return Bound{{0, 0, 0}, false, true};
  ++b.p[i];
  for (int k = i + 1; k < 3; ++k)
    b.p[k] = 0;
  return b;
}

/// <0, 0 or >0 comparing v with a bound.
inline int compare_to_bound(const SemanticVersion &v, const Bound &b) {
  if (b.infinite) return -1;
  for (int i = 0; i < 3; ++i)
    if (part(v, i) != b.p[i]) return part(v, i) < b.p[i] ? -1 : 1;
  if (!b.pre_zero) return v.prerelease.empty() ? 0 : -1;
  if (v.prerelease.empty()) return 1;
  return v.prerelease.size() == 1 && v.prerelease[0] == "0" ? 0 : 1;
}

} // namespace capability_detail

/// SemVer 2.0 precedence: <0, 0 or >0. Missing parts count as 0; build metadata is ignored.
inline int compare_versions(const SemanticVersion &a, const SemanticVersion &b) {
  using capability_detail::part;
  for (int i = 0; i < 3; ++i)
    if (part(a, i) != part(b, i)) return part(a, i) < part(b, i) ? -1 : 1;
  if (a.prerelease.empty() != b.prerelease.empty()) return a.prerelease.empty() ? 1 : -1;
  for (std::size_t i = 0; i < a.prerelease.size() && i < b.prerelease.size(); ++i) {
    const std::string &x = a.prerelease[i], &y = b.prerelease[i];
    bool nx = capability_detail::all_digits(x), ny = capability_detail::all_digits(y);
    int c = 0;
    if (nx && ny)
      c = capability_detail::compare_numeric(x, y);
    else if (nx != ny)
      c = nx ? -1 : 1;
    else
      c = x < y ? -1 : (x > y ? 1 : 0);
    if (c != 0) return c;
  }
  if (a.prerelease.size() != b.prerelease.size()) return a.prerelease.size() < b.prerelease.size() ? -1 : 1;
  return 0;
}

/// True when `v` satisfies the comparator. Partial versions act as prefixes: `=1.2` is 1.2.x, `<=1.2`
/// includes every 1.2.x, `>1.2` starts at 1.3.0-0, `<2` stops before 2.0.0-0.
inline bool comparator_contains(const VersionComparator &c, const SemanticVersion &v) {
  using capability_detail::bump;
  using capability_detail::compare_to_bound;
  const SemanticVersion &w = c.version;
  const bool full = w.parts >= 3;
  switch (c.op) {
  case VersionOp::Eq:
    if (full) return compare_versions(v, w) == 0;
    return compare_versions(v, w) >= 0 && compare_to_bound(v, bump(w, w.parts)) < 0;
  case VersionOp::Gt:
    if (full) return compare_versions(v, w) > 0;
    return compare_to_bound(v, bump(w, w.parts)) >= 0;
  case VersionOp::Ge: return compare_versions(v, w) >= 0;
  case VersionOp::Lt:
    if (full) return compare_versions(v, w) < 0;
    return compare_to_bound(
               v, capability_detail::Bound{{capability_detail::part(w, 0), capability_detail::part(w, 1),
                                            capability_detail::part(w, 2)},
                                           true,
                                           false}) < 0;
  case VersionOp::Le:
    if (full) return compare_versions(v, w) <= 0;
    return compare_to_bound(v, bump(w, w.parts)) < 0;
  case VersionOp::Caret: {
    if (compare_versions(v, w) < 0) return false;
    int count = (w.major > 0 || w.parts == 1) ? 1 : ((w.minor > 0 || w.parts == 2) ? 2 : 3);
    return compare_to_bound(v, bump(w, count)) < 0;
  }
  case VersionOp::Tilde:
    if (compare_versions(v, w) < 0) return false;
    return compare_to_bound(v, bump(w, w.parts >= 2 ? 2 : 1)) < 0;
  }
  return false;
}

/// True when `v` satisfies every comparator of `r` (an empty range contains everything).
inline bool range_contains(const VersionRange &r, const SemanticVersion &v) {
  return std::all_of(r.comparators.begin(), r.comparators.end(),
                     [&](const VersionComparator &c) { return comparator_contains(c, v); });
}

/// Parses a whole capability; in Fact mode '?' and ranges are errors.
inline CapabilityResult<Capability> parse_capability(std::string_view text,
                                                     CapabilityMode mode = CapabilityMode::Fact) {
  capability_detail::Parser p(text);
  Capability cap;
  if (!p.capability(cap, mode)) return *p.error;
  return cap;
}

/// Parses a semantic version such as `1.2.0`, `1.2` or `2.0.0-rc.1+build.5`.
inline CapabilityResult<SemanticVersion> parse_version(std::string_view text) {
  capability_detail::Parser p(text);
  SemanticVersion v;
  if (!p.version(v)) return *p.error;
  if (!p.at_end())
    return CapabilityError{p.pos(), "unexpected '" + std::string(1, p.peek()) + "' after the version"};
  return v;
}

/// Parses a version range such as `>=1.2,<2`, `^1.4` or `~0.3.1` (commas separate comparators).
inline CapabilityResult<VersionRange> parse_version_range(std::string_view text) {
  capability_detail::Parser p(text);
  VersionRange r;
  p.skip_blanks();
  if (!p.range(r, false)) return *p.error;
  p.skip_blanks();
  if (!p.at_end())
    return CapabilityError{p.pos(), "unexpected '" + std::string(1, p.peek()) + "' in the range"};
  return r;
}

namespace capability_detail {

/// The printers append to one string: printing a capability allocates once, not once per part.
inline void append_number(std::string &out, std::uint64_t v) {
  char buf[20];
  char *end = buf + sizeof buf, *p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  out.append(p, static_cast<std::size_t>(end - p));
}

inline void append_version(std::string &out, const SemanticVersion &v) {
  append_number(out, v.major);
  if (v.parts >= 2) out += '.', append_number(out, v.minor);
  if (v.parts >= 3) out += '.', append_number(out, v.patch);
  for (std::size_t i = 0; i < v.prerelease.size(); ++i) {
    out += i ? '.' : '-';
    out += v.prerelease[i];
  }
  if (!v.build.empty()) out += '+', out += v.build;
}

} // namespace capability_detail

/// Prints a version as written: `1.2`, `1.2.0-rc.1+b5`.
inline std::string to_string(const SemanticVersion &v) {
  std::string s;
  capability_detail::append_version(s, v);
  return s;
}

/// The operator's spelling: ">=", "^", ...
inline const char *version_op_text(VersionOp op) {
  switch (op) {
  case VersionOp::Eq: return "=";
  case VersionOp::Gt: return ">";
  case VersionOp::Ge: return ">=";
  case VersionOp::Lt: return "<";
  case VersionOp::Le: return "<=";
  case VersionOp::Caret: return "^";
  case VersionOp::Tilde: return "~";
  }
  return "=";
}

/// True when text prints bare (a symbol: letter or '_' first, then letters, digits, '_', '.', '-').
inline bool is_symbol(std::string_view text) {
  if (text.empty() || !capability_detail::is_ident_start(text[0])) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return capability_detail::is_symbol_char(c); });
}

namespace capability_detail {

inline void append_range(std::string &out, const VersionRange &r) {
  for (std::size_t i = 0; i < r.comparators.size(); ++i) {
    if (i) out += ',';
    out += version_op_text(r.comparators[i].op);
    append_version(out, r.comparators[i].version);
  }
}

inline void append_value(std::string &out, const CapabilityValue &value) {
  if (const auto *s = std::get_if<std::string>(&value)) {
    if (is_symbol(*s)) {
      out += *s;
      return;
    }
    out += '"';
    for (char c : *s) {
      if (c == '"' || c == '\\')
        out += '\\', out += c;
      else if (c == '\n')
        out += "\\n";
      else if (c == '\t')
        out += "\\t";
      else
        out += c;
    }
    out += '"';
    return;
  }
  if (const auto *i = std::get_if<std::int64_t>(&value)) {
    if (*i < 0) out += '-';
    append_number(out, *i < 0 ? ~static_cast<std::uint64_t>(*i) + 1 : static_cast<std::uint64_t>(*i));
    return;
  }
  if (const auto *v = std::get_if<SemanticVersion>(&value)) return append_version(out, *v);
  append_range(out, std::get<VersionRange>(value));
}

inline void append_param(std::string &out, const CapabilityParam &p) {
  out += p.key;
  if (const auto *r = std::get_if<VersionRange>(&p.value)) {
    if (!r->comparators.empty()) {
      VersionOp op = r->comparators.front().op;
      if (op == VersionOp::Gt || op == VersionOp::Ge || op == VersionOp::Lt || op == VersionOp::Le)
        return append_range(out, *r);
    }
  }
  out += '=';
  append_value(out, p.value);
}

} // namespace capability_detail

/// Prints a range without blanks: `>=1.2,<2`.
inline std::string to_string(const VersionRange &r) {
  std::string s;
  capability_detail::append_range(s, r);
  return s;
}

/// Prints a value: symbols bare, other text quoted with \" \\ \n \t escapes, numbers and versions as is.
inline std::string to_string(const CapabilityValue &value) {
  std::string s;
  capability_detail::append_value(s, value);
  return s;
}

/// Prints one parameter: `key=value`, or `key>=1.2,<2` when a range starts with a comparison.
inline std::string to_string(const CapabilityParam &p) {
  std::string s;
  capability_detail::append_param(s, p);
  return s;
}

/// Appends the canonical text of `cap` (see to_string) to `out`.
inline void append_canonical(std::string &out, const Capability &cap) {
  if (cap.optional) out += '?';
  out += cap.ns;
  out += '.';
  out += cap.name;
  if (!cap.params.empty()) {
    out += '(';
    for (std::size_t i = 0; i < cap.params.size(); ++i) {
      if (i) out += ',';
      capability_detail::append_param(out, cap.params[i]);
    }
    out += ')';
  }
}

/// The canonical text: `?NS.Name(k1=v1,k2=v2)` with sorted keys and no blanks; parses back equal.
inline std::string to_string(const Capability &cap) {
  std::string s;
  s.reserve(cap.ns.size() + cap.name.size() + 2 + 16 * cap.params.size());
  append_canonical(s, cap);
  return s;
}

/// True when a required value is met by a provided one: text and integers compare equal; a version is
/// the comparator `=version` (so `1.2` matches 1.2.x); a range must contain the provided version; an
/// integer n required against a provided version acts as `=n`.
inline bool value_satisfies(const CapabilityValue &required, const CapabilityValue &provided) {
  const auto *pv = std::get_if<SemanticVersion>(&provided);
  if (const auto *r = std::get_if<VersionRange>(&required)) return pv && range_contains(*r, *pv);
  if (const auto *v = std::get_if<SemanticVersion>(&required))
    return pv && comparator_contains(VersionComparator{VersionOp::Eq, *v}, *pv);
  if (const auto *i = std::get_if<std::int64_t>(&required)) {
    if (pv && *i >= 0) {
      SemanticVersion major;
      major.major = static_cast<std::uint64_t>(*i);
      major.parts = 1;
      return comparator_contains(VersionComparator{VersionOp::Eq, major}, *pv);
    }
    const auto *pi = std::get_if<std::int64_t>(&provided);
    return pi && *pi == *i;
  }
  const auto *ps = std::get_if<std::string>(&provided);
  return ps && *ps == std::get<std::string>(required);
}

/// The first reason `requirement` does not match `fact` (Namespace.Name differ, a named key is absent
/// or has another value), or nullopt when it matches. Keys the requirement does not name are ignored.
inline std::optional<CapabilityMismatch> first_mismatch(const Capability &requirement,
                                                        const Capability &fact) {
  if (requirement.ns != fact.ns || requirement.name != fact.name)
    return CapabilityMismatch{"",
                              "is " + fact.qualified_name() + ", required " + requirement.qualified_name()};
  for (const CapabilityParam &p : requirement.params) {
    const CapabilityValue *have = fact.find(p.key);
    if (!have) return CapabilityMismatch{p.key, "has no key '" + p.key + "', required " + to_string(p)};
    if (!value_satisfies(p.value, *have)) {
      std::string why = "has " + p.key + "=" + to_string(*have) + ", required " + to_string(p);
      return CapabilityMismatch{p.key, std::move(why)};
    }
  }
  return std::nullopt;
}

/// True when `fact` has the requirement's Namespace.Name and satisfies every key the requirement names.
inline bool matches(const Capability &requirement, const Capability &fact) {
  if (requirement.ns != fact.ns || requirement.name != fact.name) return false;
  return std::all_of(requirement.params.begin(), requirement.params.end(), [&](const CapabilityParam &p) {
    const CapabilityValue *have = fact.find(p.key);
    return have && value_satisfies(p.value, *have);
  });
}

} // namespace htp
