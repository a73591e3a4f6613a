#include "runtime_api.hpp"

#include <algorithm>
#include <cstdio>

namespace ptobe::rt {

namespace {
std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}
std::string u32_list(const std::vector<std::string> &v) {
  std::vector<std::string> cast;
  for (const auto &e : v) cast.push_back("static_cast<uint32_t>(" + e + ")");
  return join(cast);
}
}  // namespace

std::string kernel_path(CoreType core, const std::string &kernel) {
  return std::string("kernels/") + (core == CoreType::Aic ? "aic/" : "aiv/") + kernel + ".cpp";
}

uint64_t name_hash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string orchestration_path(const std::string &entry) {
  // A file name has at most 255 bytes: a longer entry name (Python's have no limit) keeps its first 200
  // characters and a hash of the whole name.
  std::string file = entry;
  if (file.size() > 200) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(name_hash(entry)));
    file = entry.substr(0, 200) + "_" + hex;
  }
  return "kernels/orchestration/" + file + ".cpp";
}

std::string kernel_prologue() {
  return "#include <cstdint>\n"
         "#include <pto/pto-inst.hpp>\n"
         "\n"
         "#include \"tensor.h\"\n"
         "\n"
         "using namespace pto;\n"
         "\n"
         "#include \"pipe_sync.h\"\n"
         "\n"
         "#ifndef __gm__\n#define __gm__\n#endif\n"
         "#ifndef __aicore__\n#define __aicore__ [aicore]\n#endif\n"
         "\n"
         "// On HTP's simulator a tile moved at an offset known only at run time is checked against the view the\n"
         "// task was given (a runtime error naming the kernel's line, not a read or write past the tensor).\n"
         "#ifdef HTP_PTOSIM\n"
         "#define HTP_CHECK_VIEW(view, where, tensor, rank, dim, offset, extent)                                     \\\n"
         "    do {                                                                                                  \\\n"
         "        const int64_t htp_o = (offset);                                                                   \\\n"
         "        if ((view)->ndims >= (rank)) {                                                                    \\\n"
         "            const int64_t htp_e = static_cast<int64_t>((view)->shapes[(view)->ndims - (rank) + (dim)]);     \\\n"
         "            if (htp_o < 0 || htp_o + (extent) > htp_e)                                                    \\\n"
         "                sim::fail(\"%s: runtime data: the tile of '%s' covers [%lld, %lld) in dimension %d, outside \"  \\\n"
         "                          \"its extent %lld\", where, tensor, static_cast<long long>(htp_o),                \\\n"
         "                          static_cast<long long>(htp_o + (extent)), static_cast<int>(dim),               \\\n"
         "                          static_cast<long long>(htp_e));                                                 \\\n"
         "        }                                                                                                 \\\n"
         "    } while (0)\n"
         "// An accumulator reset by full() is zeroed by the next matmul, not before: one stored with no matmul\n"
         "// since (a loop that ran 0 times) would write what L0C last held.\n"
         "#define HTP_CHECK_ACC_WRITTEN(written, where, reg)                                                        \\\n"
         "    do {                                                                                                  \\\n"
         "        if (!(written))                                                                                   \\\n"
         "            sim::fail(\"%s: runtime data: accumulator '%s' is stored with no matmul since its full() (a \"  \\\n"
         "                      \"loop of 0 iterations?): the cube core has no fill to write its zeros\", where, reg); \\\n"
         "    } while (0)\n"
         "#else\n"
         "#define HTP_CHECK_VIEW(view, where, tensor, rank, dim, offset, extent) ((void)0)\n"
         "#define HTP_CHECK_ACC_WRITTEN(written, where, reg) ((void)0)\n"
         "#endif\n";
}

std::string kernel_entry_open() {
  return std::string("extern \"C\" __aicore__ void ") + kKernelEntry + "(__gm__ int64_t *args) {\n";
}

std::string kernel_run_open() { return "static __aicore__ inline void htp_kernel_run(const int64_t *args) {\n"; }

