// Unit tests of the layout-axe library: the short-form parser, building canonical layouts, the join,
// contraction and effect rules, collectives, the store rule, JSON and conversion round trips.
#include <gtest/gtest.h>

#include "axe_layout.hpp"
#include "hardware_profile.hpp"
#include "layout_builder.hpp"
#include "layout_conversion.hpp"
#include "layout_rules.hpp"
#include "layout_text.hpp"

using namespace htp::axe;

namespace {

const Mesh kMesh = Mesh::from_mapping({2, 2});
const TensorInfo kSquare{{64, 64}, "f32"};

AxeLayout dist(const std::string &text, const TensorInfo &t = kSquare, const Mesh &mesh = kMesh) {
  auto spec = parse_dist(text);
  EXPECT_TRUE(spec.ok()) << text << ": " << (spec.ok() ? "" : spec.error().message);
  auto l = from_dist(*spec, t, mesh);
  EXPECT_TRUE(l.ok()) << text << ": " << (l.ok() ? "" : l.error().message);
  return *l;
}

std::string text_of(const AxeLayout &l) {
  return describe(l, kMesh);
}

template <class T> std::string code_of(const Result<T> &r) {
  return r.ok() ? "ok" : r.error().code;
}

} // namespace

// ---- parser ----------------------------------------------------------------------------------------

TEST(LayoutText, ParsesOneElementPerDim) {
  auto spec = parse_dist("S(0)RS(12)");
  ASSERT_TRUE(spec.ok());
  ASSERT_EQ(spec->size(), 3u);
  EXPECT_EQ((*spec)[0].axis, 0u);
  EXPECT_FALSE((*spec)[1].axis);
  EXPECT_EQ((*spec)[2].axis, 12u);
  EXPECT_EQ((*spec)[2].column, 5);
  EXPECT_EQ(print_dist(*spec), "S(0)RS(12)");
}

TEST(LayoutText, ErrorsCarryTheColumn) {
  struct Case {
    const char *text;
    int column;
    const char *fragment;
  };
  for (const Case &c :
       {Case{"", 0, "empty layout"}, Case{"RX", 1, "expected 'R' or 'S(i)', found 'X'"},
        Case{"S0R", 1, "expected '(' after 'S'"}, Case{"S()", 2, "expected a mesh axis number"},
        Case{"RS(1", 4, "expected ')'"}, Case{"S(0)S(0)", 4, "mesh axis 0 shards both dim 0 and dim 1"},
        Case{"R S(0)", 1, "found ' '"}}) {
    auto r = parse_dist(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().code, "layout.syntax");
    EXPECT_EQ(r.error().column, c.column) << c.text;
    EXPECT_NE(r.error().message.find(c.fragment), std::string::npos) << r.error().message;
  }
}

// ---- building --------------------------------------------------------------------------------------

TEST(LayoutBuilder, ShortFormIsBlockShardsAndReplicaOfTheOtherAxes) {
  AxeLayout l = dist("S(0)R");
  ASSERT_EQ(l.shard.size(), 1u);
  EXPECT_EQ(l.shard[0], (AxeIter{2, 1, "mesh.x", 0}));
  ASSERT_EQ(l.replica.size(), 1u);
  EXPECT_EQ(l.replica[0], (AxeIter{2, 1, "mesh.y", -1}));
  EXPECT_EQ(*local_shape(l), (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(text_of(l), "S(0)R");
}

TEST(LayoutBuilder, ShardAxisBeyondTheMeshIsAnErrorAtItsColumn) {
  auto spec = parse_dist("RS(2)");
  auto l = from_dist(*spec, kSquare, kMesh);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().code, "layout.mesh-axis");
  EXPECT_EQ(l.error().column, 1);
  EXPECT_NE(l.error().message.find("mesh has 2 axes (mapping=[2, 2]"), std::string::npos)
      << l.error().message;
  auto single = from_dist(*parse_dist("S(0)"), TensorInfo{{8}, "f32"}, Mesh());
  EXPECT_NE(single.error().message.find("no @kernel(mapping=[...])"), std::string::npos);
}

TEST(LayoutBuilder, RankAndDivisibilityAreChecked) {
  EXPECT_EQ(code_of(from_dist(*parse_dist("S(0)"), kSquare, kMesh)), "layout.rank");
  EXPECT_EQ(code_of(from_dist(*parse_dist("S(0)R"), TensorInfo{{63, 8}, "f32"}, kMesh)),
            "layout.divisibility");
}

TEST(LayoutBuilder, AxeItersEqualTheShortForm) {
  auto l =
      from_axe_iters({{2, 1, "mesh.x"}, {32, 64, "m"}, {64, 1, "m"}}, {{2, 1, "mesh.y"}}, {}, kSquare, kMesh);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_TRUE(l->same_distribution(dist("S(0)R")));
  EXPECT_EQ(*l->mem.strides, (std::vector<int64_t>{64, 1}));
}

TEST(LayoutBuilder, CoreItersBecomeMeshIters) {
  auto l = from_axe_iters({{4, 1, "core"}, {16, 64, "m"}, {64, 1, "m"}}, {}, {}, kSquare, kMesh);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->shard, (std::vector<AxeIter>{{2, 1, "mesh.x", 0}, {2, 1, "mesh.y", 0}}));
  EXPECT_EQ(*local_shape(*l), (std::vector<int64_t>{16, 64}));
}

