#include "orchestrator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <set>

#include <htp/dtype_range.hpp>
#include <htp/wsp_task_graph.hpp>

#include "../alias.hpp"
#include "../expr.hpp"

namespace htp::aie::sim {

namespace {

using Clock = std::chrono::steady_clock;

/// Walks one workload's task graph; see orchestrate().
class Walker {
public:
  Walker(const htp::WspWorkload &w, const std::map<std::string, Design> &designs, const Json &packing,
         const Json &alias_checks, const std::map<std::string, KernelEntry> &kernels,
         std::map<std::string, OrchTensor> tensors, const std::map<std::string, Json> &scalars,
         const SimOptions &options, std::string file, const Json &channels)
      : w_(w), designs_(designs), packing_(packing), alias_checks_(alias_checks), kernels_(kernels),
        tensors_(std::move(tensors)), options_(options), file_(std::move(file)) {
    for (const auto &[name, value] : scalars) env_.params[name] = value;
    for (const htp::WspIntermediate &i : w.intermediates) {
      std::vector<int64_t> shape;
      for (const htp::IrDim &d : i.type.shape) {  // a symbol: the extent a parameter's argument gave it
        auto bound = d.is_symbol() ? env_.params.find(d.symbol) : env_.params.end();
        if (d.is_symbol() && (bound == env_.params.end() || !bound->second.is_number_integer()))
          throw SimError("intermediate '" + i.name + "': no argument gives its dimension \"" + d.symbol + "\"");
        shape.push_back(d.is_symbol() ? bound->second.get<int64_t>() : d.size);
      }
      const uint64_t bytes = uint64_t(product(shape)) * uint64_t(dtype_bytes(i.type.dtype));
      try {
        auto &buf = owned_.emplace_back(static_cast<size_t>(bytes), 0);
        tensors_[i.name] = OrchTensor{buf.data(), shape, i.type.dtype};
      } catch (const std::exception &) {  // std::bad_alloc, std::length_error
        std::string dims;
        for (int64_t d : shape) dims += std::to_string(d) + " x ";
        throw SimError("intermediate '" + i.name + "' of workload '" + w.name + "' (" + dims + i.type.dtype + ", " +
                       std::to_string(bytes) + " bytes) cannot be allocated: out of host memory");
      }
    }
    for (const auto &[name, c] : channels.items()) {
      Channel &ch = channels_[name] = Channel{c.at("shape").get<std::vector<int64_t>>(), c.at("dtype").get<std::string>()};
      if (c.contains("deal"))
        for (const auto &[task, d] : c.at("deal").items())
          ch.deal[task] = Deal{d.at(0).get<int64_t>(), d.at(1).get<int64_t>(), d.at(2).get<std::string>()};
    }
    env_.read = [this](const std::string &t, const std::vector<int64_t> &index, std::string *why) {
      return read(t, index, why);
    };
    t0_ = Clock::now();
  }

  OrchestrationResult run() {
    nodes(w_.body);
    result_.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
    return std::move(result_);
  }

private:
  /// "model.py:317:17": the construct's place (the file's name only; task-graph spans carry no file, the
  /// document names the module's).
  std::string where(const htp::IrSpan &s) const {
    const std::string path = s.file.value_or(file_);
    const std::string file = path.substr(path.find_last_of('/') + 1);
    return (file.empty() ? std::string("<program>") : file) + ":" + std::to_string(s.line) + ":" + std::to_string(s.col + 1);
  }

  [[noreturn]] void fail(const htp::IrSpan &s, const std::string &message, const std::string &code = "aie.sim") const {
    throw SimError(where(s) + ": " + message, code);
  }

