// The capability grammar: parse, print, match, version ranges and malformed text.
#include <htp/capability.hpp>

#include <gtest/gtest.h>

namespace htp {
namespace {

Capability fact(std::string_view text) {
  auto c = parse_capability(text, CapabilityMode::Fact);
  EXPECT_TRUE(c.ok()) << text << ": " << (c ? "" : c.error().reason);
  return c ? *c : Capability{};
}

Capability req(std::string_view text) {
  auto c = parse_capability(text, CapabilityMode::Requirement);
  EXPECT_TRUE(c.ok()) << text << ": " << (c ? "" : c.error().reason);
  return c ? *c : Capability{};
}

CapabilityError error_of(std::string_view text, CapabilityMode mode = CapabilityMode::Requirement) {
  auto c = parse_capability(text, mode);
  EXPECT_FALSE(c.ok()) << text << " parsed";
  return c ? CapabilityError{} : c.error();
}

SemanticVersion ver(std::string_view text) {
  auto v = parse_version(text);
  EXPECT_TRUE(v.ok()) << text;
  return v ? *v : SemanticVersion{};
}

bool in_range(std::string_view range, std::string_view version) {
  auto r = parse_version_range(range);
  EXPECT_TRUE(r.ok()) << range << ": " << (r ? "" : r.error().reason);
  return r && range_contains(*r, ver(version));
}

TEST(Capability, ParsesBareNamespaceAndName) {
  Capability c = fact("IR.TaskGraph");
  EXPECT_EQ(c.ns, "IR");
  EXPECT_EQ(c.name, "TaskGraph");
  EXPECT_TRUE(c.params.empty());
  EXPECT_FALSE(c.optional);
}

TEST(Capability, ParsesEveryValueKind) {
  Capability c = fact(R"(Ns.Cap(sym=a2a3-sim.x, n=-42, s="two words", v=1.2.0-rc.1+b7))");
  ASSERT_EQ(c.params.size(), 4u);
  EXPECT_EQ(std::get<std::int64_t>(*c.find("n")), -42);
  EXPECT_EQ(std::get<std::string>(*c.find("s")), "two words");
  EXPECT_EQ(std::get<std::string>(*c.find("sym")), "a2a3-sim.x");
  const auto &v = std::get<SemanticVersion>(*c.find("v"));
  EXPECT_EQ(v.major, 1u);
  EXPECT_EQ(v.minor, 2u);
  EXPECT_EQ(v.patch, 0u);
  EXPECT_EQ(v.prerelease, (std::vector<std::string>{"rc", "1"}));
  EXPECT_EQ(v.build, "b7");
}

TEST(Capability, CanonicalFormSortsKeysAndDropsBlanks) {
  EXPECT_EQ(to_string(fact("Uses.Intrinsic( set = pto , op = add )")), "Uses.Intrinsic(op=add,set=pto)");
  EXPECT_EQ(to_string(fact("IR.Graph()")), "IR.Graph");
}

TEST(Capability, PrintedFormParsesBackEqual) {
  for (const char *text :
       {"A.B", "?A.B(x=1)", "A.B(s=\"q\\\"uote\\\\n\\n\\t\")", "A.B(s=\"\")", "A.B(s=\"1abc\")", "A.B(v=1.2)",
        "A.B(version>=1.2,<2,kind=dense)", "A.B(version=^0.3)", "A.B(version=~1.2.3)", "A.B(version==1.2)",
        "A.B(i=-9223372036854775808)", "A.B(v=1.0.0-alpha.1+build.9)", "A.B(r>1,<=2.5.1-rc)"}) {
    Capability c = req(text);
    std::string printed = to_string(c);
    auto again = parse_capability(printed, CapabilityMode::Requirement);
    ASSERT_TRUE(again.ok()) << text << " printed as " << printed;
    EXPECT_EQ(*again, c) << text << " printed as " << printed;
    EXPECT_EQ(to_string(*again), printed);
  }
}

TEST(Capability, QuotesTextThatIsNotASymbol) {
  Capability c;
  c.ns = "A";
  c.name = "B";
  c.params.push_back({"path", std::string("dir/file name")});
  EXPECT_EQ(to_string(c), "A.B(path=\"dir/file name\")");
}

TEST(Capability, RangeInsideParameterListEndsAtNextKey) {
  Capability c = req("IR.Graph(version>=1.2, <2, kind=dense)");
  const auto &r = std::get<VersionRange>(*c.find("version"));
  ASSERT_EQ(r.comparators.size(), 2u);
  EXPECT_EQ(r.comparators[0].op, VersionOp::Ge);
  EXPECT_EQ(r.comparators[1].op, VersionOp::Lt);
  EXPECT_EQ(std::get<std::string>(*c.find("kind")), "dense");
  EXPECT_EQ(to_string(c), "IR.Graph(kind=dense,version>=1.2,<2)");
}

TEST(Capability, OptionalMarkerIsARequirementOnly) {
  EXPECT_TRUE(req("?IR.Profile").optional);
  CapabilityError e = error_of("?IR.Profile", CapabilityMode::Fact);
  EXPECT_EQ(e.column, 0u);
  EXPECT_NE(e.reason.find("optional"), std::string::npos);
}

TEST(Capability, RangeInAFactIsAnError) {
  CapabilityError e = error_of("IR.Graph(version>=1.2)", CapabilityMode::Fact);
  EXPECT_EQ(e.column, 16u);
  EXPECT_NE(e.reason.find("only allowed in a requirement"), std::string::npos);
}

TEST(Capability, MalformedTextReportsColumnAndReason) {
  struct Case {
    const char *text;
    size_t column;
    const char *reason;
  };
  for (const Case &k :
       {Case{"Uses", 4, "expected '.'"}, Case{"Uses.", 5, "expected a name"},
        Case{"1Uses.X", 0, "expected a namespace"},
        Case{"Uses.Intrinsic(set=pto op=add)", 23, "expected ',' or ')'"},
        Case{"A.B(x=1,)", 8, "expected a parameter key"}, Case{"A.B(x=1,x=2)", 8, "duplicate key 'x'"},
        Case{"A.B(s=\"open)", 6, "unterminated string"}, Case{"A.B(v=01.2)", 6, "leading zero"},
        Case{"A.B(v=1.2-rc)", 9, "full MAJOR.MINOR.PATCH"}, Case{"A.B(x)", 5, "expected '='"},
        Case{"A.B(x=)", 6, "expected a value"}, Case{"A.B) ", 3, "unexpected ')'"},
        Case{"A.B(n=99999999999999999999)", 6, "does not fit"},
        Case{"A.B(s=\"\\q\")", 7, "unknown escape"}}) {
    CapabilityError e = error_of(k.text);
    EXPECT_EQ(e.column, k.column) << k.text << ": " << e.reason;
    EXPECT_NE(e.reason.find(k.reason), std::string::npos) << k.text << ": " << e.reason;
  }
}

TEST(Capability, RequirementIgnoresKeysItDoesNotName) {
  EXPECT_TRUE(matches(req("Uses.Intrinsic(set=pto)"), fact("Uses.Intrinsic(set=pto,op=add)")));
  EXPECT_TRUE(matches(req("Uses.Intrinsic"), fact("Uses.Intrinsic(set=pto,op=add)")));
  EXPECT_FALSE(matches(req("Uses.Intrinsic(set=pto)"), fact("Uses.Dialect(name=pto)")));
}

TEST(Capability, MismatchNamesTheKey) {
  auto m = first_mismatch(req("Backend.PTO(variant=a2a3sim)"), fact("Backend.PTO(variant=a2a3)"));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->key, "variant");
  EXPECT_EQ(m->reason, "has variant=a2a3, required variant=a2a3sim");
  auto missing = first_mismatch(req("Backend.PTO(variant=a2a3sim)"), fact("Backend.PTO"));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->key, "variant");
  EXPECT_FALSE(first_mismatch(req("Backend.PTO(variant=a2a3sim)"), fact("Backend.PTO(variant=a2a3sim)")));
}