TEST(LayoutBuilder, CyclicShardIsRefusedAndAnOffsetHasNoShortForm) {
  // A device iter minor to a local iter of its dim deals the dim cyclically; a short form would make it a block.
  EXPECT_EQ(code_of(from_axe_iters({{32, 64, "m"}, {2, 1, "mesh.x"}, {64, 1, "m"}}, {{2, 1, "mesh.y"}}, {}, kSquare,
                                   kMesh)),
            "layout.cyclic");
  auto block =
      from_axe_iters({{2, 1, "mesh.x"}, {32, 64, "m"}, {64, 1, "m"}}, {{2, 1, "mesh.y"}}, {}, kSquare, kMesh);
  ASSERT_TRUE(block.ok()) << block.error().message;
  EXPECT_EQ(text_of(*block), "S(0)R");
  auto partial =
      from_axe_iters({{64, 1, "m"}, {64, 1, "m"}}, {{1, 1, "mesh.y"}}, {{"mesh.y", 1}}, kSquare, kMesh);
  ASSERT_TRUE(partial.ok()) << partial.error().message;
  EXPECT_FALSE(dist_view(*partial, kMesh));
  EXPECT_EQ(text_of(*partial), "axe(shard=[], replica=[(1,1,mesh.y)], offset={mesh.y: 1})");
}

TEST(LayoutBuilder, AxeItersMustTileEveryDim) {
  EXPECT_EQ(code_of(from_axe_iters({{2, 1, "mesh.x"}}, {}, {}, kSquare, kMesh)), "layout.iters");
  EXPECT_EQ(code_of(from_axe_iters({{128, 1, "m"}, {32, 1, "m"}}, {}, {}, kSquare, kMesh)), "layout.iters");
  EXPECT_EQ(code_of(from_axe_iters({{64, 1, "m"}, {64, 1, "m"}, {2, 1, "mesh.x"}}, {}, {}, kSquare, kMesh)),
            "layout.iters");
  EXPECT_EQ(code_of(from_axe_iters({{64, 1, "q"}, {64, 1, "m"}}, {}, {}, kSquare, kMesh)), "layout.axis");
  EXPECT_EQ(code_of(from_axe_iters({{2, 1, "mesh.z"}, {32, 1, "m"}, {64, 1, "m"}}, {}, {}, kSquare, kMesh)),
            "layout.mesh-axis");
  EXPECT_EQ(code_of(from_axe_iters({{2, 1, "mesh.x"}, {32, 1, "m"}, {64, 1, "m"}}, {{2, 1, "mesh.x"}}, {},
                                   kSquare, kMesh)),
            "layout.overlap");
}

TEST(LayoutBuilder, BankItersAreMemoryPlacementAndImplyTheSpace) {
  auto l = from_axe_iters({{2, 1, "mesh.x"}, {32, 64, "m"}, {4, 16, "ub.bank"}, {16, 1, "m"}}, {}, {},
                          kSquare, kMesh);
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->mem.banks, (std::vector<AxeIter>{{4, 16, "ub.bank", 1}}));
  EXPECT_EQ(l->hw.space, "UB");
  EXPECT_EQ(*local_shape(*l), (std::vector<int64_t>{32, 64}));
}