  std::optional<int64_t> read(const std::string &name, const std::vector<int64_t> &index, std::string *why) {
    auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      if (why) *why = "it reads '" + name + "', which is not a tensor of the run";
      return std::nullopt;
    }
    const OrchTensor &t = it->second;
    if (index.size() != t.shape.size()) {
      if (why) *why = "it reads '" + name + "' with " + std::to_string(index.size()) + " indices, but it has " +
                      std::to_string(t.shape.size()) + " dimensions";
      return std::nullopt;
    }
    int64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      if (index[d] < 0 || index[d] >= t.shape[d]) {
        if (why) *why = "runtime data: index " + std::to_string(index[d]) + " of dimension " + std::to_string(d) +
                        " of '" + name + "' is outside its extent " + std::to_string(t.shape[d]);
        return std::nullopt;
      }
      flat = flat * t.shape[d] + index[d];
    }
    const char *p = static_cast<const char *>(t.data) + flat * dtype_bytes(t.dtype);
    auto get = [&](auto v) {
      std::memcpy(&v, p, sizeof v);
      return static_cast<int64_t>(v);
    };
    const std::string &dt = t.dtype;
    if (dt == "i32") return get(int32_t{});
    if (dt == "i64") return get(int64_t{});
    if (dt == "u32") return get(uint32_t{});
    if (dt == "i16") return get(int16_t{});
    if (dt == "u16") return get(uint16_t{});
    if (dt == "i8") return get(int8_t{});
    if (dt == "u8" || dt == "bool") return get(uint8_t{});
    if (dt == "u64") return get(uint64_t{});
    if (why) *why = "it reads '" + name + "', a tensor of " + dt + " (an integer tensor is needed)";
    return std::nullopt;
  }

  int64_t eval(const Json &e, const htp::IrSpan &span, const std::string &what) {
    std::string why;
    auto v = eval_int(e, env_, &why);
    if (!v) fail(span, what + ": " + why);
    return *v;
  }

  /// True when `e` holds no float (literal or parameter): it is evaluated exactly, in 64 bits, as pto's
  /// orchestration evaluates it (past 64 bits a run error, not a rounded double).
  bool integral(const Json &e) const {
    if (e.is_number_float()) return false;
    if (!e.is_object()) return true;
    if (e.contains("param")) {
      auto it = env_.params.find(e["param"].get<std::string>());
      return it == env_.params.end() || !it->second.is_number_float();
    }
    for (const Json &a : e.value("args", Json::array()))
      if (!integral(a)) return false;
    return true;
  }

  /// A float scalar argument: literals and float parameters as they are; + - * neg min max, comparisons and
  /// `select` over those; integer subexpressions (integer arithmetic, tensor reads) through eval().
  double eval_real(const Json &e, const htp::IrSpan &span, const std::string &what) {
    if (integral(e)) return static_cast<double>(eval(e, span, what));
    if (e.is_number()) return e.get<double>();
    if (e.is_object() && e.contains("param")) {
      auto it = env_.params.find(e["param"].get<std::string>());
      if (it != env_.params.end() && it->second.is_number()) return it->second.get<double>();
    }
    if (e.is_object() && e.contains("op")) {
      const std::string op = e["op"].get<std::string>();
      const Json args = e.value("args", Json::array());
      if ((op == "add" || op == "sub" || op == "mul" || op == "min" || op == "max") && args.size() == 2) {
        const double a = eval_real(args[0], span, what), b = eval_real(args[1], span, what);
        return op == "add" ? a + b : op == "sub" ? a - b : op == "mul" ? a * b : op == "min" ? std::min(a, b) : std::max(a, b);
      }
      if (op == "neg" && args.size() == 1) return -eval_real(args[0], span, what);
      if ((op == "floordiv" || op == "mod") && args.size() == 2) {  // Python's, on floats: a % b has b's sign
        const double a = eval_real(args[0], span, what), b = eval_real(args[1], span, what);
        if (b == 0) fail(span, what + ": division by zero");
        const double q = std::floor(a / b);
        return op == "floordiv" ? q : a - q * b;
      }
      static const std::set<std::string> compare = {"lt", "le", "gt", "ge", "eq", "ne"};
      if (compare.count(op) && args.size() == 2) {  // (a float parameter compared: `if alpha > 1.0`)
        const double a = eval_real(args[0], span, what), b = eval_real(args[1], span, what);
        return op == "lt" ? a < b : op == "le" ? a <= b : op == "gt" ? a > b : op == "ge" ? a >= b : op == "eq" ? a == b : a != b;
      }
      if ((op == "and" || op == "or") && args.size() == 2) {
        const bool a = eval_real(args[0], span, what) != 0;
        if (op == "and" ? !a : a) return a;
        return eval_real(args[1], span, what) != 0;
      }
      if (op == "not" && args.size() == 1) return eval_real(args[0], span, what) == 0;
      if (op == "select" && args.size() == 3)  // `a if c else b`: only the branch taken is evaluated
        return eval_real(args[0], span, what) != 0 ? eval_real(args[1], span, what) : eval_real(args[2], span, what);
    }
    return static_cast<double>(eval(e, span, what));
  }