std::string kernel_repeat_entry(int64_t repeat, size_t tensors, size_t scalars) {
  const std::string f = std::to_string(repeat), t = std::to_string(tensors), s = std::to_string(scalars);
  return "\n// schedule tile(axis, " + f + "): one task runs the body " + f + " times, on " + f +
         " consecutive iterations.\n" + std::string("extern \"C\" __aicore__ void ") + kKernelEntry +
         "(__gm__ int64_t *args) {\n"
         "    for (int64_t run = 0; run < " + f + "; ++run) {\n"
         "        int64_t run_args[" + std::to_string(std::max<size_t>(1, tensors + scalars)) + "];\n"
         "        for (int64_t i = 0; i < " + t + "; ++i) run_args[i] = args[run * " + t + " + i];\n"
         "        for (int64_t i = 0; i < " + s + "; ++i) run_args[" + t + " + i] = args[" + f + " * " + t +
         " + run * " + s + " + i];\n"
         "        htp_kernel_run(run_args);\n"
         "    }\n"
         "}\n";
}

std::string kernel_tensor_arg(int index, const std::string &view, const std::string &data,
                              const std::string &row_stride, const std::string &ctype) {
  const std::string i = std::to_string(index);
  return "    __gm__ ChipTensor *" + view + " = reinterpret_cast<__gm__ ChipTensor *>(args[" + i + "]);\n" +
         "    __gm__ " + ctype + " *" + data + " = reinterpret_cast<__gm__ " + ctype + " *>(" + view +
         "->buffer.addr) + " + view + "->start_offset;\n" +
         "    const int64_t " + row_stride + " = " + view + "->ndims >= 2 ? static_cast<int64_t>(" + view +
         "->strides[" + view + "->ndims - 2]) : static_cast<int64_t>(" + view + "->shapes[0]);\n";
}

std::string kernel_tensor_stride(const std::string &view, const std::string &var, size_t dim, size_t rank) {
  return "    const int64_t " + var + " = static_cast<int64_t>(" + view + "->strides[" + view + "->ndims - " +
         std::to_string(rank - dim) + "]);\n";
}

std::string kernel_scalar_arg(int index, const std::string &var, const std::string &ctype, bool is_float) {
  const std::string slot = "static_cast<uint64_t>(args[" + std::to_string(index) + "])";
  if (is_float) return "    const " + ctype + " " + var + " = static_cast<" + ctype + ">(from_u64<float>(" + slot + "));\n";
  return "    const " + ctype + " " + var + " = static_cast<" + ctype + ">(" + slot + ");\n";
}

std::string kernel_epilogue() { return "    pipe_sync();\n"; }

