// resolve --dot: the plan as Graphviz that `dot -Tsvg` renders.
#include "resolver/plan_dot.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "component_builder.hpp"
#include "resolver/resolver.hpp"

namespace htp {
namespace {

using namespace htp::testing;

class PlanDotTest : public ::testing::Test {
protected:
  void SetUp() override {
    add_all(
        registry_,
        {backend("be.sim", {"sim"}).provides({"Backend.Sim"}).accepts({"Uses.Dialect(name=\"ti\\\"le\")"}),
         binding("bind.sim", {"sim"}), backend("be.lo", {"sim"}, -1),
         dialect("tile", "ti\"le").provides({"Dialect.Tile"}),
         pass("a", PassStage::Canonicalize).applies_to({"Uses.Dialect"}).provides({"IR.A(note=\"x y\")"}),
         pass("b", PassStage::Lower).applies_to({"Uses.Dialect"}).requires_({"IR.A", "Backend.Sim"})});
    ResolveRequest req;
    req.target = "sim";
    req.obligations.push_back(*parse_obligation("Uses.Dialect(name=\"ti\\\"le\")", {}, "tile \"dialect\""));
    Resolution r = resolve(registry_, req);
    ASSERT_TRUE(r.ok()) << r.diagnostics.render();
    dot_ = plan_to_dot(*r.plan);
  }
  Registry registry_;
  std::string dot_;
};

TEST_F(PlanDotTest, NamesComponentsCapabilitiesAndOrder) {
  EXPECT_EQ(dot_.rfind("digraph htp_plan {", 0), 0u);
  EXPECT_NE(dot_.find("be.sim"), std::string::npos);
  EXPECT_NE(dot_.find("IR.A(note=\\\"x y\\\")"), std::string::npos);
  EXPECT_NE(dot_.find("runs before (1)"), std::string::npos);
  EXPECT_NE(dot_.find("(not chosen)"), std::string::npos);
}

TEST_F(PlanDotTest, RendersWithGraphviz) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "Graphviz `dot` is not installed";
  auto dir = std::filesystem::temp_directory_path() / ("htp-dot-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "plan.dot") << dot_;
  std::string cmd = "dot -Tsvg '" + (dir / "plan.dot").string() + "' -o '" + (dir / "plan.svg").string() +
                    "' 2>'" + (dir / "dot.err").string() + "'";
  int rc = std::system(cmd.c_str());
  std::ifstream err(dir / "dot.err");
  std::stringstream errs;
  errs << err.rdbuf();
  ASSERT_EQ(rc, 0) << errs.str();
  EXPECT_TRUE(errs.str().empty()) << errs.str();
  std::ifstream svg(dir / "plan.svg");
  std::stringstream s;
  s << svg.rdbuf();
  EXPECT_NE(s.str().find("<svg"), std::string::npos);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace htp