  void nodes(const std::vector<htp::WspNode> &body) {
    for (const htp::WspNode &n : body) node(n);
  }

  void node(const htp::WspNode &n) {
    if (n.is_task()) return task(n);
    if (n.is_group()) return nodes(n.body);
    if (n.is_when()) return nodes(eval_real(n.cond, n.span, "the condition") != 0 ? n.then_body : n.else_body);
    if (n.is_loop()) return loop(n);
    fail(n.span, "unknown task-graph node '" + n.kind + "'");
  }

  /// Runs `body` with `var` bound to each value of [lo, hi).
  void each(const std::string &var, int64_t lo, int64_t hi, const std::function<void()> &body) {
    for (int64_t v = lo; v < hi; ++v) {
      env_.vars[var] = v;
      held_.erase(var);  // a consume loop's next iteration receives its next item
      body();
    }
    env_.vars.erase(var);
    held_.erase(var);
  }

  void dense(const htp::WspNode &n, size_t axis) {
    if (axis == n.vars.size()) return nodes(n.body);
    const int64_t extent = eval(n.domain.extents.at(axis), n.span, "the extent of '" + n.vars[axis] + "'");
    each(n.vars[axis], 0, extent, [&] { dense(n, axis + 1); });
  }

  void loop(const htp::WspNode &n) {
    const htp::WspDomain &d = n.domain;
    if (d.type == "dense") return dense(n, 0);
    if (d.type == "seq") {
      const int64_t extent = eval(d.extent, n.span, "the extent of '" + n.vars.at(0) + "'");
      return each(n.vars.at(0), 0, extent, [&] { nodes(n.body); });
    }
    if (d.type == "ragged") {
      const int64_t rows = eval(d.extent, n.span, "the rows of the ragged domain");
      return each(n.vars.at(0), 0, rows, [&] {
        const int64_t r = env_.vars.at(n.vars[0]);
        std::string why;
        auto len = read(d.lengths, {r}, &why);
        if (!len) fail(n.span, "the ragged length of row " + std::to_string(r) + ": " + why);
        if (*len < 0)
          fail(n.span, "runtime data: " + d.lengths + "[" + std::to_string(r) + "] = " + std::to_string(*len) +
                           " is a negative ragged length");
        each(n.vars.at(1), 0, *len, [&] { nodes(n.body); });
      });
    }
    if (d.type == "sparse") {
      const int64_t row = eval(d.row, n.span, "the CSR row");
      std::string why;
      auto lo = read(d.indptr, {row}, &why);
      auto hi = lo ? read(d.indptr, {row + 1}, &why) : std::nullopt;
      if (!lo || !hi) fail(n.span, "CSR row " + std::to_string(row) + ": " + why);
      const int64_t nnz = tensors_.at(d.indices).shape.at(0);
      if (*lo < 0 || *lo > *hi || *hi > nnz)
        fail(n.span, "runtime data: '" + d.indptr + "' is not a CSR row pointer: " + d.indptr + "[" + std::to_string(row) +
                         "] = " + std::to_string(*lo) + ", " + d.indptr + "[" + std::to_string(row + 1) + "] = " +
                         std::to_string(*hi) + " (need 0 <= " + std::to_string(*lo) + " <= " + std::to_string(*hi) +
                         " <= " + std::to_string(nnz) + ", the number of indices)");
      for (int64_t k = *lo; k < *hi; ++k) {
        auto e = read(d.indices, {k}, &why);
        if (!e) fail(n.span, "CSR entry " + std::to_string(k) + ": " + why);
        env_.vars[n.vars.at(0)] = *e;
        nodes(n.body);
      }
      env_.vars.erase(n.vars.at(0));
      return;
    }
    fail(n.span, "loop domain '" + d.type + "' is not orchestrated on AIE");
  }

