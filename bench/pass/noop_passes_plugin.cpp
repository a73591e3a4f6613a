// Benchmark plugin: passes that do nothing, so a pipeline of them measures the pass manager itself.
#include <htp/ast.hpp>

namespace {

void nothing(htp::PassContext &) {}

// Roots at every node and never applies: the driver's cost per node offered.
struct NeverApplies {
  static constexpr const char *name = "bench.never-applies";
  static constexpr std::array<const char *, 0> roots{};
  static constexpr int32_t benefit = 0;
  bool match_and_rewrite(htp::NodeRef, htp::PassContext &) const { return false; }
};

// `a + b` of two int literals becomes their sum.
struct FoldIntAdd {
  static constexpr const char *name = "bench.fold-int-add";
  static constexpr std::array<const char *, 1> roots{"BinOp"};
  static constexpr int32_t benefit = 1;
  bool match_and_rewrite(htp::NodeRef n, htp::PassContext &ctx) const {
    if (!n.child("op").is("Add")) return false;
    auto a = n.child("left").int_constant(), b = n.child("right").int_constant();
    if (!a || !b) return false;
    HtpSpan span = n.span();
    auto m = ctx.module();
    m.replace(n, m.int_constant(*a + *b, &span));
    return true;
  }
};

void register_components(htp::Registrar &r) {
  for (int i = 0; i < 100; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "noop.pass%03d", i);
    r.add(htp::PassSpec{.info = {.id = id, .version = "1.0.0", .provides = {"IR.Noop" + std::to_string(i)},
                                 .requires_ = i ? std::vector<std::string>{"IR.Noop" + std::to_string(i - 1)}
                                                : std::vector<std::string>{}},
                        .stage = HTP_STAGE_ANALYZE,
                        .run = htp::pass_body<nothing>});
  }
  r.add(htp::PassSpec{.info = {.id = "bench.never-applies", .version = "1.0.0"},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .patterns = {htp::pattern<NeverApplies>()}});
  r.add(htp::PassSpec{.info = {.id = "bench.fold", .version = "1.0.0"},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .patterns = {htp::pattern<FoldIntAdd>()}});
}

}  // namespace

HTP_DEFINE_PLUGIN("bench-noop", "1.0.0", "100 passes that do nothing, and two pattern passes", register_components)