std::string orchestration_prologue() {
  return "#define HTP_HOST_CODE 1  // (scalar helpers check their divisors)\n"
         "#include <stdarg.h>\n"
         "#include <stddef.h>\n"
         "#include <stdint.h>\n"
         "#include <stdio.h>\n"
         "\n"
         "#include <exception>\n"
         "#include <initializer_list>\n"
         "\n"
         "#include \"pto_orchestration_api.h\"\n"
         "\n"
         "// Runtime data (CSR indptr / indices, ragged lengths, predicates) is checked where it is read: a\n"
         "// value that would make the orchestration read or expand outside a tensor stops the run with a message\n"
         "// naming the construct, the tensor, the index and the value (the simulator reports it as a run error).\n"
         "struct HtpRunError : std::exception {\n"
         "    char text[1024];\n"
         "    const char *what() const noexcept override { return text; }\n"
         "};\n"
         "// The messages are formatted out of line (cold), so that a check is a compare and a call where it is used.\n"
         "#define HTP_COLD [[noreturn]] __attribute__((noinline, cold)) static void\n"
         "HTP_COLD htp_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));\n"
         "HTP_COLD htp_fail(const char *format, ...) {\n"
         "    HtpRunError error;\n"
         "    va_list args;\n"
         "    va_start(args, format);\n"
         "    vsnprintf(error.text, sizeof error.text, format, args);\n"
         "    va_end(args);\n"
         "    throw error;\n"
         "}\n"
         "HTP_COLD htp_fail_narrow(int64_t v, int64_t lo, int64_t hi, const char *what) {\n"
         "    htp_fail(\"%s: runtime data: %lld is outside [%lld, %lld]\", what, (long long)v, (long long)lo, (long long)hi);\n"
         "}\n"
         "// A value given to an integer parameter narrower than 64 bits: checked, not wrapped.\n"
         "static inline int64_t htp_narrow(int64_t v, int64_t lo, int64_t hi, const char *what) {\n"
         "    if (v < lo || v > hi) htp_fail_narrow(v, lo, hi, what);\n"
         "    return v;\n"
         "}\n"
         "HTP_COLD htp_fail_index(const char *where, int64_t v, uint32_t n, const char *name, int64_t extent) {\n"
         "    htp_fail(\"%s: runtime data: index %lld of dimension %u of '%s' is outside its extent %lld\", where, (long long)v, n,\n"
         "             name, (long long)extent);\n"
         "}\n"
         "HTP_COLD htp_fail_csr_row(const char *where, const char *indptr, int64_t row, int64_t lo, int64_t hi, int64_t nnz) {\n"
         "    htp_fail(\"%s: runtime data: '%s' is not a CSR row pointer: %s[%lld] = %lld, %s[%lld] = %lld (need 0 <= %lld <= %lld\"\n"
         "             \" <= %lld, the number of indices)\", where, indptr, indptr, (long long)row, (long long)lo, indptr,\n"
         "             (long long)(row + 1), (long long)hi, (long long)lo, (long long)hi, (long long)nnz);\n"
         "}\n"
         "HTP_COLD htp_fail_view(const char *where, const char *tensor, const char *use, int64_t lo, int64_t hi, uint32_t d,\n"
         "                       int64_t dim) {\n"
         "    htp_fail(\"%s: runtime data: the view of '%s' passed to %s covers [%lld, %lld) in dimension %u, outside its\"\n"
         "             \" extent %lld\", where, tensor, use, (long long)lo, (long long)hi, d, (long long)dim);\n"
         "}\n"
         "HTP_COLD htp_fail_length(const char *where, const char *lengths, int64_t row, int64_t len) {\n"
         "    htp_fail(\"%s: runtime data: %s[%lld] = %lld is a negative ragged length\", where, lengths, (long long)row,\n"
         "             (long long)len);\n"
         "}\n"
         "#undef HTP_COLD\n"
         "\n"
         "// Element `idx` of runtime tensor `name` (waits for the tasks that write it); an index outside it fails.\n"
         "// This, the view check and HtpReaders::write stay out of line: the entry calls them for every task, and\n"
         "// inlined there they made the orchestration take twice as long to compile.\n"
         "template <class T>\n"
         "__attribute__((noinline)) static int64_t htp_read(const ChipTensor &t, const char *where, const char *name,\n"
         "                                                  std::initializer_list<int64_t> idx) {\n"
         "    uint32_t at[5] = {0, 0, 0, 0, 0};\n"
         "    uint32_t n = 0;\n"
         "    for (int64_t v : idx) {\n"
         "        if (n >= t.ndims || n >= 5 || v < 0 || v >= static_cast<int64_t>(t.shapes[n]))\n"
         "            htp_fail_index(where, v, n, name, n < t.ndims ? t.shapes[n] : 0);\n"
         "        at[n++] = static_cast<uint32_t>(v);\n"
         "    }\n"
         "    return static_cast<int64_t>(get_tensor_data<T>(t, n, at));\n"
         "}\n"
         "\n"
         "// Row `row` of a CSR domain: 0 <= indptr[row] <= indptr[row + 1] <= the number of indices.\n"
         "static inline void htp_check_csr_row(const char *where, const char *indptr, int64_t row, int64_t lo, int64_t hi,\n"
         "                                     int64_t nnz) {\n"
         "    if (lo < 0 || lo > hi || hi > nnz) htp_fail_csr_row(where, indptr, row, lo, hi, nnz);\n"
         "}\n"
         "\n"
         "// A view whose offsets depend on runtime data (ragged rows, CSR selections, tensor reads such as a\n"
         "// block table) stays inside its tensor: 0 <= offset and offset + extent <= the dimension.\n"
         "__attribute__((noinline)) static void htp_check_view(const char *where, const char *tensor, const char *use,\n"
         "                                                   const ChipTensor &t, std::initializer_list<int64_t> offset,\n"
         "                                                   std::initializer_list<int64_t> shape) {\n"
         "    uint32_t d = 0;\n"
         "    const int64_t *extent = shape.begin();\n"
         "    for (int64_t o : offset) {\n"
         "        const int64_t dim = d < t.ndims ? static_cast<int64_t>(t.shapes[d]) : 0;\n"
         "        if (o < 0 || o + extent[d] > dim) htp_fail_view(where, tensor, use, o, o + extent[d], d, dim);\n"
         "        ++d;\n"
         "    }\n"
         "}\n"
         "\n"
         "// A ragged row length: lengths[row] >= 0 (an upper bound is the views' own check).\n"
         "static inline void htp_check_length(const char *where, const char *lengths, int64_t row, int64_t len) {\n"
         "    if (len < 0) htp_fail_length(where, lengths, row, len);\n"
         "}\n";
}