  /// The views a task moves of one tensor as an input and an output that its kernel loads after storing
  /// (orchestration.json's `alias_checks`): overlapping, the kernel would read the old values (aie.alias).
  template <class MovedList> void check_aliases(const htp::WspNode &n, const MovedList &moved) const {
    if (!alias_checks_.contains(n.kernel)) return;
    auto find = [&](const std::string &param) -> const typename MovedList::value_type * {
      for (const auto &m : moved)
        if (m.name == param && m.t) return &m;
      return nullptr;
    };
    auto arg_of = [&](const std::string &param) -> const htp::WspArg & {
      return *std::find_if(n.args.begin(), n.args.end(), [&](const htp::WspArg &a) { return a.param == param; });
    };
    for (const Json &pair : alias_checks_.at(n.kernel)) {
      const std::string in = pair.at(0).get<std::string>(), out = pair.at(1).get<std::string>();
      const auto *r = find(in), *w = find(out);  // (moved views: their arguments are views of a tensor)
      if (!r || !w || r->t != w->t || !boxes_overlap(r->offset, r->shape, w->offset, w->shape)) continue;
      auto dir = [&](const std::string &param, const char *otherwise) {
        return std::string(arg_of(param).dir == "inout" ? "InOut" : otherwise);
      };
      fail(n.span,
           "task " + n.id + ": runtime data: " +
               aliasing_reason(n.kernel, *arg_of(in).tensor, in, dir(in, "In"), out, dir(out, "Out")),
           "aie.alias");
    }
  }

