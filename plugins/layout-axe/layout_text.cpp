#include "layout_text.hpp"

#include <cctype>
#include <map>

namespace htp::axe {

namespace {

std::string found(std::string_view text, size_t i) {
  return i < text.size() ? "found '" + std::string(1, text[i]) + "'" : "found the end of the text";
}

LayoutError syntax(std::string message, size_t column) {
  return fail("layout.syntax", std::move(message), static_cast<int>(column));
}

} // namespace

Result<DistSpec> parse_dist(std::string_view text) {
  if (text.empty()) return syntax("empty layout: write one 'R' or 'S(i)' per tensor dim", 0);
  DistSpec spec;
  std::map<size_t, int> used; // mesh axis -> dim that shards it
  size_t i = 0;
  while (i < text.size()) {
    DistElement e{std::nullopt, static_cast<int>(i)};
    if (text[i] == 'R') {
      ++i;
    } else if (text[i] == 'S') {
      if (++i >= text.size() || text[i] != '(') return syntax("expected '(' after 'S', " + found(text, i), i);
      size_t start = ++i;
      size_t axis = 0;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        axis = axis * 10 + static_cast<size_t>(text[i] - '0');
        if (axis > 64) return syntax("mesh axis number too large", start);
        ++i;
      }
      if (i == start) return syntax("expected a mesh axis number in 'S(...)', " + found(text, i), i);
      if (i >= text.size() || text[i] != ')')
        return syntax("expected ')' after the mesh axis, " + found(text, i), i);
      ++i;
      if (auto it = used.find(axis); it != used.end())
        return syntax("mesh axis " + std::to_string(axis) + " shards both dim " + std::to_string(it->second) +
                          " and dim " + std::to_string(spec.size()) + "; a mesh axis can shard one dim only",
                      static_cast<size_t>(e.column));
      used[axis] = static_cast<int>(spec.size());
      e.axis = axis;
    } else {
      return syntax("expected 'R' or 'S(i)', " + found(text, i), i);
    }
    spec.push_back(e);
  }
  return spec;
}

std::string print_dist(const DistSpec &spec) {
  std::string s;
  for (const auto &e : spec)
    s += e.axis ? "S(" + std::to_string(*e.axis) + ")" : "R";
  return s;
}

} // namespace htp::axe