std::string readers_helpers() {
  return "// Write-after-read ordering: pto-runtime orders a task after the earlier writers (INOUT,\n"
         "// OUTPUT_EXISTING) of what it reads or writes with add_input/add_inout, never a write after earlier\n"
         "// tasks that only read. HtpReaders keeps the pending readers of one tensor (task and box); a writer\n"
         "// depends on those its box overlaps and forgets those it covers. n == 0: the whole tensor.\n"
         "struct HtpBox {\n"
         "    uint32_t n;\n"
         "    int64_t lo[" + std::to_string(kMaxBoxRank) + "];\n"
         "    int64_t hi[" + std::to_string(kMaxBoxRank) + "];\n"
         "};\n"
         "static inline bool htp_box_overlaps(const HtpBox &a, const HtpBox &b) {\n"
         "    for (uint32_t d = 0; d < a.n && d < b.n; ++d)\n"
         "        if (a.hi[d] <= b.lo[d] || b.hi[d] <= a.lo[d]) return false;\n"
         "    return true;\n"
         "}\n"
         "static inline bool htp_box_within(const HtpBox &inner, const HtpBox &outer) {\n"
         "    if (outer.n == 0) return true;\n"
         "    if (inner.n != outer.n) return false;\n"
         "    for (uint32_t d = 0; d < outer.n; ++d)\n"
         "        if (inner.lo[d] < outer.lo[d] || inner.hi[d] > outer.hi[d]) return false;\n"
         "    return true;\n"
         "}\n"
         "struct HtpReaders {\n"
         "    PTO2TaskId task[" + std::to_string(kMaxPendingReaders) + "];\n"
         "    HtpBox box[" + std::to_string(kMaxPendingReaders) + "];\n"
         "    uint32_t count = 0;\n"
         "    bool room() const { return count < " + std::to_string(kMaxPendingReaders) + "; }\n"
         "    void read(PTO2TaskId t, const HtpBox &b) {\n"
         "        task[count] = t;\n"
         "        box[count++] = b;\n"
         "    }\n"
         "    // Appends the readers `b` overlaps to deps[n...]; returns the new n.\n"
         "    __attribute__((noinline)) uint32_t write(const HtpBox &b, PTO2TaskId *deps, uint32_t n) {\n"
         "        uint32_t kept = 0;\n"
         "        for (uint32_t i = 0; i < count; ++i) {\n"
         "            if (htp_box_overlaps(box[i], b)) deps[n++] = task[i];\n"
         "            if (htp_box_within(box[i], b)) continue;\n"
         "            task[kept] = task[i];\n"
         "            box[kept++] = box[i];\n"
         "        }\n"
         "        count = kept;\n"
         "        return n;\n"
         "    }\n"
         "};\n";
}

std::string orchestration_config(int expected_arg_count) {
  return std::string("__attribute__((visibility(\"default\"))) PTO2OrchestrationConfig ") + kConfigSymbol +
         "(const ChipTaskArgs &args) {\n"
         "    (void)args;\n"
         "    return PTO2OrchestrationConfig{.expected_arg_count = " +
         std::to_string(expected_arg_count) + "};\n}\n";
}