TEST(Capability, TextQuotedOrBareIsTheSameValue) {
  EXPECT_TRUE(matches(req("A.B(k=\"pto\")"), fact("A.B(k=pto)")));
  EXPECT_FALSE(matches(req("A.B(k=1)"), fact("A.B(k=\"1\")")));
}

TEST(Capability, VersionRangeMatchesOnlyVersionsInside) {
  EXPECT_TRUE(matches(req("IR.G(version>=1.2,<2)"), fact("IR.G(version=1.5.0)")));
  EXPECT_FALSE(matches(req("IR.G(version>=1.2,<2)"), fact("IR.G(version=2.0.0)")));
  EXPECT_FALSE(matches(req("IR.G(version>=1.2,<2)"), fact("IR.G(version=1.1.9)")));
  EXPECT_FALSE(matches(req("IR.G(version>=1.2)"), fact("IR.G(version=abc)")));
  EXPECT_TRUE(matches(req("IR.G(version=1.2)"), fact("IR.G(version=1.2.7)")));
  EXPECT_TRUE(matches(req("IR.G(version=2)"), fact("IR.G(version=2.3.1)")));
}

TEST(SemanticVersion, PrecedenceFollowsSemver) {
  const char *ordered[] = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
                           "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
                           "1.0.0-rc.1",  "1.0.0",         "1.0.1",
                           "1.1.0",       "2.0.0"};
  for (size_t i = 0; i + 1 < std::size(ordered); ++i)
    EXPECT_LT(compare_versions(ver(ordered[i]), ver(ordered[i + 1])), 0)
        << ordered[i] << " < " << ordered[i + 1];
  EXPECT_EQ(compare_versions(ver("1.2.3+a"), ver("1.2.3+b")), 0);
  EXPECT_EQ(compare_versions(ver("1.2"), ver("1.2.0")), 0);
}

