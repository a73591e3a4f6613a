// Layout kind `place`: `Tile[32, 128, f32] @ Place("UB")` (or a tensor parameter `@ Place("GM")`) says in
// which memory space a value lives. It carries only the hardware facet, and converts to and from the
// canonical Axe form by the convention of docs/dialects/layout-axe.md §6 (no linking with layout-axe):
//  * the scanner raises Uses.Layout(kind=place, facet=hw) and Uses.Layout(kind=axe, facet=hw);
//  * `place.to-axe` (canonicalize) sets `layout.axe` on each Place(...) — layout-axe then infers and checks
//    it like its own (capacities of the target's memory spaces included);
//  * `place.from-axe` (after axe.check) converts the checked layouts back into module attribute
//    `place.placements` (htp.ext.place.v1), which the cpu-ref emitter prints next to each buffer.
#include "ext_pack.hpp"

namespace extpack {

namespace {

bool is_place(htp::NodeRef n) {
  if (!n.is("Call")) return false;
  std::string callee = n.child("func").dotted_name();
  return callee == "Place" || callee.ends_with(".Place");
}

/// The space named by Place("UB") / Place(space="UB"), or nothing.
std::optional<std::string> space_of(htp::NodeRef call) {
  htp::NodeRef arg = call.size("args") == 1 ? call.item("args", 0) : htp::NodeRef();
  for (auto k : call.items("keywords"))
    if (k.text("arg").value_or("") == "space") arg = k.child("value");
  if (!arg || !arg.is("Constant")) return std::nullopt;
  auto c = arg.constant();
  if (!c || c->kind != HTP_CONST_STR) return std::nullopt;
  return htp::from_htp_str(c->text);
}

/// Rank of the annotated type `X @ Place(...)`: Tile[R, C, dt] / Tensor[d..., dt] has one element per dim + dtype.
std::optional<size_t> annotated_rank(htp::NodeRef place) {
  htp::NodeRef binop = place.parent();
  if (!binop.is("BinOp") || !binop.child("op").is("MatMult")) return std::nullopt;
  htp::NodeRef type = binop.child("left");
  if (!type.is("Subscript")) return std::nullopt;
  size_t elts = type.child("slice").size("elts");
  return elts >= 2 ? std::optional<size_t>(elts - 1) : std::nullopt;
}

}  // namespace

void scan_place(htp::PassContext &ctx) {
  ctx.module().root().walk([&](htp::NodeRef n) {
    if (!is_place(n)) return;
    ctx.add_obligation("Uses.Layout(kind=place,facet=hw)", n);
    ctx.add_obligation("Uses.Layout(kind=axe,facet=hw)", n);  // checked (and lowered) as Axe once converted
  });
}

void place_to_axe(htp::PassContext &ctx) {
  ctx.module().root().walk([&](htp::NodeRef n) {
    if (!is_place(n)) return;
    auto space = space_of(n);
    auto rank = annotated_rank(n);
    if (!space || space->empty()) {
      ctx.error(n, "place.space", "Place takes the memory space as a string: Place(\"UB\")");
      return;
    }
    if (!rank) {
      ctx.error(n, "place.annotation", "Place(...) annotates a type: Tile[R, C, dtype] @ Place(\"UB\")");
      return;
    }
    // Replicated everywhere, no memory facet: only the space differs from a plain value.
    n.set_attr("layout.axe", json{{"kind", "axe"}, {"source_kind", "place"}, {"rank", *rank},
                                  {"shard", json::array()}, {"hw", {{"space", *space}}}}.dump(),
               ctx.diag());
  });
}

void place_from_axe(htp::PassContext &ctx) {
  json functions = json::object();
  for (auto fn : ctx.module().root().items("body")) {
    if (!fn.is("FunctionDef")) continue;
    json placed = json::object();
    fn.walk([&](htp::NodeRef n) {
      json alloc = node_attr(n, "layout.alloc");
      json layout = node_attr(n.is("AnnAssign") ? n.child("target") : n, "layout.type");
      if (!alloc.is_object() || !layout.is_object() || layout.value("source_kind", "") != "place") return;
      placed[alloc.value("name", "?")] = {{"kind", "place"}, {"space", alloc.value("space", "GM")},
                                          {"bytes", alloc.value("bytes", 0)}};
    });
    if (!placed.empty()) functions[fn.text("name").value_or("?")] = placed;
  }
  ctx.module().set_attr("place.placements", json{{"schema", "htp.ext.place.v1"}, {"functions", functions}}.dump());
}

}  // namespace extpack