std::string orchestration_entry_open() {
  return std::string("__attribute__((visibility(\"default\"))) void ") + kEntrySymbol + "(const ChipTaskArgs &args) {\n";
}

std::string orchestration_close() { return "}\n"; }

std::string entry_tensor(int index, const std::string &var) {
  return "    const ChipTensor &" + var + " = args.tensor(" + std::to_string(index) + ").ref();\n";
}

std::string entry_scalar(int index, const std::string &var, const std::string &ctype, bool is_float) {
  const std::string slot = "args.scalar(" + std::to_string(index) + ")";
  // (an f16 or bf16 scalar travels as an f32 and stays one here: the orchestration has no half types; the
  // kernels it passes it to convert it)
  if (is_float) {
    const std::string held = ctype == "double" ? "double" : "float";
    return "    const " + held + " " + var + " = from_u64<" + held + ">(" + slot + ");\n";
  }
  return "    const " + ctype + " " + var + " = static_cast<" + ctype + ">(" + slot + ");\n";
}

std::string tensor_dim(const std::string &tensor, int dim) {
  return "static_cast<int64_t>(" + tensor + ".shapes[" + std::to_string(dim) + "])";
}

std::string tensor_view(const std::string &var, const std::string &tensor, const std::vector<std::string> &shape,
                        const std::vector<std::string> &offset, const std::string &indent) {
  return indent + "const uint32_t " + var + "_shape[" + std::to_string(shape.size()) + "] = {" + u32_list(shape) +
         "};\n" + indent + "const uint32_t " + var + "_offset[" + std::to_string(offset.size()) + "] = {" +
         u32_list(offset) + "};\n" + indent + "ChipTensor " + var + " = " + tensor + ".view(" + var + "_shape, " +
         var + "_offset);\n";
}

std::string create_intermediate(const std::string &var, const std::vector<int64_t> &shape,
                                const std::string &runtime_dtype, const std::string &indent) {
  std::vector<std::string> dims;
  for (int64_t d : shape) dims.push_back(std::to_string(d));
  return create_intermediate(var, dims, runtime_dtype, indent);
}

std::string create_intermediate(const std::string &var, const std::vector<std::string> &shape,
                                const std::string &runtime_dtype, const std::string &indent) {
  std::vector<std::string> dims;
  for (const std::string &d : shape)
    dims.push_back(std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; })
                       ? d
                       : "static_cast<uint32_t>(" + d + ")");
  const std::string n = std::to_string(shape.size());
  return indent + "const uint32_t " + var + "_shape[" + n + "] = {" + join(dims) + "};\n" + indent +
         "TensorCreateInfo " + var + "_info(" + var + "_shape, " + n + ", DataType::" + runtime_dtype + ");\n" +
         indent + "TaskOutputTensors " + var + "_alloc = alloc_tensors(" + var + "_info);\n" + indent +
         "const ChipTensor &" + var + " = " + var + "_alloc.get_ref(0);\n";
}

std::string task_args_decl(const std::string &var) { return "CoreTaskArgs " + var + ";\n"; }

std::string task_add_tensor(const std::string &args, const std::string &dir, const std::string &tensor) {
  return args + "." + (dir == "in" ? "add_input" : "add_inout") + "(" + tensor + ");\n";
}

std::string readers_decl(const std::string &var, const std::string &indent) {
  return indent + "HtpReaders " + var + ";\n";
}

std::string box_decl(const std::string &var, const std::vector<std::string> &offset,
                     const std::vector<std::string> &shape, const std::string &indent) {
  std::vector<std::string> lo, hi;
  for (size_t d = 0; d < offset.size(); ++d) {
    lo.push_back("static_cast<int64_t>(" + offset[d] + ")");
    hi.push_back("static_cast<int64_t>(" + offset[d] + ") + static_cast<int64_t>(" + shape.at(d) + ")");
  }
  return indent + "const HtpBox " + var + " = {" + std::to_string(offset.size()) + ", {" + join(lo) + "}, {" +
         join(hi) + "}};\n";
}