TEST(VersionRange, ComparisonOperators) {
  EXPECT_TRUE(in_range(">=1.2", "1.2.0"));
  EXPECT_FALSE(in_range(">1.2.0", "1.2.0"));
  EXPECT_TRUE(in_range(">1.2", "1.3.0"));
  EXPECT_FALSE(in_range(">1.2", "1.2.9"));
  EXPECT_TRUE(in_range("<2", "1.99.0"));
  EXPECT_FALSE(in_range("<2", "2.0.0-rc.1"));
  EXPECT_TRUE(in_range("<=1.2", "1.2.9"));
  EXPECT_FALSE(in_range("<=1.2", "1.3.0"));
  EXPECT_TRUE(in_range("=1.2.3", "1.2.3+build"));
  EXPECT_FALSE(in_range("=1.2.3", "1.2.4"));
}

TEST(VersionRange, CaretKeepsTheLeftmostNonZeroPart) {
  EXPECT_TRUE(in_range("^1.2.3", "1.9.0"));
  EXPECT_FALSE(in_range("^1.2.3", "2.0.0"));
  EXPECT_FALSE(in_range("^1.2.3", "1.2.2"));
  EXPECT_TRUE(in_range("^0.2.3", "0.2.9"));
  EXPECT_FALSE(in_range("^0.2.3", "0.3.0"));
  EXPECT_TRUE(in_range("^0.0.3", "0.0.3"));
  EXPECT_FALSE(in_range("^0.0.3", "0.0.4"));
  EXPECT_TRUE(in_range("^0", "0.9.9"));
  EXPECT_FALSE(in_range("^0", "1.0.0"));
}

TEST(VersionRange, TildeKeepsTheMinor) {
  EXPECT_TRUE(in_range("~1.2.3", "1.2.9"));
  EXPECT_FALSE(in_range("~1.2.3", "1.3.0"));
  EXPECT_TRUE(in_range("~1", "1.9.0"));
  EXPECT_FALSE(in_range("~1", "2.0.0"));
}

TEST(VersionRange, CommaIsAConjunction) {
  EXPECT_TRUE(in_range(">=1.2, <2", "1.2.0"));
  EXPECT_FALSE(in_range(">=1.2,<2", "2.0.0"));
  EXPECT_FALSE(in_range(">=1.2,<1.1", "1.2.0"));
  auto bad = parse_version_range(">=1.2,");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().column, 6u);
}

} // namespace
} // namespace htp
