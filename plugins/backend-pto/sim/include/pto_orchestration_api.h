// HTP PTO CPU simulator: the orchestration API of pto-runtime 6ebaf7715 (tensormap_and_ringbuffer
// orchestration/pto_orchestration_api.h names and signatures; independent implementation, subset listed in
// docs/backends/pto-sim.md).
//
// As in pto-runtime, the orchestration shared object has no link-time dependency on the runtime: every call
// goes through the PTO2RuntimeOps table of the PTO2Runtime that the runtime binds to the calling thread with
// the exported `framework_bind_runtime` before it calls the entry.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "data_type.h"
#include "pto_task_id.h"
#include "tensor.h"

/// Defined by the simulator's headers only: guards simulator-only hints in emitted code.
#define HTP_PTOSIM 1

constexpr int32_t MAX_TENSOR_ARGS = 32;
constexpr int32_t MAX_SCALAR_ARGS = 16;
constexpr int32_t CHIP_MAX_TENSOR_ARGS = 64;
constexpr int32_t CHIP_MAX_SCALAR_ARGS = 64;
inline constexpr int32_t INVALID_KERNEL_ID = -1;
/// Error code for rt_report_fatal on malformed arguments.
constexpr int32_t PTO2_ERROR_INVALID_ARGS = 1;

enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

/// Kernels of one task: an AIC kernel or an AIV kernel (MIX tasks are not simulated).
struct MixedKernels {
  int32_t aic_kernel_id{INVALID_KERNEL_ID};
  int32_t aiv0_kernel_id{INVALID_KERNEL_ID};
  int32_t aiv1_kernel_id{INVALID_KERNEL_ID};
};

/// A tensor the runtime allocates for an OUTPUT argument (zero-filled unless set_initial_value).
class alignas(64) TensorCreateInfo {
public:
  TensorCreateInfo(const uint32_t shapes_in[], uint32_t ndims_in, DataType dtype_in = DataType::FLOAT32,
                   bool manual_dep_in = false)
      : ndims(ndims_in), dtype(dtype_in), manual_dep(manual_dep_in) {
    if (ndims_in == 0 || ndims_in > MAX_TENSOR_DIMS)
      chip_tensor_fail("TensorCreateInfo: ndims must be 1..5");
    for (uint32_t i = 0; i < ndims_in; ++i)
      shapes[i] = shapes_in[i];
  }
  TensorCreateInfo() = default;

  template <typename T = uint64_t> void set_initial_value(T value) {
    has_initial_value = true;
    initial_value = to_u64(value);
  }
  uint64_t buffer_size_bytes() const {
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims; ++i)
      n *= shapes[i];
    return n * get_element_size(dtype);
  }

  uint64_t initial_value{0};
  bool has_initial_value{false};
  uint32_t ndims{0};
  DataType dtype{DataType::FLOAT32};
  bool manual_dep{false};
  uint32_t shapes[MAX_TENSOR_DIMS]{};
};

/// One tensor slot of an argument list: a ChipTensor* or (OUTPUT) a TensorCreateInfo*.
class TensorRef {
public:
  TensorRef() = default;
  TensorRef(const TensorRef &) = delete;
  TensorRef &operator=(const TensorRef &) = delete;
  TensorRef &operator=(const ChipTensor *p) {
    ptr_ = p;
    return *this;
  }
  TensorRef &operator=(const TensorCreateInfo *ci) {
    ptr_ = ci;
    return *this;
  }
  const ChipTensor &ref() const { return *static_cast<const ChipTensor *>(ptr_); }
  const TensorCreateInfo &create_info() const { return *static_cast<const TensorCreateInfo *>(ptr_); }
  bool refers_to(const void *p) const { return ptr_ == p; }

private:
  const void *ptr_ = nullptr;
};

/// The tensors a submit created (OUTPUT arguments, in add_output order). Keep it in a named variable.
class TaskOutputTensors {
public:
  bool empty() const { return count_ == 0; }
  uint32_t size() const { return count_; }
  const ChipTensor &get_ref(uint32_t index) const & {
    if (index >= count_) chip_tensor_fail("TaskOutputTensors::get_ref: index out of range");
    return *tensors_[index];
  }
  const ChipTensor &get_ref(uint32_t index) const && = delete;
  void materialize_output(const ChipTensor &t) { tensors_[count_++] = &t; }
  void set_task_id(PTO2TaskId id) { task_id_ = id; }
  PTO2TaskId task_id() const { return task_id_; }

private:
  PTO2TaskId task_id_ = PTO2TaskId::invalid();
  uint32_t count_ = 0;
  const ChipTensor *tensors_[MAX_TENSOR_ARGS] = {};
};

