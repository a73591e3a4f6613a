// aie-sim overhead: a core streaming `n` objects of 256 f32 from a shim FIFO to a shim FIFO through a
// copy kernel; reported per object (two FIFO hand-offs on each side, one kernel call, the DMA patterns).
#include <benchmark/benchmark.h>

#include <cstring>

#include "sim/simulator.hpp"

using namespace htp::aie;

namespace {

void copy_kernel(void **args) { std::memcpy(args[1], args[0], 256 * sizeof(float)); }

Design stream_design(int64_t n) {
  Design d;
  d.entry = "stream";
  d.kind = "kernel";
  d.device = "npu1";
  d.params = {{"X", {n, 256}, "f32", "in"}, {"Y", {n, 256}, "f32", "out"}};
  d.kernels = {{"copy", "kernels/copy.cc", "copy.o", {{true, {256}, "f32"}, {true, {256}, "f32"}}, 0}};
  d.fifos = {{"in_X", {0, 0}, {{0, 2}}, {2}, {256}, "f32", {}, nullptr},
             {"out_Y", {0, 2}, {{0, 0}}, {2}, {256}, "f32", {}, nullptr}};
  CoreOp loop;
  loop.kind = CoreOp::Kind::Loop;
  loop.trip = n;
  CoreOp call;
  call.kind = CoreOp::Kind::Call;
  call.callee = "copy";
  call.args = {CallArg{CallArg::Kind::Fifo, "in_X"}, CallArg{CallArg::Kind::Fifo, "out_Y"}};
  loop.body = {{CoreOp::Kind::Acquire, "in_X", "Consume", 1}, {CoreOp::Kind::Acquire, "out_Y", "Produce", 1}, call,
               {CoreOp::Kind::Release, "in_X", "Consume", 1}, {CoreOp::Kind::Release, "out_Y", "Produce", 1}};
  d.cores = {{"copy", {0, 2}, 1024, {loop}, nullptr}};
  DmaOp in, out, wait;
  in.param = "X";
  in.fifo = "in_X";
  in.sizes = {1, 1, n, 256};
  in.strides = {0, 0, 256, 1};
  out = in;
  out.param = "Y";
  out.fifo = "out_Y";
  out.id = 1;
  out.issue_token = true;
  wait.kind = DmaOp::Kind::Wait;
  wait.fifo = "out_Y";
  d.sequence = {in, out, wait};
  return d;
}

void BM_AieSimStreamObject(benchmark::State &state) {
  const int64_t n = state.range(0);
  Design d = stream_design(n);
  std::vector<float> x(static_cast<size_t>(n * 256), 1.0f), y(x.size());
  std::map<std::string, sim::KernelEntry> kernels{{"copy", &copy_kernel}};
  std::map<std::string, sim::HostBuffer> buffers{{"X", {x.data(), x.size() * 4}}, {"Y", {y.data(), y.size() * 4}}};
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(d, kernels, buffers));
  state.counters["seconds_per_object"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_AieSimStreamObject)->Arg(64)->Arg(1024)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