std::string deps_decl(const std::string &deps, size_t trackers, const std::string &indent) {
  return indent + "PTO2TaskId " + deps + "[" + std::to_string(trackers * kMaxPendingReaders) + "];\n" + indent +
         "uint32_t " + deps + "_count = 0;\n";
}

std::string deps_add_readers(const std::string &deps, const std::string &readers, const std::string &box,
                             const std::string &indent) {
  return indent + deps + "_count = " + readers + ".write(" + box + ", " + deps + ", " + deps + "_count);\n";
}

std::string set_dependencies(const std::string &args, const std::string &deps, const std::string &indent) {
  return indent + args + ".set_dependencies(" + deps + ", " + deps + "_count);\n";
}

std::string task_add_tracked_read(const std::string &args, const std::string &tensor, const std::string &readers,
                                  const std::string &tracked, const std::string &indent) {
  return indent + "const bool " + tracked + " = " + readers + ".room();\n" + indent + "if (" + tracked + ") " +
         args + ".add_input(" + tensor + ");\n" + indent + "else " + args + ".add_inout(" + tensor + ");\n";
}

std::string record_read(const std::string &readers, const std::string &tracked, const std::string &outs,
                        const std::string &box, const std::string &indent) {
  return indent + "if (" + tracked + ") " + readers + ".read(" + outs + ".task_id(), " + box + ");\n";
}

std::string task_add_scalar(const std::string &args, const std::string &value, const std::string &ctype,
                            bool is_float) {
  if (is_float) return args + ".add_scalar(to_u64(static_cast<float>(" + value + ")));\n";
  return args + ".add_scalar(static_cast<uint64_t>(static_cast<" + ctype + ">(" + value + ")));\n";
}

std::string submit(CoreType core, int func_id, const std::string &args, const std::string &outs) {
  const char *fn = core == CoreType::Aic ? "rt_submit_aic_task" : "rt_submit_aiv_task";
  return "TaskOutputTensors " + outs + " = " + fn + "(" + std::to_string(func_id) + ", " + args + ");\n";
}

std::string sim_hint(const std::string &args, const std::string &key, const std::string &stream,
                     const std::string &indent) {
  return "#ifdef HTP_PTOSIM\n" + indent + "htp_ptosim_hint(" + args + ", static_cast<int64_t>(" + key +
         "), static_cast<int64_t>(" + stream + "));\n#endif\n";
}

std::string read_element(const std::string &where, const std::string &tensor, const std::string &name,
                         const std::string &ctype, const std::vector<std::string> &index) {
  std::vector<std::string> wide;
  for (const auto &e : index) wide.push_back("static_cast<int64_t>(" + e + ")");
  return "htp_read<" + ctype + ">(" + tensor + ", \"" + where + "\", \"" + name + "\", {" + join(wide) + "})";
}

std::string check_csr_row(const std::string &where, const std::string &indptr, const std::string &row,
                          const std::string &lo, const std::string &hi, const std::string &nnz) {
  return "htp_check_csr_row(\"" + where + "\", \"" + indptr + "\", static_cast<int64_t>(" + row + "), " + lo + ", " +
         hi + ", " + nnz + ");";
}

std::string check_length(const std::string &where, const std::string &lengths, const std::string &row,
                         const std::string &len) {
  return "htp_check_length(\"" + where + "\", \"" + lengths + "\", static_cast<int64_t>(" + row + "), " + len + ");";
}

std::string check_view(const std::string &where, const std::string &tensor, const std::string &use,
                       const std::string &var, const std::vector<std::string> &offset,
                       const std::vector<std::string> &shape) {
  std::vector<std::string> o, e;
  for (const auto &x : offset) o.push_back("static_cast<int64_t>(" + x + ")");
  for (const auto &x : shape) e.push_back("static_cast<int64_t>(" + x + ")");
  return "htp_check_view(\"" + where + "\", \"" + tensor + "\", \"" + use + "\", " + var + ", {" + join(o) + "}, {" +
         join(e) + "});";
}

std::string scope_open() { return "PTO2_SCOPE() {\n"; }

}  // namespace ptobe::rt