/// Argument list of a task: tensors (with directions) first, then 64-bit scalars.
template <size_t MaxT, size_t MaxS> struct Arg {
  Arg() = default;
  Arg(const Arg &) = delete;
  Arg &operator=(const Arg &) = delete;

  bool has_error{false};
  const char *error_msg{nullptr};
  /// Simulator-only dispatch hints (htp_ptosim_hint): key for affinity/hash, stream (-1: none).
  int64_t htp_key{-1};
  int32_t htp_stream{-1};

  const TensorRef &tensor(int32_t i) const { return tensors_[i]; }
  TensorArgType tag(int32_t i) const { return tags_[i]; }
  uint64_t scalar(int32_t i) const { return scalars_[i]; }
  const uint64_t *scalar_data() const { return scalars_; }
  int32_t tensor_count() const { return tensor_count_; }
  int32_t scalar_count() const { return scalar_count_; }
  uint32_t explicit_dep_count() const { return explicit_dep_count_; }
  PTO2TaskId explicit_dep(uint32_t i) const { return explicit_deps_[i]; }

  template <typename... A> void add_input(A &&...args) {
    static_assert((std::is_lvalue_reference_v<A> && ...),
                  "temporaries are not allowed: add_* stores pointers");
    add_tensors<false>(TensorArgType::INPUT, args...);
  }
  template <typename... A> void add_inout(A &&...args) {
    static_assert((std::is_lvalue_reference_v<A> && ...),
                  "temporaries are not allowed: add_* stores pointers");
    add_tensors<false>(TensorArgType::INOUT, args...);
  }
  template <typename... A> void add_no_dep(A &&...args) {
    static_assert((std::is_lvalue_reference_v<A> && ...),
                  "temporaries are not allowed: add_* stores pointers");
    add_tensors<false>(TensorArgType::NO_DEP, args...);
  }
  template <typename... A> void add_output(A &&...args) {
    static_assert((std::is_lvalue_reference_v<A> && ...),
                  "temporaries are not allowed: add_* stores pointers");
    constexpr bool creates = (std::is_same_v<std::decay_t<A>, TensorCreateInfo> && ...);
    add_tensors<true>(creates ? TensorArgType::OUTPUT : TensorArgType::OUTPUT_EXISTING, args...);
  }

  template <typename... A> void add_scalar(A &&...values) {
    static_assert(sizeof...(A) >= 1, "add_scalar: at least one argument required");
    static_assert(((std::is_arithmetic_v<std::decay_t<A>> || std::is_enum_v<std::decay_t<A>>)&&...),
                  "add_scalar: all types must be arithmetic or enum");
    if (scalar_count_ + sizeof...(A) > MaxS) return set_error("Too many scalar args");
    ((scalars_[scalar_count_++] = to_u64(values)), ...);
  }
  void add_scalars(const uint64_t *values, int count) {
    if (count < 0 || scalar_count_ + count > static_cast<int32_t>(MaxS))
      return set_error("Too many scalar args");
    for (int i = 0; i < count; ++i)
      scalars_[scalar_count_++] = values[i];
  }
  void set_dependencies(const PTO2TaskId *deps, uint32_t count) {
    if (count != 0 && deps == nullptr)
      return set_error("set_dependencies: deps must not be null when count > 0");
    explicit_deps_ = count ? deps : nullptr;
    explicit_dep_count_ = count;
  }
  void set_error(const char *msg) {
    if (!has_error) {
      has_error = true;
      error_msg = msg;
    }
  }
  void clear() {
    tensor_count_ = scalar_count_ = 0;
    explicit_deps_ = nullptr;
    explicit_dep_count_ = 0;
    htp_key = -1;
    htp_stream = -1;
  }
  void reset() {
    clear();
    has_error = false;
    error_msg = nullptr;
  }

private:
  template <bool is_output, typename... A> void add_tensors(TensorArgType tag, A &...args) {
    static_assert(sizeof...(A) >= 1, "at least one argument required");
    if constexpr (is_output) {
      static_assert(
          (std::is_same_v<std::decay_t<A>, ChipTensor> && ...) ||
              (std::is_same_v<std::decay_t<A>, TensorCreateInfo> && ...),
          "add_output: all arguments must be the same type (all ChipTensor or all TensorCreateInfo)");
    } else {
      static_assert((std::is_same_v<std::decay_t<A>, ChipTensor> && ...), "all arguments must be ChipTensor");
    }
    if (scalar_count_ != 0) return set_error("add_input/add_output/add_inout called after add_scalar");
    if (tensor_count_ + sizeof...(A) > MaxT) return set_error("Too many tensor args");
    ((tensors_[tensor_count_] = &args, tags_[tensor_count_] = tag, ++tensor_count_), ...);
  }

  TensorRef tensors_[MaxT];
  TensorArgType tags_[MaxT] = {};
  uint64_t scalars_[MaxS] = {};
  int32_t tensor_count_{0};
  int32_t scalar_count_{0};
  const PTO2TaskId *explicit_deps_{nullptr};
  uint32_t explicit_dep_count_{0};
};

