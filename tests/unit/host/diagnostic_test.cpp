#include <gtest/gtest.h>

#include "diag/diagnostic.hpp"
#include "diag/diagnostic_json.hpp"

TEST(Diagnostic, RendersFileLineAndOneBasedColumn) {
  auto d = htp::Diagnostic::error("x.y", "bad thing", htp::Span{"prog.py", 12, 7, 12, 9});
  EXPECT_EQ(d.render(), "prog.py:12:8: error: bad thing [x.y]");
}

TEST(Diagnostic, RendersWithoutLocation) {
  EXPECT_EQ(htp::Diagnostic::warning("", "careful").render(), "warning: careful");
}

TEST(Diagnostic, NotesAreIndentedBelow) {
  auto d = htp::Diagnostic::error("c", "main");
  d.with_note("first").with_note("second", htp::Span{"a.py", 1, 0, 1, 1});
  EXPECT_EQ(d.render(), "error: main [c]\n  note: first\n  a.py:1:1: note: second");
}

TEST(Diagnostic, JsonRoundTripKeepsEveryField) {
  auto d = htp::Diagnostic::error("c", "m", htp::Span{"f.py", 3, 4, 5, 6});
  d.with_note("n");
  auto back = htp::diagnostic_from_json(htp::diagnostic_to_json(d));
  EXPECT_EQ(back.render(), d.render());
  EXPECT_EQ(back.span, d.span);
}

TEST(DiagnosticList, HasErrorsIgnoresWarnings) {
  htp::DiagnosticList l;
  l.report(htp::Diagnostic::warning("w", "w"));
  EXPECT_FALSE(l.has_errors());
  l.report(htp::Diagnostic::error("e", "e"));
  EXPECT_TRUE(l.has_errors());
}