// ---- join ------------------------------------------------------------------------------------------

TEST(LayoutJoin, RuleTable) {
  struct Case {
    const char *a, *b, *result;
  };
  for (const Case &c : {Case{"RR", "RR", "RR"}, Case{"S(0)R", "S(0)R", "S(0)R"}, Case{"RR", "S(1)R", "S(1)R"},
                        Case{"S(0)R", "RR", "S(0)R"}, Case{"S(0)R", "RS(1)", "S(0)S(1)"}}) {
    auto r = join(dist(c.a), dist(c.b), "add", kMesh);
    ASSERT_TRUE(r.ok()) << c.a << " ⊔ " << c.b << ": " << r.error().message;
    EXPECT_EQ(text_of(*r), c.result) << c.a << " ⊔ " << c.b;
  }
}

TEST(LayoutJoin, DifferentAxesOnOneDimAskForRelayout) {
  auto r = join(dist("S(0)R"), dist("S(1)R"), "add", kMesh);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "layout.join");
  EXPECT_NE(r.error().message.find("dim 0 is S(0) on the left and S(1) on the right"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("relayout"), std::string::npos);
}

TEST(LayoutJoin, ReplicatedSideMustBeReplicatedOverTheOtherAxis) {
  // RS(0) ⊔ S(0)R would put mesh axis 0 on both dims.
  auto r = join(dist("S(0)R"), dist("RS(0)"), "mul", kMesh);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "layout.join");
}

// ---- contraction -----------------------------------------------------------------------------------

TEST(LayoutContraction, ReplicatedContractionGivesShardedResultWithoutEffect) {
  auto r = contract(dist("S(0)R"), dist("RS(1)"), kMesh);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(text_of(*r), "S(0)S(1)");
  EXPECT_TRUE(r->pending.empty());
  EXPECT_EQ(r->shape, (std::vector<int64_t>{64, 64}));
}

TEST(LayoutContraction, ShardedContractionLeavesAPendingSum) {
  auto r = contract(dist("RS(1)"), dist("S(1)R"), kMesh);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->pending.size(), 1u);
  EXPECT_EQ(r->pending[0].op, "sum");
  EXPECT_EQ(r->pending[0].iter.axis, "mesh.y");
  EXPECT_EQ(r->pending[0].source, "matmul");
}

TEST(LayoutContraction, MismatchedContractionDimsAreAnError) {
  auto r = contract(dist("S(0)S(1)"), dist("RS(1)"), kMesh);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "layout.contraction");
  EXPECT_NE(r.error().message.find("dim 1 of the left operand (S(1)) with dim 0 of the right operand (R)"),
            std::string::npos)
      << r.error().message;
}

TEST(LayoutContraction, RowsAndColumnsOnOneAxisAreAnError) {
  EXPECT_EQ(code_of(contract(dist("S(0)R"), dist("RS(0)"), kMesh)), "layout.contraction");
}

// ---- effects ---------------------------------------------------------------------------------------

TEST(LayoutEffects, ReductionOverAShardedDimLeavesAPendingEffect) {
  auto r = reduce(dist("S(0)S(1)"), 1, "sum", "rowsum", kMesh);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->pending.size(), 1u);
  EXPECT_EQ(r->pending[0].iter.axis, "mesh.y");
  EXPECT_EQ(r->shape, (std::vector<int64_t>{64, 1}));
  auto local = reduce(dist("S(0)R"), 1, "max", "rowmax", kMesh);
  EXPECT_TRUE(local->pending.empty());
}

TEST(LayoutEffects, AllreduceDischargesAndReplicates) {
  auto partial = *reduce(dist("S(0)S(1)"), 1, "sum", "rowsum", kMesh);
  auto done = allreduce(partial, std::string("mesh.y"), "sum", kMesh);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(done->pending.empty());
  EXPECT_EQ(text_of(*done), "S(0)R");
  EXPECT_FALSE(check_discharged(*done, "returning", kMesh));
}

TEST(LayoutEffects, AllreduceOfACompleteValueIsAnError) {
  EXPECT_EQ(code_of(allreduce(dist("S(0)R"), std::nullopt, "sum", kMesh)), "layout.collective");
  auto partial = *reduce(dist("S(0)S(1)"), 1, "max", "rowmax", kMesh);
  EXPECT_EQ(code_of(allreduce(partial, std::nullopt, "sum", kMesh)), "layout.collective");
}