using CoreTaskArgs = Arg<MAX_TENSOR_ARGS, MAX_SCALAR_ARGS>;

/// The orchestration entry's arguments: the run's tensors (as inputs), then its scalars.
struct ChipTaskArgs : Arg<CHIP_MAX_TENSOR_ARGS, CHIP_MAX_SCALAR_ARGS> {};

/// Sets simulator-only dispatch hints of the next submit of `args` (guard with #ifdef HTP_PTOSIM).
template <size_t MaxT, size_t MaxS>
inline void htp_ptosim_hint(Arg<MaxT, MaxS> &args, int64_t key, int32_t stream = -1) {
  args.htp_key = key;
  args.htp_stream = stream;
}

typedef struct PTO2Runtime PTO2Runtime;

/// Runtime operations, filled in by the runtime and called through the inline wrappers below.
typedef struct PTO2RuntimeOps {
  TaskOutputTensors (*submit_task)(PTO2Runtime *rt, const MixedKernels &mixed_kernels,
                                   const CoreTaskArgs &args);
  void (*scope_begin)(PTO2Runtime *rt);
  void (*scope_end)(PTO2Runtime *rt);
  void (*orchestration_done)(PTO2Runtime *rt);
  bool (*is_fatal)(PTO2Runtime *rt);
  void (*report_fatal)(PTO2Runtime *rt, int32_t error_code, const char *func, const char *fmt, ...);
  void (*log_error)(const char *func, const char *fmt, ...);
  void (*log_warn)(const char *func, const char *fmt, ...);
  void (*log_timing)(const char *func, const char *fmt, ...);
  void (*log_info)(const char *func, const char *fmt, ...);
  void (*log_debug)(const char *func, const char *fmt, ...);
  uint64_t (*get_tensor_data)(PTO2Runtime *rt, const ChipTensor &tensor, uint32_t ndims,
                              const uint32_t indices[]);
  void (*set_tensor_data)(PTO2Runtime *rt, const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[],
                          uint64_t value);
  TaskOutputTensors (*alloc_tensors)(PTO2Runtime *rt, const CoreTaskArgs &args);
  TaskOutputTensors (*submit_dummy_task)(PTO2Runtime *rt, const CoreTaskArgs &args);
  int32_t (*available_cluster_count)(PTO2Runtime *rt);
  int32_t (*available_aiv_count)(PTO2Runtime *rt);
} PTO2RuntimeOps;

/// The runtime as the orchestration sees it: the ops table first.
struct PTO2Runtime {
  const PTO2RuntimeOps *ops;
  PTO2ScopeMode pending_scope_mode;
};

#ifndef HTP_PTOSIM_RUNTIME_IMPL
/// The runtime bound to this thread of this orchestration object.
inline thread_local PTO2Runtime *htp_ptosim_bound_runtime = nullptr;
extern "C" __attribute__((weak, visibility("default"))) PTO2Runtime *framework_current_runtime(void) {
  return htp_ptosim_bound_runtime;
}
extern "C" __attribute__((weak, visibility("default"))) void framework_bind_runtime(PTO2Runtime *rt) {
  htp_ptosim_bound_runtime = rt;
}
#else
extern "C" PTO2Runtime *framework_current_runtime(void);
#endif

static inline PTO2Runtime *current_runtime() {
  return framework_current_runtime();
}

