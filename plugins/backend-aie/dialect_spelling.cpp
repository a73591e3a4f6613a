#include "dialect_spelling.hpp"

namespace htp::aie {

namespace {

std::vector<DialectSpelling> table() {
  std::vector<DialectSpelling> t;
  // Pinned: MLIR-AIE main from Nov 2025 (PR #2708 promoted the runtime sequence to `aie`); link_with on
  // the kernel declaration; offsets without the (col, row) prefix; acquire yields a subview.
  t.push_back({"2025.11", "MLIR-AIE main after PR #2708 (Nov 2025)", "aie.runtime_sequence", true, false, false, {}});
  // Newer main: acquire returns the memref directly.
  t.push_back({"2026", "MLIR-AIE main, 2026 (acquire returns a memref)", "aie.runtime_sequence", true, false, true, {}});
  // Release v1.0 (May 2025): runtime sequence still in aiex, link_with on the core.
  t.push_back({"v1.0", "MLIR-AIE release v1.0 (May 2025)", "aiex.runtime_sequence", false, false, false, {}});
  // 2024 spelling: the sequence is a func.func, dma_memcpy_nd takes the (0, 0) prefix, npu1 is npu1_4col.
  t.push_back({"2024.06", "MLIR-AIE main, mid 2024 (func.func @sequence)", "func.func @sequence", false, true, false,
               {{"npu1", "npu1_4col"}}});
  return t;
}

const std::vector<DialectSpelling> &all() {
  static const std::vector<DialectSpelling> t = table();
  return t;
}

}  // namespace

const DialectSpelling &default_spelling() { return all().front(); }

const DialectSpelling *spelling_named(std::string_view id) {
  for (const auto &s : all())
    if (s.id == id) return &s;
  return nullptr;
}

std::vector<std::string> spelling_ids() {
  std::vector<std::string> out;
  for (const auto &s : all()) out.push_back(s.id);
  return out;
}

}  // namespace htp::aie
