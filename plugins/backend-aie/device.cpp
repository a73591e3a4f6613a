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

htp::RooflineRates CorePerformance::rates(int dma_in, int dma_out) const {
  htp::RooflineRates r;
  const double ghz = clock.value;  // cycles per ns
  for (const auto &[dtype, n] : matmul_macs_per_cycle) r.matmul_flops_per_ns[dtype] = 2 * n.value * ghz;
  r.vector_bytes_per_ns = vector_bytes_per_cycle.value * ghz;
  r.transcendental_bytes_per_ns = transcendental_bytes_per_cycle.value * ghz;
  r.load_bytes_per_ns = dma_channel_bytes_per_cycle.value * ghz * dma_in;
  r.store_bytes_per_ns = dma_channel_bytes_per_cycle.value * ghz * dma_out;
  r.launch_ns = call_overhead.value;
  return r;
}

nlohmann::json CorePerformance::to_json() const {
  nlohmann::json mm = nlohmann::json::object();
  for (const auto &[dtype, n] : matmul_macs_per_cycle) mm[dtype] = n.to_json();
  return {{"clock", clock.to_json()},
          {"matmul_macs_per_cycle", mm},
          {"vector_bytes_per_cycle", vector_bytes_per_cycle.to_json()},
          {"transcendental_bytes_per_cycle", transcendental_bytes_per_cycle.to_json()},
          {"dma_channel_bytes_per_cycle", dma_channel_bytes_per_cycle.to_json()},
          {"call_overhead", call_overhead.to_json()}};
}

namespace {

constexpr const char *kAm020 = "AMD AM020, Versal Adaptive SoC AIE-ML Architecture Manual";

/// AIE-ML (npu1, Phoenix / Hawk Point).
CorePerformance aie_ml_performance() {
  CorePerformance p;
  p.clock = {1.0, "GHz",
             "assumed: AMD states no NPU clock; 10 INT8 TOPS (AMD Ryzen 7040 'Phoenix' NPU, product pages) over 20 "
             "AIE-ML tiles x 256 MAC x 2 is about 1 GHz",
             true};
  p.matmul_macs_per_cycle["i8"] = {256, "MAC/cycle", std::string(kAm020) + ": 256 INT8 x INT8 MACs per cycle per core"};
  p.matmul_macs_per_cycle["i16"] = {64, "MAC/cycle", std::string(kAm020) + ": 64 INT16 x INT16 MACs per cycle per core"};
  p.matmul_macs_per_cycle["bf16"] = {128, "MAC/cycle", std::string(kAm020) + ": 128 BF16 MACs per cycle per core"};
  p.matmul_macs_per_cycle["f32"] = {16, "MAC/cycle",
                                    "assumed: AIE-ML has no native FP32 MAC (" + std::string(kAm020) +
                                        "); FP32 is emulated with BF16 passes, taken as 1/8 of the BF16 rate",
                                    true};
  p.vector_bytes_per_cycle = {64, "B/cycle", "assumed: one 512-bit vector operation per cycle for elementwise work", true};
  p.transcendental_bytes_per_cycle = {8, "B/cycle",
                                      "assumed: exp, division and the like run on the scalar unit or lookup tables, "
                                      "about two FP32 results per cycle",
                                      true};
  p.dma_channel_bytes_per_cycle = {4, "B/cycle",
                                   std::string(kAm020) + ": each DMA channel drives a 32-bit AXI4-Stream port, one "
                                                         "word per cycle"};
  p.call_overhead = {200, "ns", "assumed: lock acquire/release and the call of an external kernel per iteration", true};
  return p;
}

/// AIE2P (npu2, Strix): the AIE-ML figures with the published doubling of INT8 throughput.
CorePerformance aie2p_performance() {
  CorePerformance p = aie_ml_performance();
  p.matmul_macs_per_cycle["i8"] = {512, "MAC/cycle",
                                   "assumed: 50 INT8 TOPS (AMD Ryzen AI 300 'Strix Point' NPU, product pages) over 32 "
                                   "tiles at about 1.5 GHz is about 512 MACs per cycle",
                                   true};
  p.clock = {1.5, "GHz", "assumed: AMD states no NPU clock (see the INT8 rate)", true};
  return p;
}

DeviceProfile make(std::string name, std::string arch, int columns) {
  DeviceProfile d;
  d.name = std::move(name);
  d.arch = std::move(arch);
  d.columns = columns;
  d.performance = d.arch == "aie2p" ? aie2p_performance() : aie_ml_performance();
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
