// The pto-runtime driver of HTP's PTO bindings (docs/backends/pto.md §8). This file is not compiled into
// HTP: the binding compiles it at run time against the user's pto-runtime checkout (PTO_RUNTIME_ROOT,
// hw-native-sys/simpler 6ebaf7715) together with that checkout's host worker sources (ChipWorker and its
// logger), and dlopens the result. It is the one place that calls the runtime's host C++ API:
//   ChipWorker::init / register_callable / run / unregister_callable / finalize   (src/common/worker)
//   make_callable -> CoreCallable, ChipCallable                                    (task_interface/callable.h)
//   ChipStorageTaskArgs, make_tensor_external, DataType, ArgDirection, CallConfig  (task_interface)
//   HostLogger                                                                     (src/common/log)
// The same code serves the a2a3sim platform (kernels are host shared objects) and the a2a3 device
// platform (kernels are ccec objects whose .text section is uploaded).
#include "htp_ptort_driver.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "callable.h"
#include "call_config.h"
#include "chip_run_lane.h"
#include "chip_worker.h"
#include "host_log.h"
#include "task_args.h"
#include "tensor.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<uint8_t> read_binary(const char *path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(std::string("cannot read ") + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

template <class T> T load_at(const std::vector<uint8_t> &b, size_t off, const std::string &what) {
  if (off + sizeof(T) > b.size()) throw std::runtime_error(what + ": truncated ELF file");
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

/// The .text section of a linked little-endian ELF64 object (the device loader jumps to its first byte).
std::vector<uint8_t> elf_text(const std::vector<uint8_t> &elf, const std::string &what) {
  if (elf.size() < 64 || elf[0] != 0x7f || elf[1] != 'E' || elf[2] != 'L' || elf[3] != 'F' || elf[4] != 2)
    throw std::runtime_error(what + " is not an ELF64 object");
  const auto shoff = load_at<uint64_t>(elf, 0x28, what);
  const auto shentsize = load_at<uint16_t>(elf, 0x3a, what);
  const auto shnum = load_at<uint16_t>(elf, 0x3c, what);
  const auto shstrndx = load_at<uint16_t>(elf, 0x3e, what);
  auto section = [&](uint16_t i, size_t field) { return shoff + size_t(i) * shentsize + field; };
  const auto names = load_at<uint64_t>(elf, section(shstrndx, 0x18), what);
  for (uint16_t i = 0; i < shnum; ++i) {
    const auto name = load_at<uint32_t>(elf, section(i, 0x00), what);
    const char *n = reinterpret_cast<const char *>(elf.data()) + names + name;
    if (names + name >= elf.size() || std::strcmp(n, ".text") != 0) continue;
    const auto off = load_at<uint64_t>(elf, section(i, 0x18), what);
    const auto size = load_at<uint64_t>(elf, section(i, 0x20), what);
    if (off + size > elf.size()) throw std::runtime_error(what + ": .text lies outside the file");
    return std::vector<uint8_t>(elf.begin() + off, elf.begin() + off + size);
  }
  throw std::runtime_error(what + " has no .text section");
}

ArgDirection direction(int32_t d) {
  switch (d) {
  case HTP_PTORT_IN: return ArgDirection::IN;
  case HTP_PTORT_OUT: return ArgDirection::OUT;
  case HTP_PTORT_INOUT: return ArgDirection::INOUT;
  }
  throw std::runtime_error("unknown argument direction " + std::to_string(d));
}

std::vector<ArgDirection> directions(const int32_t *sig, int32_t n) {
  std::vector<ArgDirection> out;
  for (int32_t i = 0; i < n; ++i) out.push_back(direction(sig[i]));
  return out;
}

/// DLPack (code, bits) as the runtime's DataType.
DataType data_type(const HtpPtortTensor &t, int index) {
  const int code = t.dl_code, bits = t.dl_bits;
  if (code == 2 && bits == 32) return DataType::FLOAT32; // kDLFloat
  if (code == 2 && bits == 16) return DataType::FLOAT16;
  if (code == 4 && bits == 16) return DataType::BFLOAT16; // kDLBfloat
  if (code == 0 && bits == 8) return DataType::INT8;      // kDLInt
  if (code == 0 && bits == 16) return DataType::INT16;
  if (code == 0 && bits == 32) return DataType::INT32;
  if (code == 0 && bits == 64) return DataType::INT64;
  if (code == 1 && bits == 8) return DataType::UINT8; // kDLUInt
  if (code == 1 && bits == 16) return DataType::UINT16;
  if (code == 1 && bits == 32) return DataType::UINT32;
  if (code == 1 && bits == 64) return DataType::UINT64;
  if (code == 6 && bits == 8) return DataType::BOOL; // kDLBool
  throw std::runtime_error("tensor argument " + std::to_string(index) + ": DLPack type (" + std::to_string(code) +
                           ", " + std::to_string(bits) + ") has no pto-runtime DataType");
}

/// The package as one ChipCallable: the orchestration with its kernels as children.
std::vector<uint8_t> chip_callable(const HtpPtortRequest &rq) {
  std::vector<int32_t> ids;
  std::vector<std::vector<uint8_t>> children;
  for (int32_t i = 0; i < rq.kernel_count; ++i) {
    const HtpPtortKernel &k = rq.kernels[i];
    std::vector<uint8_t> bin = read_binary(k.binary_path);
    if (rq.kernels_are_elf_objects) bin = elf_text(bin, k.binary_path);
    const std::vector<ArgDirection> sig = directions(k.signature, k.signature_count);
    ids.push_back(k.func_id);
    children.push_back(make_callable<CORE_MAX_TENSOR_ARGS>(sig.data(), static_cast<int32_t>(sig.size()),
                                                           bin.data(), static_cast<uint32_t>(bin.size())));
  }
  const std::vector<uint8_t> orch = read_binary(rq.orchestration_path);
  std::vector<ArgDirection> sig;
  for (int32_t i = 0; i < rq.tensor_count; ++i) sig.push_back(direction(rq.tensors[i].direction));
  return make_callable<CoreCallable, CHIP_MAX_TENSOR_ARGS, 1024>(
      sig.data(), static_cast<int32_t>(sig.size()), rq.function_name, orch.data(),
      static_cast<uint32_t>(orch.size()), ids.data(), children.data(), static_cast<int32_t>(children.size()),
      rq.config_name);
}

/// The entry's arguments: host tensors (staged by the runtime) then the scalars.
std::unique_ptr<ChipStorageTaskArgs> task_args(const HtpPtortRequest &rq) {
  auto args = std::make_unique<ChipStorageTaskArgs>();
  for (int32_t i = 0; i < rq.tensor_count; ++i) {
    const HtpPtortTensor &t = rq.tensors[i];
    if (t.ndim < 1 || t.ndim > HTP_PTORT_MAX_DIMS)
      throw std::runtime_error("tensor argument " + std::to_string(i) + " has " + std::to_string(t.ndim) +
                               " dimensions; pto-runtime tensors have 1 to 5");
    uint32_t shape[HTP_PTORT_MAX_DIMS] = {};
    for (int32_t d = 0; d < t.ndim; ++d) shape[d] = static_cast<uint32_t>(t.shape[d]);
    args->add_tensor(make_tensor_external(t.data, shape, static_cast<uint32_t>(t.ndim), data_type(t, i)));
  }
  for (int32_t i = 0; i < rq.scalar_count; ++i) args->add_scalar(rq.scalars[i]);
  return args;
}

const char *or_empty(const char *s) { return s ? s : ""; }

void run(const HtpPtortRequest &rq, HtpPtortResult &res) {
  if (rq.abi != HTP_PTORT_ABI)
    throw std::runtime_error("driver ABI " + std::to_string(HTP_PTORT_ABI) + " called with ABI " +
                             std::to_string(rq.abi));
  if (simpler::log::is_valid_level(rq.log_level))
    HostLogger::get_instance().set_level(static_cast<simpler::log::LogLevel>(rq.log_level));
  const std::vector<uint8_t> callable = chip_callable(rq);
  const std::unique_ptr<ChipStorageTaskArgs> args = task_args(rq);
  CallConfig config;
  config.aicpu_thread_num = rq.aicpu_thread_num;
  config.validate();

  ChipWorker worker;
  auto t = Clock::now();
  worker.init(or_empty(rq.host_library), or_empty(rq.aicpu_library), or_empty(rq.aicore_library),
              or_empty(rq.dispatcher_library), rq.device_id, nullptr, 0, or_empty(rq.sim_context_library));
  res.init_seconds = since(t);
  try {
    t = Clock::now();
    worker.register_callable(0, callable.data());
    res.register_seconds = since(t);
    t = Clock::now();
    worker.run(0, args.get(), config);
    res.run_seconds = since(t);
    worker.unregister_callable(0);
  } catch (...) {
    worker.finalize();
    throw;
  }
  worker.finalize();
}

} // namespace

extern "C" __attribute__((visibility("default"))) int htp_ptort_run(const HtpPtortRequest *request,
                                                                   HtpPtortResult *result) {
  result->error[0] = '\0';
  try {
    run(*request, *result);
    return 0;
  } catch (const std::exception &e) {
    std::snprintf(result->error, sizeof(result->error), "%s", e.what());
  } catch (...) {
    std::snprintf(result->error, sizeof(result->error), "an unknown exception");
  }
  return 1;
}
