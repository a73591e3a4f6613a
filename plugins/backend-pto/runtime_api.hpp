// The one place that spells pto-runtime's API (hw-native-sys/simpler, pinned below) and the file
// layout it consumes. The API was renamed several times in 2026; when it changes again, this file and
// runtime_api.cpp change, and the emitters do not.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "intrinsics.hpp"

namespace ptobe::rt {

inline constexpr const char *kRuntimeRevision = "6ebaf7715";  ///< hw-native-sys/simpler
inline constexpr const char *kIsaRevision = "cd4a3d3f";       ///< hw-native-sys/pto-isa
inline constexpr const char *kRuntimeVariant = "tensormap_and_ringbuffer";
inline constexpr const char *kEntrySymbol = "aicpu_orchestration_entry";
inline constexpr const char *kConfigSymbol = "aicpu_orchestration_config";
inline constexpr const char *kKernelEntry = "kernel_entry";
inline constexpr int kMaxFuncId = 1024;      ///< func_id < 1024
inline constexpr int kMaxTaskTensors = 32;   ///< tensors per task
inline constexpr int kMaxTaskScalars = 16;   ///< scalars per task
inline constexpr size_t kMaxSymbolLength = 64;

// ---- package layout (relative to codegen/pto/) ----
std::string kernel_path(CoreType core, const std::string &kernel);  ///< kernels/aiv/<k>.cpp
std::string orchestration_path(const std::string &entry);           ///< kernels/orchestration/<e>.cpp
/// The 64-bit FNV-1a hash of `text`: what a name shortened to fit a limit keeps of its whole.
uint64_t name_hash(std::string_view text);

// ---- kernel side ----
/// Includes, macros and `using namespace pto;` every kernel starts with.
std::string kernel_prologue();
/// `extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {`
std::string kernel_entry_open();
/// The body of a kernel whose task runs it several times (Kernel::repeat): a function of the run's
/// arguments, called by kernel_repeat_entry().
std::string kernel_run_open();
/// The entry of a repeated kernel: `repeat` runs of kernel_run_open()'s function, run r on tensors
/// [r * tensors, (r + 1) * tensors) and scalars repeat * tensors + [r * scalars, (r + 1) * scalars).
std::string kernel_repeat_entry(int64_t repeat, size_t tensors, size_t scalars);
/// Declarations of tensor argument `index` as `<ctype> *data` plus its row stride variable.
std::string kernel_tensor_arg(int index, const std::string &view, const std::string &data,
                              const std::string &row_stride, const std::string &ctype);
/// The element stride of dimension `dim` of a rank-`rank` tensor argument (for ranks above 2).
std::string kernel_tensor_stride(const std::string &view, const std::string &var, size_t dim, size_t rank);
/// A scalar argument `index` (raw 64-bit slot) converted to `ctype`.
std::string kernel_scalar_arg(int index, const std::string &var, const std::string &ctype, bool is_float);
/// The statement that drains every pipe before the kernel returns.
std::string kernel_epilogue();

// ---- orchestration side ----
std::string orchestration_prologue();
/// The exported config function returning expected_arg_count.
std::string orchestration_config(int expected_arg_count);
/// `extern "C" ... void aicpu_orchestration_entry(const ChipTaskArgs &args) {`
std::string orchestration_entry_open();
std::string orchestration_close();
/// `const ChipTensor &<var> = args.tensor(i).ref();`
std::string entry_tensor(int index, const std::string &var);
/// A scalar argument converted to `ctype`.
std::string entry_scalar(int index, const std::string &var, const std::string &ctype, bool is_float);
/// Dimension `dim` of tensor `tensor` as int64_t.
std::string tensor_dim(const std::string &tensor, int dim);
/// `ChipTensor <var> = <tensor>.view(shape, offset)` over uint32 arrays.
std::string tensor_view(const std::string &var, const std::string &tensor, const std::vector<std::string> &shape,
                        const std::vector<std::string> &offset, const std::string &indent);
/// A runtime-owned intermediate tensor named `var` (shape literals, dtype enumerator name).
std::string create_intermediate(const std::string &var, const std::vector<int64_t> &shape,
                                const std::string &runtime_dtype, const std::string &indent);
/// The same with dimensions as C++ expressions (a symbol a parameter binds: `p_R`).
std::string create_intermediate(const std::string &var, const std::vector<std::string> &shape,
                                const std::string &runtime_dtype, const std::string &indent);
/// The declaration of a task's argument list.
std::string task_args_decl(const std::string &var);
/// Adds tensor `tensor` to `args` with direction in/out/inout. A write ("out" or "inout") is added as
/// INOUT: pto-runtime orders an INOUT after the earlier writers of what it overlaps, an existing tensor
/// added with add_output (OUTPUT_EXISTING) after nothing.
std::string task_add_tensor(const std::string &args, const std::string &dir, const std::string &tensor);

// ---- write-after-read ordering ----
// pto-runtime orders no write after earlier tasks that only read (add_input) what it overwrites. For a
// tensor that tasks both read and write, the orchestration keeps the pending readers (task id and the box
// they read, HtpReaders in the prologue); a writer depends explicitly (set_dependencies) on those its box
// overlaps. A reader that finds the list full is added as INOUT instead (then later writers wait for it
// through the runtime's own writer tracking).
inline constexpr int kMaxPendingReaders = 32;  ///< per tracked tensor
inline constexpr size_t kMaxBoxRank = 8;
/// HtpBox, HtpReaders and their functions (after orchestration_prologue, where tracking is used).
std::string readers_helpers();
/// Declares the pending readers of tensor `tensor`, named `var`.
std::string readers_decl(const std::string &var, const std::string &indent);
/// `const HtpBox <var> = ...;`: the box offset/shape of a task argument (empty: the whole tensor).
std::string box_decl(const std::string &var, const std::vector<std::string> &offset,
                     const std::vector<std::string> &shape, const std::string &indent);
/// Declares the explicit dependency list `deps` of a task (room for `trackers` trackers' readers).
std::string deps_decl(const std::string &deps, size_t trackers, const std::string &indent);
/// Appends to `deps` the pending readers of `readers` that `box` overlaps; forgets those it covers.
std::string deps_add_readers(const std::string &deps, const std::string &readers, const std::string &box,
                             const std::string &indent);
/// Gives `args` the explicit dependencies `deps`.
std::string set_dependencies(const std::string &args, const std::string &deps, const std::string &indent);
/// Adds a read of a tracked tensor: `add_input` if `readers` has room (the flag `tracked` says so), else
/// `add_inout`.
std::string task_add_tracked_read(const std::string &args, const std::string &tensor, const std::string &readers,
                                  const std::string &tracked, const std::string &indent);
/// After the submit: records the read as pending in `readers` (if `tracked`).
std::string record_read(const std::string &readers, const std::string &tracked, const std::string &outs,
                        const std::string &box, const std::string &indent);
/// Adds a scalar (converted to 64 bits from `ctype`).
std::string task_add_scalar(const std::string &args, const std::string &value, const std::string &ctype,
                            bool is_float);
/// Submits `args` to the core type's queue with func_id; keeps the outputs in `outs`.
std::string submit(CoreType core, int func_id, const std::string &args, const std::string &outs);
/// A dispatch key / stream hint for the simulator (absent from the real runtime: guarded).
std::string sim_hint(const std::string &args, const std::string &key, const std::string &stream,
                     const std::string &indent);
/// Reads element `index` of integer tensor `tensor` (parameter `name`) as int64_t (waits for its writers);
/// an index outside the tensor stops the run naming `where` (the construct reading it), `name`, the index and
/// the extent.
std::string read_element(const std::string &where, const std::string &tensor, const std::string &name,
                         const std::string &ctype, const std::vector<std::string> &index);
/// The statement that checks CSR row `row` (`lo` = indptr[row], `hi` = indptr[row + 1], `nnz` indices);
/// `where` is the construct's source location for the message.
std::string check_csr_row(const std::string &where, const std::string &indptr, const std::string &row,
                          const std::string &lo, const std::string &hi, const std::string &nnz);
/// The statement that checks a ragged row length `len` = lengths[row] (not negative).
std::string check_length(const std::string &where, const std::string &lengths, const std::string &row,
                         const std::string &len);
/// The statement that checks a view of tensor variable `var` whose offsets depend on runtime data: each
/// offset >= 0 and offset + extent <= the dimension, else the run stops naming `where` (the launch's source
/// location), the tensor, its use ("kernel 'k', parameter 'p'"), the dimension, the range and the extent.
std::string check_view(const std::string &where, const std::string &tensor, const std::string &use,
                       const std::string &var, const std::vector<std::string> &offset,
                       const std::vector<std::string> &shape);
/// Opens/closes a scope whose intermediates are freed at its end.
std::string scope_open();

}  // namespace ptobe::rt
