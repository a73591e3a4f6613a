// Golden files: one comparison for every test that checks output against a file in the source tree.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace htp::test {

/// Whether this run rewrites goldens: HTP_UPDATE_GOLDENS=1, and no other variable or value.
bool updating_goldens();

/// `actual` equals the file at `golden`; with updating_goldens() the file is rewritten instead (review the
/// diff). The failure names the file and says how to rewrite it.
::testing::AssertionResult matches_golden(const std::filesystem::path &golden, const std::string &actual);

/// Every file of `files` (relative path, content) equals its golden under `dir`, and `dir` holds no other
/// file; with updating_goldens() the directory is rewritten to exactly `files`.
::testing::AssertionResult matches_golden_dir(const std::filesystem::path &dir,
                                              const std::vector<std::pair<std::string, std::string>> &files);

}  // namespace htp::test
