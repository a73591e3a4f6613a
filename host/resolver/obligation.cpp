#include "resolver/obligation.hpp"

#include "resolver/capability_diagnostic.hpp"

namespace htp {

std::string Obligation::display() const {
  return label.empty() ? to_string(capability) : label;
}

Expected<Obligation> parse_obligation(std::string_view text, Span span, std::string label) {
  auto cap = parse_capability_or_diagnostic(text, CapabilityMode::Fact, "an obligation", span);
  if (!cap) return cap.error();
  return Obligation{std::move(*cap), std::move(span), std::move(label)};
}

} // namespace htp
