#include "diag/diagnostic.hpp"

#include <sstream>

namespace htp {

const char *severity_name(Severity s) {
  switch (s) {
  case Severity::Note: return "note";
  case Severity::Warning: return "warning";
  case Severity::Error: return "error";
  }
  return "error";
}

std::string join_text(const std::vector<std::string> &items, const char *separator) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += separator;
    s += items[i];
  }
  return s;
}

Diagnostic Diagnostic::error(std::string code, std::string message, Span span) {
  return Diagnostic{Severity::Error, std::move(code), std::move(message), std::move(span), {}};
}

Diagnostic Diagnostic::warning(std::string code, std::string message, Span span) {
  return Diagnostic{Severity::Warning, std::move(code), std::move(message), std::move(span), {}};
}

Diagnostic Diagnostic::note(std::string message, Span span) {
  return Diagnostic{Severity::Note, {}, std::move(message), std::move(span), {}};
}

Diagnostic &Diagnostic::with_note(std::string message, Span span) {
  notes.push_back(note(std::move(message), std::move(span)));
  return *this;
}

static void render_one(std::ostringstream &os, const Diagnostic &d, const char *indent) {
  os << indent;
  if (!d.span.file.empty()) {
    os << d.span.file << ':';
    if (d.span.known()) os << d.span.line << ':' << (d.span.col + 1) << ':';
    os << ' ';
  } else if (d.span.known()) {
    os << d.span.line << ':' << (d.span.col + 1) << ": ";
  }
  os << severity_name(d.severity) << ": " << d.message;
  if (!d.code.empty()) os << " [" << d.code << ']';
}

std::string Diagnostic::render() const {
  std::ostringstream os;
  render_one(os, *this, "");
  for (const auto &n : notes) {
    os << '\n';
    render_one(os, n, "  ");
  }
  return os.str();
}

void DiagnosticList::append(const DiagnosticList &other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
  errors_ += other.errors_;
}

std::string DiagnosticList::render() const {
  std::string out;
  for (const auto &d : items_) {
    out += d.render();
    out += '\n';
  }
  return out;
}

}  // namespace htp
