// Building the few Python AST nodes the csp rewrites need (every field set, as the grammar requires).
#pragma once

#include "csp_common.hpp"

namespace csp {

/// Node construction at one span.
class AstBuilder {
public:
  AstBuilder(const htp::ModuleRef &m, HtpSpan span) : m_(m), span_(span) {}

  htp::NodeRef name(std::string_view id, bool store = false) const;
  htp::NodeRef str(std::string_view text) const;
  htp::NodeRef integer(int64_t v) const { return m_.int_constant(v, &span_); }
  htp::NodeRef keyword(std::string_view arg, htp::NodeRef value) const;
  /// `fn(args..., keywords...)` with `fn` a plain name.
  htp::NodeRef call(std::string_view fn, std::vector<htp::NodeRef> args,
                    std::vector<htp::NodeRef> keywords = {}) const;
  htp::NodeRef assign(htp::NodeRef target, htp::NodeRef value) const;
  /// A parameter `name: annotation` (annotation detached, may be empty).
  htp::NodeRef arg(std::string_view name, htp::NodeRef annotation) const;
  /// The Python expression of a contract Expr (integers, params, add/sub/mul/floordiv/mod/neg/min/max).
  htp::NodeRef expr(const Json &e) const;

private:
  htp::NodeRef binop(std::string_view op, htp::NodeRef l, htp::NodeRef r) const;
  const htp::ModuleRef &m_;
  HtpSpan span_;
};

} // namespace csp
