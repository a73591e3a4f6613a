#include "device.hpp"

namespace htp::aie {

std::string_view tile_kind_name(TileKind k) {
  switch (k) {
    case TileKind::Shim: return "shim";
    case TileKind::Mem: return "mem tile";
    case TileKind::Compute: return "compute tile";
    default: return "invalid tile";
  }
}

TileKind DeviceProfile::kind_of(int row) const {
  if (row == 0) return TileKind::Shim;
  if (row == 1) return TileKind::Mem;
  if (row >= 2 && row < rows) return TileKind::Compute;
  return TileKind::Invalid;
}

const TileResources &DeviceProfile::resources(TileKind k) const {
  return k == TileKind::Shim ? shim : k == TileKind::Mem ? mem : compute;
}

std::string DeviceProfile::describe() const {
  return name + " (" + std::to_string(columns) + " column" + (columns == 1 ? "" : "s") + " x " +
         std::to_string(compute_rows()) + " compute rows = " + std::to_string(compute_tiles()) + " compute tiles)";
}

namespace {

DeviceProfile make(std::string name, std::string arch, int columns) {
  DeviceProfile d;
  d.name = std::move(name);
  d.arch = std::move(arch);
  d.columns = columns;
  return d;
}

std::vector<DeviceProfile> build_table() {
  // npu1 (Phoenix/Hawk Point, AIE-ML): 4 usable columns; npu2 (Strix, AIE2P): 8. The partial devices
  // npuN_Kcol use the first K columns (MLIR-AIE dropped npu1_4col: it is npu1).
  std::vector<DeviceProfile> t;
  t.push_back(make("npu1", "aie2", 4));
  for (int k = 1; k <= 3; ++k) t.push_back(make("npu1_" + std::to_string(k) + "col", "aie2", k));
  t.push_back(make("npu2", "aie2p", 8));
  for (int k = 1; k <= 7; ++k) t.push_back(make("npu2_" + std::to_string(k) + "col", "aie2p", k));
  return t;
}

}  // namespace

const std::vector<DeviceProfile> &device_profiles() {
  static const std::vector<DeviceProfile> table = build_table();
  return table;
}

const DeviceProfile *device_named(std::string_view name) {
  for (const auto &d : device_profiles())
    if (d.name == name) return &d;
  return nullptr;
}

const DeviceProfile *device_for_target(std::string_view target) {
  if (target.rfind("aie-", 0) != 0) return nullptr;
  return device_named(target.substr(4));
}

std::vector<std::string> aie_targets() {
  std::vector<std::string> out;
  for (const auto &d : device_profiles()) out.push_back("aie-" + d.name);
  return out;
}

}  // namespace htp::aie