TEST(LayoutEffects, UndischargedEffectIsReportedWithTheFix) {
  auto partial = *reduce(dist("S(0)S(1)"), 1, "sum", "rowsum", kMesh);
  auto e = check_discharged(partial, "storing into 'out'", kMesh);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, "layout.undischarged");
  EXPECT_NE(e->message.find("a sum over mesh.y (from rowsum)"), std::string::npos) << e->message;
  EXPECT_NE(e->message.find("allreduce(x, axis=\"mesh.y\", op=\"sum\")"), std::string::npos) << e->message;
}

TEST(LayoutEffects, EffectClassesGovernOpsOnPartialValues) {
  auto partial = *reduce(dist("S(0)S(1)"), 1, "sum", "rowsum", kMesh);
  auto complete = *reduce(dist("S(0)R"), 1, "sum", "rowsum", kMesh);
  EXPECT_EQ(code_of(unary(partial, "exp", kMesh)), "layout.effect");
  EXPECT_TRUE(unary(partial, "neg", kMesh).ok());
  EXPECT_TRUE(join(partial, partial, "add", kMesh).ok());
  EXPECT_EQ(code_of(join(partial, complete, "add", kMesh)), "layout.effect");
  EXPECT_TRUE(join(partial, complete, "mul", kMesh).ok());
  EXPECT_EQ(code_of(join(partial, partial, "mul", kMesh)), "layout.effect");
  AxeLayout zero = complete;
  zero.zero = true;
  EXPECT_TRUE(join(zero, partial, "add", kMesh).ok());
}

TEST(LayoutEffects, ReduceScatterDischargesIntoAShard) {
  auto partial = *contract(dist("RS(1)"), dist("S(1)R"), kMesh);
  auto r = reduce_scatter(partial, 1, std::nullopt, "sum", kMesh);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(text_of(*r), "RS(1)");
  EXPECT_TRUE(r->pending.empty());
}

TEST(LayoutEffects, AllgatherReplicatesAShardedDim) {
  auto r = allgather(dist("S(0)S(1)"), 1, kMesh);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(text_of(*r), "S(0)R");
  EXPECT_EQ(code_of(allgather(dist("S(0)R"), 1, kMesh)), "layout.collective");
}

TEST(LayoutEffects, RelayoutNeedsADischargedValue) {
  auto partial = *reduce(dist("S(0)S(1)"), 1, "sum", "rowsum", kMesh);
  EXPECT_EQ(code_of(relayout(partial, dist("RR"), kMesh)), "layout.effect");
  EXPECT_EQ(text_of(*relayout(dist("S(0)R"), dist("RS(0)"), kMesh)), "RS(0)");
}

// ---- store -----------------------------------------------------------------------------------------

TEST(LayoutStore, EachCoreMustHoldWhatItWrites) {
  EXPECT_FALSE(check_store(dist("S(0)S(1)"), dist("S(0)S(1)"), "C", kMesh));
  EXPECT_FALSE(check_store(dist("RR"), dist("S(0)R"), "C", kMesh));
  auto e = check_store(dist("S(0)S(1)"), dist("S(0)R"), "C", kMesh);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, "layout.store");
}

// ---- JSON and conversions --------------------------------------------------------------------------

TEST(LayoutJson, RoundTripsThroughTheSchema) {
  auto l = *contract(dist("RS(1)"), dist("S(1)R"), kMesh);
  l.hw.space = "UB";
  l.mem.order = std::vector<int64_t>{1, 0};
  auto j = to_json(l, kMesh);
  EXPECT_EQ(j["kind"], "axe");
  EXPECT_EQ(j["pending"][0]["axis"], "mesh.y");
  auto back = layout_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->same_distribution(l));
  EXPECT_EQ(back->pending, l.pending);
  EXPECT_EQ(back->mem, l.mem);
  EXPECT_EQ(back->hw, l.hw);
  EXPECT_EQ(to_json(*back, kMesh).dump(), j.dump());
}