  /// Copies the box (offset, shape) of row-major `t` to or from the dense `buf`.
  static void copy_box(const OrchTensor &t, const std::vector<int64_t> &offset, const std::vector<int64_t> &shape,
                       char *buf, bool gather) {
    const size_t rank = shape.size();
    const int64_t elem = dtype_bytes(t.dtype);
    std::vector<int64_t> stride(rank, 1);
    for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * t.shape[d];
    const size_t row_bytes = static_cast<size_t>(shape[rank - 1] * elem);
    const int64_t rows = product(shape) / shape[rank - 1];
    std::vector<int64_t> at(rank, 0);
    char *base = static_cast<char *>(t.data);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t flat = 0;
      for (size_t d = 0; d < rank; ++d) flat += (offset[d] + at[d]) * stride[d];
      char *p = base + flat * elem;
      if (gather) std::memcpy(buf, p, row_bytes);
      else std::memcpy(p, buf, row_bytes);
      buf += row_bytes;
      for (size_t d = rank - 1; d-- > 0;) {  // the next row: odometer over the outer dims
        if (++at[d] < shape[d]) break;
        at[d] = 0;
      }
    }
  }

  /// Moves the object of packing entry `e` between a parameter's host object (`bytes` of it) and its place in
  /// a packed buffer: into it (`gather`) or out of it. An entry with a "view" is one core's view of the
  /// parameter (a design of several cores), the rest the whole object.
  static void move_packed(const Json &e, void *object, size_t bytes, char *packed, bool gather) {
    char *at = packed + e.at("offset").get<int64_t>();
    if (e.contains("view"))
      copy_box(OrchTensor{object, e.at("shape").get<std::vector<int64_t>>(), e.at("dtype").get<std::string>()},
               e["view"].at("offset").get<std::vector<int64_t>>(), e["view"].at("shape").get<std::vector<int64_t>>(), at,
               gather);
    else if (gather)
      std::memcpy(at, object, bytes);
    else
      std::memcpy(object, at, bytes);
  }

  void task(const htp::WspNode &n) {
    auto dit = designs_.find(n.kernel);
    if (dit == designs_.end()) fail(n.span, "task " + n.id + " launches kernel '" + n.kernel + "', which has no design");
    const Design &design = dit->second;
    std::map<std::string, const htp::WspArg *> by_param;
    for (const htp::WspArg &a : n.args) by_param[a.param] = &a;
    struct Moved {
      std::string name;
      const OrchTensor *t;
      std::vector<int64_t> offset, shape;
      std::vector<char> buf;
      bool back;
      Channel *channel = nullptr;  ///< a channel item received or sent
      bool send = false;
      int64_t item = 0;            ///< the item's number in its channel
    };
    const Json &packed = packing_.contains(n.kernel) ? packing_.at(n.kernel) : Json();
    // The kernel's own parameters: the design's, or — packed — those the packing lists.
    std::vector<RuntimeParam> params;
    if (packed.is_object()) {
      std::set<std::string> seen;
      for (const char *side : {"in", "out"})
        for (const Json &e : packed.at(side)) {
          const std::string pname = e.at("param").get<std::string>();
          if (!seen.insert(pname).second) continue;
          auto it = by_param.find(pname);
          if (it == by_param.end()) fail(n.span, "task " + n.id + " binds nothing to parameter '" + pname + "' of kernel '" + n.kernel + "'");
          const bool scalar = e.value("scalar", false);
          params.push_back(RuntimeParam{pname, e.at("shape").get<std::vector<int64_t>>(), e.at("dtype").get<std::string>(),
                                        scalar ? "in" : it->second->dir, scalar});
        }
    } else {
      params = design.params;
    }
    std::vector<Moved> moved;
    moved.reserve(params.size());
    std::map<std::string, HostBuffer> buffers;
    for (const RuntimeParam &p : params) {
      auto it = by_param.find(p.name);
      if (it == by_param.end()) fail(n.span, "task " + n.id + " binds nothing to parameter '" + p.name + "' of kernel '" + n.kernel + "'");
      const htp::WspArg &a = *it->second;
      if (p.scalar) {
        if (!a.is_scalar()) fail(n.span, "task " + n.id + " binds a view to the scalar parameter '" + p.name + "'");
        const std::string what = "scalar '" + p.name + "'";
        const bool real = floating_dtype(p.dtype);
        const int64_t integer = real ? 0 : eval(*a.scalar, n.span, what);
        // A 64-bit workload value given to a narrower integer parameter is checked, not wrapped.
        if (auto range = htp::narrow_integer_range(p.dtype); range && (integer < range->first || integer > range->second))
          fail(n.span, "task " + n.id + ": scalar '" + p.name + "' of kernel '" + n.kernel + "' (" + p.dtype +
                           "): runtime data: " + std::to_string(integer) + " is outside [" +
                           std::to_string(range->first) + ", " + std::to_string(range->second) + "]");
        Moved &m = moved.emplace_back(Moved{p.name, nullptr, {}, {},
                                            scalar_object(p.dtype, real ? eval_real(*a.scalar, n.span, what) : 0.0,
                                                          integer),
                                            false});
        buffers[p.name] = {m.buf.data(), m.buf.size()};
        continue;
      }
      if (a.is_channel()) {  // a pipe stage: the item received, or the slot the kernel fills and sends
        auto cit = channels_.find(*a.channel);
        if (cit == channels_.end()) fail(n.span, "task " + n.id + " binds channel '" + *a.channel + "', which the pipe does not have");
        Channel &c = cit->second;
        Moved &m = moved.emplace_back(Moved{p.name, nullptr, {}, c.shape, {}, false});
        m.channel = &c;
        // A consume item named again in its iteration (`k(t, t)`, or two launches of t) is the item received.
        auto held = a.item ? held_.find(*a.item) : held_.end();
        if (held != held_.end()) {
          m.item = held->second.first;
          m.buf = held->second.second;
        } else if (a.dir == "in") {
          m.item = c.next_item(n.id, true);
          auto item = c.items.find(m.item);
          if (item == c.items.end())
            fail(n.span, "task " + n.id + " receives item " + std::to_string(m.item) + " of channel '" + *a.channel +
                             "', which no task has sent");
          m.buf = std::move(item->second);
          c.items.erase(item);
          if (a.item) held_[*a.item] = {m.item, m.buf};
        } else {
          m.item = c.next_item(n.id, false);
          m.buf.assign(static_cast<size_t>(product(c.shape) * dtype_bytes(c.dtype)), 0);
          m.send = true;
        }
        if (m.buf.size() != static_cast<size_t>(product(p.shape) * dtype_bytes(p.dtype)))
          fail(n.span, "channel '" + *a.channel + "' carries items of another size than parameter '" + p.name + "'");
        buffers[p.name] = {m.buf.data(), m.buf.size()};
        continue;
      }
      if (!a.is_view()) fail(n.span, "task " + n.id + " binds no tensor view to parameter '" + p.name + "'");
      auto tit = tensors_.find(*a.tensor);
      if (tit == tensors_.end()) fail(n.span, "task " + n.id + " names tensor '" + *a.tensor + "', which the run does not have");
      const OrchTensor &t = tit->second;
      if (a.offset.size() != t.shape.size() || a.shape.size() != t.shape.size())
        fail(n.span, "the view of '" + *a.tensor + "' passed to kernel '" + n.kernel + "' has rank " +
                         std::to_string(a.offset.size()) + ", the tensor " + std::to_string(t.shape.size()));
      std::vector<int64_t> offset;
      for (size_t d = 0; d < a.offset.size(); ++d) {
        offset.push_back(eval(a.offset[d], n.span, "the view of '" + *a.tensor + "'"));
        if (offset[d] < 0 || offset[d] + a.shape[d] > t.shape[d])
          fail(n.span, "runtime data: the view of '" + *a.tensor + "' passed to kernel '" + n.kernel + "', parameter '" +
                           p.name + "' covers [" + std::to_string(offset[d]) + ", " + std::to_string(offset[d] + a.shape[d]) +
                           ") in dimension " + std::to_string(d) + ", outside its extent " + std::to_string(t.shape[d]));
      }
      if (product(a.shape) != product(p.shape) || dtype_bytes(t.dtype) != dtype_bytes(p.dtype))
        fail(n.span, "the view of '" + *a.tensor + "' passed to kernel '" + n.kernel + "' does not match parameter '" +
                         p.name + "' of its design");
      Moved &m = moved.emplace_back(Moved{p.name, &t, offset, a.shape,
                                          std::vector<char>(static_cast<size_t>(product(a.shape) * dtype_bytes(t.dtype))),
                                          p.dir != "in"});
      copy_box(t, m.offset, m.shape, m.buf.data(), true);
      buffers[p.name] = {m.buf.data(), m.buf.size()};
    }
    check_aliases(n, moved);
    std::vector<char> packed_in, packed_out;
    if (packed.is_object()) {  // the objects into one input buffer, the written ones out of another
      packed_in.assign(static_cast<size_t>(packed.at("in_bytes").get<int64_t>()), 0);
      packed_out.assign(static_cast<size_t>(packed.at("out_bytes").get<int64_t>()), 0);
      for (const Json &e : packed.at("in")) {
        const HostBuffer &b = buffers.at(e.at("param").get<std::string>());
        move_packed(e, b.data, std::min(b.bytes, e.at("bytes").get<size_t>()), packed_in.data(), true);
      }
      buffers.clear();
      if (!packed_in.empty()) buffers["packed_in"] = {packed_in.data(), packed_in.size()};
      if (!packed_out.empty()) buffers["packed_out"] = {packed_out.data(), packed_out.size()};
    }
    if (options_.limit && options_.limit->expired()) fail(n.span, options_.limit->message() + ", before task " + n.id);
    const auto start = Clock::now();
    simulate(design, kernels_, buffers, options_);
    const auto end = Clock::now();
    if (packed.is_object())
      for (const Json &e : packed.at("out"))
        for (Moved &m : moved)
          if ((m.back || m.send) && m.name == e.at("param").get<std::string>()) {
            move_packed(e, m.buf.data(), m.buf.size(), packed_out.data(), false);
          }
    for (Moved &m : moved) {
      if (m.back) copy_box(*m.t, m.offset, m.shape, m.buf.data(), false);
      if (m.send) m.channel->items[m.item] = std::move(m.buf);
    }
    const size_t index = result_.tasks.size();
    Json args = {{"task", index}, {"id", n.id}};
    for (const auto &[var, value] : env_.vars) args[var] = value;
    result_.tasks.push_back({{"task", index}, {"id", n.id}, {"kernel", n.kernel}});
    result_.trace_events.push_back(
        {{"name", n.kernel}, {"cat", "task"}, {"ph", "X"}, {"pid", 0}, {"tid", 1},
         {"ts", std::chrono::duration<double, std::micro>(start - t0_).count()},
         {"dur", std::chrono::duration<double, std::micro>(end - start).count()}, {"args", args}});
  }

  const htp::WspWorkload &w_;
  const std::map<std::string, Design> &designs_;
  const Json &packing_;  ///< kernel -> the packing of its objects (pack_task), or null
  const Json &alias_checks_;  ///< kernel -> its [in, out] pairs loaded after storing (orchestration.json)
  const std::map<std::string, KernelEntry> &kernels_;
  std::map<std::string, OrchTensor> tensors_;
  std::vector<std::vector<char>> owned_;
  const SimOptions &options_;
  ExprEnv env_;
  OrchestrationResult result_;
  Clock::time_point t0_;
  std::string file_;
  /// How the tasks of one process replica number the items they move: its k-th item of the channel is item
  /// k * replicas + replica (replicas share a channel round robin), counted per `group` (the replica, over the
  /// tasks of its statements before, in and after its loop).
  struct Deal {
    int64_t replicas = 1, replica = 0;
    std::string group;
  };
  /// A pipe's or program's channel: the items sent and not yet received, by number.
  struct Channel {
    std::vector<int64_t> shape;
    std::string dtype;
    std::map<int64_t, std::vector<char>> items;
    std::map<std::string, Deal> deal;                        ///< task id -> its replica's dealing (none: 1, 0)
    std::map<std::pair<std::string, bool>, int64_t> moved;  ///< (group, receives) -> items it moved so far
    /// The number of the next item task `task` receives (or sends).
    int64_t next_item(const std::string &task, bool receives) {
      auto d = deal.find(task);
      const Deal one{1, 0, ""};
      const Deal &x = d == deal.end() ? one : d->second;
      return moved[{x.group, receives}]++ * x.replicas + x.replica;
    }
  };
  std::map<std::string, Channel> channels_;
  /// Consume items received in the current iteration of their loop: variable -> (item number, contents).
  std::map<std::string, std::pair<int64_t, std::vector<char>>> held_;
};

}  // namespace

