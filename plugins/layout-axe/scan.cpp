#include "layout_surface.hpp"
#include "passes.hpp"

namespace htp::axe {

bool is_collective(const std::string &callee) {
  return callee == "relayout" || callee == "allreduce" || callee == "allgather" || callee == "reduce_scatter";
}

void scan(htp::PassContext &ctx) {
  ctx.module().root().walk([&](htp::NodeRef n) {
    if (is_layout_expr(n)) {
      for (const auto &facet : layout_facets(n))
        ctx.add_obligation("Uses.Layout(kind=axe,facet=" + facet + ")", n);
    } else if (n.is("Call") && is_collective(callee_name(n))) {
      ctx.add_obligation("Uses.Layout(kind=axe,facet=dist)", n);
    }
  });
}

} // namespace htp::axe