namespace {

/// A second, small layout kind for the tests: {"kind": "blocked", "grid": [g0, g1]} splits dim d into
/// g_d blocks on mesh axis d (g_d = 1: not split).
void add_blocked_kind(ConversionRegistry &r) {
  r.add(
      "blocked",
      [](const nlohmann::json &doc, const TensorInfo &t, const Mesh &mesh) -> Result<AxeLayout> {
        AxeLayout l;
        auto grid = doc.at("grid").get<std::vector<int64_t>>();
        l.rank = static_cast<int>(grid.size());
        for (size_t d = 0; d < grid.size(); ++d)
          if (grid[d] > 1) l.shard.push_back({grid[d], 1, Mesh::axis_name(d), static_cast<int>(d)});
        return complete(l, t, mesh);
      },
      [](const AxeLayout &l, const Mesh &) -> Result<nlohmann::json> {
        std::vector<int64_t> grid(static_cast<size_t>(l.rank), 1);
        for (const auto &it : l.shard) {
          if (it.axis != Mesh::axis_name(static_cast<size_t>(it.dim)) || it.stride != 1)
            return fail("layout.kind", "blocked layouts split dim d on mesh axis d only");
          grid[static_cast<size_t>(it.dim)] = it.extent;
        }
        return nlohmann::json{{"kind", "blocked"}, {"grid", grid}};
      });
}

} // namespace

TEST(LayoutConversion, DistRoundTripsThroughAxe) {
  auto reg = ConversionRegistry::with_builtin_kinds();
  nlohmann::json doc = {{"kind", "dist"}, {"text", "S(0)S(1)"}};
  auto back = reg.convert(doc, "dist", kSquare, kMesh);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, doc);
}

TEST(LayoutConversion, ASecondKindRoundTripsAndConvertsToDist) {
  auto reg = ConversionRegistry::with_builtin_kinds();
  add_blocked_kind(reg);
  nlohmann::json doc = {{"kind", "blocked"}, {"grid", {2, 1}}};
  auto axe = reg.to_axe(doc, kSquare, kMesh);
  ASSERT_TRUE(axe.ok()) << axe.error().message;
  EXPECT_EQ(axe->source_kind, "blocked");
  EXPECT_TRUE(axe->same_distribution(dist("S(0)R")));
  EXPECT_EQ(*reg.convert(doc, "blocked", kSquare, kMesh), doc);
  EXPECT_EQ(*reg.convert(doc, "dist", kSquare, kMesh), (nlohmann::json{{"kind", "dist"}, {"text", "S(0)R"}}));
  EXPECT_EQ(*reg.convert({{"kind", "dist"}, {"text", "RS(1)"}}, "blocked", kSquare, kMesh),
            (nlohmann::json{{"kind", "blocked"}, {"grid", {1, 2}}}));
  // dim 0 on mesh axis 1 has no blocked spelling: the conversion says so.
  EXPECT_EQ(code_of(reg.convert({{"kind", "dist"}, {"text", "S(1)R"}}, "blocked", kSquare, kMesh)),
            "layout.kind");
}

TEST(LayoutConversion, AxeLayoutsWithoutAShortFormDoNotConvertToDist) {
  auto reg = ConversionRegistry::with_builtin_kinds();
  auto l = *from_axe_iters({{64, 1, "m"}, {64, 1, "m"}}, {{1, 1, "mesh.y"}}, {{"mesh.y", 1}}, kSquare, kMesh);
  EXPECT_EQ(code_of(reg.from_axe(l, "dist", kMesh)), "layout.kind");
  EXPECT_EQ(code_of(reg.to_axe({{"kind", "nope"}}, kSquare, kMesh)), "layout.kind");
}

// ---- hardware profiles -----------------------------------------------------------------------------

TEST(HardwareProfile, TargetsMapToTheirProfiles) {
  EXPECT_EQ(profile_for_target("pto-a2a3sim")->capacity.at("UB"), 192 * 1024);
  EXPECT_EQ(profile_for_target("aie-npu1")->capacity.at("L1"), 64 * 1024);
  EXPECT_TRUE(profile_for_target("aie-npu2")->has_space("GM"));
  EXPECT_FALSE(profile_for_target("check"));
  auto custom = profile_from_option(nlohmann::json::parse(R"({"spaces": {"UB": 1024, "GM": null}})"));
  ASSERT_TRUE(custom.ok());
  EXPECT_EQ(custom->capacity.at("UB"), 1024);
  EXPECT_TRUE(custom->unbounded.at("GM"));
  EXPECT_EQ(code_of(profile_from_option("tpu")), "layout.profile");
}