static inline TaskOutputTensors rt_submit_task(const MixedKernels &mixed_kernels, const CoreTaskArgs &args) {
  PTO2Runtime *rt = current_runtime();
  if (rt->ops->is_fatal(rt)) return TaskOutputTensors{};
  return rt->ops->submit_task(rt, mixed_kernels, args);
}
static inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs &args) {
  MixedKernels mk;
  mk.aic_kernel_id = kernel_id;
  return rt_submit_task(mk, args);
}
static inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs &args) {
  MixedKernels mk;
  mk.aiv0_kernel_id = kernel_id;
  return rt_submit_task(mk, args);
}
static inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs &args) {
  PTO2Runtime *rt = current_runtime();
  if (rt->ops->is_fatal(rt)) return TaskOutputTensors{};
  return rt->ops->submit_dummy_task(rt, args);
}
static inline TaskOutputTensors alloc_tensors(const CoreTaskArgs &args) {
  PTO2Runtime *rt = current_runtime();
  if (rt->ops->is_fatal(rt)) return TaskOutputTensors{};
  return rt->ops->alloc_tensors(rt, args);
}
template <typename... CIs> static inline TaskOutputTensors alloc_tensors(const CIs &...cis) {
  static_assert(sizeof...(cis) > 0, "alloc_tensors requires at least one TensorCreateInfo");
  static_assert((std::is_same_v<std::decay_t<CIs>, TensorCreateInfo> && ...),
                "alloc_tensors only accepts TensorCreateInfo arguments");
  CoreTaskArgs args;
  (args.add_output(const_cast<TensorCreateInfo &>(cis)), ...);
  return alloc_tensors(args);
}
static inline void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
  PTO2Runtime *rt = current_runtime();
  if (rt->ops->is_fatal(rt)) return;
  rt->pending_scope_mode = mode;
  rt->ops->scope_begin(rt);
}
static inline void rt_scope_end() {
  PTO2Runtime *rt = current_runtime();
  if (rt->ops->is_fatal(rt)) return;
  rt->ops->scope_end(rt);
}
static inline void rt_orchestration_done() {
  PTO2Runtime *rt = current_runtime();
  rt->ops->orchestration_done(rt);
}
static inline int32_t rt_available_cluster_count() {
  PTO2Runtime *rt = current_runtime();
  return rt->ops->available_cluster_count(rt);
}
static inline int32_t rt_available_aiv_count() {
  PTO2Runtime *rt = current_runtime();
  return rt->ops->available_aiv_count(rt);
}
static inline bool rt_is_fatal() {
  PTO2Runtime *rt = current_runtime();
  return rt->ops->is_fatal(rt);
}

#define rt_report_fatal(code, fmt, ...)                                                                      \
  do {                                                                                                       \
    PTO2Runtime *_rt = current_runtime();                                                                    \
    _rt->ops->report_fatal(_rt, (code), __FUNCTION__, (fmt), ##__VA_ARGS__);                                 \
  } while (0)

#define LOG_ERROR(fmt, ...) current_runtime()->ops->log_error(__FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_WARN(fmt, ...) current_runtime()->ops->log_warn(__FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_TIMING(fmt, ...) current_runtime()->ops->log_timing(__FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_INFO(fmt, ...) current_runtime()->ops->log_info(__FUNCTION__, fmt, ##__VA_ARGS__)
#define LOG_DEBUG(fmt, ...) current_runtime()->ops->log_debug(__FUNCTION__, fmt, ##__VA_ARGS__)

/// Reads element `indices` of a tensor, after its pending writers finish.
template <typename T = uint64_t>
static inline T get_tensor_data(const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[]) {
  PTO2Runtime *rt = current_runtime();
  if (rt->ops->is_fatal(rt)) return from_u64<T>(0);
  return from_u64<T>(rt->ops->get_tensor_data(rt, tensor, ndims, indices));
}
/// Writes element `indices` of a tensor, after its pending readers and writers finish.
template <typename T = uint64_t>
static inline void set_tensor_data(const ChipTensor &tensor, uint32_t ndims, const uint32_t indices[],
                                   T value) {
  PTO2Runtime *rt = current_runtime();
  if (rt->ops->is_fatal(rt)) return;
  rt->ops->set_tensor_data(rt, tensor, ndims, indices, to_u64(value));
}

/// RAII scope: runtime-created tensors of the scope are released at its end.
class PTO2ScopeGuard {
public:
  explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) : rt_(current_runtime()) {
    if (!rt_->ops->is_fatal(rt_)) {
      rt_->pending_scope_mode = mode;
      rt_->ops->scope_begin(rt_);
    }
  }
  ~PTO2ScopeGuard() {
    if (!rt_->ops->is_fatal(rt_)) rt_->ops->scope_end(rt_);
  }
  PTO2ScopeGuard(const PTO2ScopeGuard &) = delete;
  PTO2ScopeGuard &operator=(const PTO2ScopeGuard &) = delete;

private:
  PTO2Runtime *rt_;
};

#define _PTO2_CONCATENATE_IMPL(x, y) x##y
#define _PTO2_CONCATENATE(x, y) _PTO2_CONCATENATE_IMPL(x, y)
#define PTO2_SCOPE_GUARD(...)                                                                                \
  [[maybe_unused]] PTO2ScopeGuard _PTO2_CONCATENATE(scope_guard_, __COUNTER__) {                             \
    __VA_ARGS__                                                                                              \
  }
#define PTO2_SCOPE(...) if (PTO2ScopeGuard _PTO2_CONCATENATE(scope_guard_, __COUNTER__){__VA_ARGS__}; true)

#ifndef PTO2_ORCHESTRATION_CONFIG_DEFINED
#define PTO2_ORCHESTRATION_CONFIG_DEFINED
/// Returned by the exported aicpu_orchestration_config.
struct PTO2OrchestrationConfig {
  int expected_arg_count;
};
#endif
