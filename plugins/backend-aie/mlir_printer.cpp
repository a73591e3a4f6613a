#include "mlir_printer.hpp"

#include <map>
#include <set>
#include <sstream>

namespace htp::aie {

namespace {

std::string mlir_elem(const std::string &dtype) {
  if (dtype == "u8") return "ui8";
  return dtype;
}

std::string join(const std::vector<std::string> &v, const std::string &sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

template <class T> std::string list(const T &v) {
  std::vector<std::string> s;
  for (auto x : v) s.push_back(std::to_string(x));
  return "[" + join(s) + "]";
}

std::string kernel_arg_type(const KernelArg &a) { return a.memref ? memref_type(a.shape, a.dtype) : mlir_elem(a.dtype); }

/// Prints one core's program with fresh SSA values.
class CorePrinter {
public:
  CorePrinter(const Design &d, const DialectSpelling &sp, std::ostream &o) : d_(d), sp_(sp), o_(o) {}

  void print(const Core &c) {
    o_ << "    %core_" << c.tile.col << "_" << c.tile.row << " = aie.core(%" << c.tile.ssa() << ") {\n";
    block(c.body, 3);
    o_ << "      aie.end\n    }";
    std::vector<std::string> attrs;
    if (!sp_.link_with_on_func) {
      std::set<std::string> objs;
      collect_objects(c.body, objs);
      if (objs.size() == 1) attrs.push_back("link_with = \"" + *objs.begin() + "\"");
    }
    attrs.push_back("stack_size = " + std::to_string(c.stack_size) + " : i32");
    o_ << " {" << join(attrs) << "}\n";
  }

private:
  void collect_objects(const std::vector<CoreOp> &ops, std::set<std::string> &objs) {
    for (const auto &op : ops) {
      if (op.kind == CoreOp::Kind::Loop) collect_objects(op.body, objs);
      if (op.kind == CoreOp::Kind::Call)
        for (const auto &k : d_.kernels)
          if (k.name == op.callee) objs.insert(k.object);
    }
  }

  std::string fresh() { return "%" + std::to_string(next_++); }

  std::string index_const(int64_t v) {
    std::string name = "%c" + std::to_string(v);
    if (!consts_.count(name)) {
      consts_.insert(name);
      o_ << pad_ << "  " << name << " = arith.constant " << v << " : index\n";
    }
    return name;
  }

  std::string typed_const(const Json &value, const std::string &dtype) {
    const std::string t = mlir_elem(dtype);
    std::string text = value.is_number_float() ? value.dump() : std::to_string(value.get<int64_t>());
    if ((t == "f32" || t == "f16" || t == "bf16") && text.find('.') == std::string::npos && text.find('e') == std::string::npos)
      text += ".0";
    std::string name = fresh();
    o_ << pad_ << "  " << name << " = arith.constant " << text << " : " << t << "\n";
    return name;
  }

  void block(const std::vector<CoreOp> &ops, int indent) {
    const std::string saved = pad_;
    pad_ = std::string(static_cast<size_t>(indent - 1) * 2, ' ');
    for (const auto &op : ops) {
      const std::string p = pad_ + "  ";
      switch (op.kind) {
        case CoreOp::Kind::Loop: {
          std::string lo = index_const(0), hi = index_const(op.trip), one = index_const(1);
          std::string iv = "%arg" + std::to_string(loops_++);
          o_ << p << "scf.for " << iv << " = " << lo << " to " << hi << " step " << one << " {\n";
          ivs_.push_back(iv);
          block(op.body, indent + 1);
          ivs_.pop_back();
          o_ << p << "}\n";
          break;
        }
        case CoreOp::Kind::Acquire: {
          const ObjectFifo *f = d_.fifo(op.fifo);
          const std::string mt = f ? memref_type(f->shape, f->dtype) : "memref<?>";
          std::string v = fresh();
          if (sp_.acquire_returns_memref) {
            o_ << p << v << " = aie.objectfifo.acquire @" << op.fifo << "(" << op.port << ", " << op.count << ") : " << mt << "\n";
            held_[op.fifo] = v;
          } else {
            const std::string st = "!aie.objectfifosubview<" + mt + ">";
            o_ << p << v << " = aie.objectfifo.acquire @" << op.fifo << "(" << op.port << ", " << op.count << ") : " << st << "\n";
            std::string e = fresh();
            o_ << p << e << " = aie.objectfifo.subview.access " << v << "[0] : " << st << " -> " << mt << "\n";
            held_[op.fifo] = e;
          }
          break;
        }
        case CoreOp::Kind::Release:
          o_ << p << "aie.objectfifo.release @" << op.fifo << "(" << op.port << ", " << op.count << ")\n";
          break;
        case CoreOp::Kind::Call:
          call(op, p);
          break;
      }
    }
    pad_ = saved;
  }

  void call(const CoreOp &op, const std::string &p) {
    std::vector<std::string> vals, types;
    for (const auto &a : op.args) {
      if (a.kind == CallArg::Kind::Buffer) {
        vals.push_back("%" + a.fifo);
        const TileBuffer *b = d_.buffer(a.fifo);
        types.push_back(b ? memref_type(b->shape, b->dtype) : "memref<?>");
      } else if (a.kind == CallArg::Kind::Fifo) {
        vals.push_back(held_.count(a.fifo) ? held_[a.fifo] : "%" + a.fifo);
        const ObjectFifo *f = d_.fifo(a.fifo);
        types.push_back(f ? memref_type(f->shape, f->dtype) : "memref<?>");
      } else if (a.kind == CallArg::Kind::Const) {
        vals.push_back(typed_const(a.value, a.dtype));
        types.push_back(mlir_elem(a.dtype));
      } else {
        const std::string t = mlir_elem(a.dtype);
        const std::string iv = ivs_.empty() ? index_const(0) : ivs_.back();
        std::string i = fresh();
        o_ << p << i << " = arith.index_cast " << iv << " : index to " << t << "\n";
        std::string step = typed_const(Json(a.step), a.dtype), start = typed_const(Json(a.start), a.dtype);
        std::string m = fresh();
        o_ << p << m << " = arith.muli " << i << ", " << step << " : " << t << "\n";
        std::string s = fresh();
        o_ << p << s << " = arith.addi " << m << ", " << start << " : " << t << "\n";
        vals.push_back(s);
        types.push_back(t);
      }
    }
    o_ << p << "func.call @" << op.callee << "(" << join(vals) << ") : (" << join(types) << ") -> ()\n";
  }

  const Design &d_;
  const DialectSpelling &sp_;
  std::ostream &o_;
  std::string pad_;
  int next_ = 0, loops_ = 0;
  std::set<std::string> consts_;
  std::map<std::string, std::string> held_;
  std::vector<std::string> ivs_;
};

void print_fifo(const ObjectFifo &f, const DialectSpelling &sp, std::ostream &o) {
  std::vector<std::string> consumers;
  for (const auto &c : f.consumers) consumers.push_back("%" + c.ssa());
  std::string producer = "%" + f.producer.ssa();
  if (!f.producer_dims.empty()) {
    std::vector<std::string> dims;
    for (const auto &s : f.producer_dims) dims.push_back("<size = " + std::to_string(s.size) + ", stride = " + std::to_string(s.stride) + ">");
    producer += " " + sp.dims_to_stream + " [" + join(dims) + "]";
  }
  const std::string depth = f.depth.size() == 1 ? std::to_string(f.depth[0]) + " : i32" : list(f.depth);
  o << "    aie.objectfifo @" << f.name << "(" << producer << ", {" << join(consumers) << "}, " << depth
    << ") : !aie.objectfifo<" << memref_type(f.shape, f.dtype) << ">\n";
}

void print_link(const FifoLink &l, std::ostream &o) {
  std::vector<std::string> s, d;
  for (const auto &x : l.srcs) s.push_back("@" + x);
  for (const auto &x : l.dsts) d.push_back("@" + x);
  o << "    aie.objectfifo.link [" << join(s) << "] -> [" << join(d) << "](" << list(l.src_offsets) << " "
    << list(l.dst_offsets) << ")\n";
}

void print_sequence(const Design &d, const DialectSpelling &sp, std::ostream &o) {
  std::map<std::string, std::string> arg;
  std::vector<std::string> params;
  for (size_t i = 0; i < d.params.size(); ++i) {
    arg[d.params[i].name] = "%arg" + std::to_string(i);
    params.push_back("%arg" + std::to_string(i) + ": " + memref_type(d.params[i].shape, d.params[i].dtype));
  }
  if (sp.runtime_sequence == "func.func @sequence") o << "    func.func @sequence(" << join(params) << ") {\n";
  else o << "    " << sp.runtime_sequence << "(" << join(params) << ") {\n";
  for (const auto &op : d.sequence) {
    if (op.kind == DmaOp::Kind::Wait) {
      o << "      aiex.npu.dma_wait {symbol = @" << op.fifo << "}\n";
      continue;
    }
    const RuntimeParam *p = d.param(op.param);
    o << "      aiex.npu.dma_memcpy_nd(" << (sp.dma_coordinate_prefix ? "0, 0, " : "") << arg[op.param]
      << list(op.offsets) << list(op.sizes) << list(op.strides) << ") {id = " << op.id << " : i64, "
      << (op.issue_token ? "issue_token = true, " : "") << "metadata = @" << op.fifo << "} : "
      << (p ? memref_type(p->shape, p->dtype) : "memref<?>") << "\n";
  }
  if (sp.runtime_sequence == "func.func @sequence") o << "      return\n";
  o << "    }\n";
}

}  // namespace

std::string memref_type(const std::vector<int64_t> &shape, const std::string &dtype) {
  std::string s = "memref<";
  for (int64_t x : shape) s += std::to_string(x) + "x";
  return s + mlir_elem(dtype) + ">";
}

std::string print_mlir(const Design &d, const DialectSpelling &sp) {
  std::ostringstream o;
  o << "// Generated by HTP backend-aie for entry '" << d.entry << "' (" << d.kind << ").\n"
    << "// Dialect spelling: " << sp.release << " [aie.release=" << sp.id << "].\n"
    << "module {\n  aie.device(" << sp.device(d.device) << ") {\n";
  for (const auto &k : d.kernels) {
    std::vector<std::string> types;
    for (const auto &a : k.args) types.push_back(kernel_arg_type(a));
    o << "    func.func private @" << k.name << "(" << join(types) << ")";
    if (sp.link_with_on_func) o << " attributes {link_with = \"" << k.object << "\"}";
    o << "\n";
  }
  for (const auto &t : d.tiles()) o << "    %" << t.ssa() << " = aie.tile(" << t.col << ", " << t.row << ")\n";
  for (const auto &f : d.fifos) print_fifo(f, sp, o);
  for (const auto &l : d.links) print_link(l, o);
  for (const auto &b : d.buffers)
    o << "    %" << b.name << " = aie.buffer(%" << b.tile.ssa() << ") {sym_name = \"" << b.name << "\"} : "
      << memref_type(b.shape, b.dtype) << "\n";
  for (const auto &c : d.cores) CorePrinter(d, sp, o).print(c);
  print_sequence(d, sp, o);
  o << "  }\n}\n";
  return o.str();
}

}  // namespace htp::aie