OrchestrationResult orchestrate(const Json &doc, const std::map<std::string, Design> &designs,
                                const std::map<std::string, KernelEntry> &kernels,
                                const std::map<std::string, OrchTensor> &tensors,
                                const std::map<std::string, Json> &scalars, const SimOptions &options) {
  htp::WspTaskGraph graph;
  try {
    // The body is read on its own: a pipe's stages bind channels, which a workload's body may not.
    Json workload = doc.at("workload");
    const Json body = workload.at("body");
    workload["body"] = Json::array();
    graph = htp::read_wsp_task_graph(Json{{"schema", std::string(htp::kWspTaskGraphSchema)},
                                          {"workloads", Json::array({workload})}});
    htp::wsp_task_graph_reader::Reader<Json> reader{"orchestration.json"};
    graph.workloads.at(0).body = htp::wsp_task_graph_reader::read_body(
        reader, body, "/workload/body", htp::wsp_task_graph_reader::NodeOptions{.channels = true});
  } catch (const std::exception &e) {
    throw SimError(std::string("orchestration.json: the workload's task graph is malformed: ") + e.what());
  }
  const htp::WspWorkload &w = graph.workloads.at(0);
  for (const htp::WspParam &p : w.params) {
    if (p.type.is_scalar() ? !scalars.count(p.name) : !tensors.count(p.name))
      throw SimError("orchestration of '" + w.name + "': no argument for parameter '" + p.name + "'");
  }
  Json packing = Json::object(), alias_checks = Json::object();
  for (const auto &[kernel, entry] : doc.at("kernels").items()) {
    packing[kernel] = entry.is_object() ? entry.value("packed", Json()) : Json();
    if (entry.is_object() && entry.contains("alias_checks")) alias_checks[kernel] = entry.at("alias_checks");
  }
  Walker walker(w, designs, packing, alias_checks, kernels, tensors, scalars, options, doc.value("file", ""),
                doc.value("channels", Json::object()));
  return walker.run();
}

}  // namespace htp::aie::sim
