#include "register_webs.hpp"

#include "split_core_types.hpp"

#include <htp/fuse.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ptobe {

namespace {

/// Disjoint sets of definitions; a set's representative is its first definition (the lowest number).
struct Webs {
  std::vector<size_t> parent;
  size_t add() {
    parent.push_back(parent.size());
    return parent.size() - 1;
  }
  size_t find(size_t d) {
    while (parent[d] != d)
      d = parent[d] = parent[parent[d]];
    return d;
  }
  void unite(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

/// Per register, the definitions that may reach a point of the body.
using Reaching = std::map<std::string, std::set<size_t>>;

Reaching merged(Reaching a, const Reaching &b) {
  for (const auto &[reg, defs] : b)
    a[reg].insert(defs.begin(), defs.end());
  return a;
}

/// Reaching definitions of the tile registers of a kernel, statement by statement: which definitions each
/// read joins into one web.
class Analysis {
public:
  explicit Analysis(const htp::TileKernel &k) : k_(k) {}

  void walk(const std::vector<htp::TileOp> &ops, Reaching &r) {
    for (const htp::TileOp &o : ops) {
      const std::string op = bare_op(o.op);
      if (op == "if") {
        Reaching t = r, e = r;
        walk(o.then_body, t);
        walk(o.else_body, e);
        r = merged(std::move(t), e);
      } else if (op == "for") {
        // What reaches the loop's head: what reaches the loop, and (taken whole, so that the body is walked
        // once and a nest costs its size, not 2^depth walks) every definition in the body, which the previous
        // iteration may leave; after the loop, that or what the body leaves (it may run no iteration). The
        // definitions the body kills before the back edge join webs they could have stayed out of: fewer
        // registers, never a wrong one.
        Reaching head = merged(r, defined_in(o));
        Reaching end = head;
        walk(o.body, end);
        r = merged(std::move(head), end);
      } else {
        visit(o, r);
      }
    }
  }

  Webs webs;
  std::vector<std::string> def_register;        ///< definition -> its register
  std::map<const htp::TileOp *, size_t> def_of; ///< statement -> the definition it makes
  std::map<std::pair<const htp::TileOp *, std::string>, size_t>
      use_of; ///< (statement, register read) -> a web

private:
  /// The definition statement `o` makes (numbered on first sight).
  size_t definition(const htp::TileOp &o, const std::string &reg) {
    auto [at, fresh] = def_of.try_emplace(&o, 0);
    if (fresh) {
      at->second = webs.add();
      def_register.push_back(reg);
    }
    return at->second;
  }

  /// The definitions of tile registers in loop `loop`'s body, nested ones too (computed once per loop).
  const Reaching &defined_in(const htp::TileOp &loop) {
    auto [at, fresh] = inside_.try_emplace(&loop);
    if (!fresh) return at->second;
    Reaching out;
    htp::for_each_op(loop.body, [&](const htp::TileOp &x) {
      if (!x.body.empty() || !x.then_body.empty() || !x.else_body.empty() || !x.dst || !tile(*x.dst)) return;
      const std::string op = bare_op(x.op);
      if (op == "for" || op == "if" || op == "store") return;
      out[*x.dst].insert(definition(x, *x.dst));
    });
    return inside_[&loop] = std::move(out);
  }

  bool tile(const std::string &reg) const {
    const htp::TileLocal *l = k_.local(reg);
    return l && !l->is_scalar();
  }

  void visit(const htp::TileOp &o, Reaching &r) {
    std::set<std::string> uses, defs;
    htp::registers_of(o, k_, uses, defs);
    for (const std::string &u : uses) {
      auto it = r.find(u);
      if (!tile(u) || it == r.end() || it->second.empty()) continue;
      const size_t first = *it->second.begin();
      for (size_t d : it->second)
        webs.unite(first, d);
      use_of.try_emplace({&o, u}, first);
    }
    const bool matmul = bare_op(o.op) == "matmul";
    const bool in_place = o.accumulate.value_or(false) || (matmul && o.args && o.args->size() > 2);
    for (const std::string &d : defs) {
      if (!tile(d)) continue;
      const size_t def = definition(o, d);
      // A matmul accumulating into its destination adds to what the destination held: one register.
      if (in_place)
        if (auto u = use_of.find({&o, d}); u != use_of.end()) webs.unite(def, u->second);
      r[d] = {def};
    }
  }

  const htp::TileKernel &k_;
  std::map<const htp::TileOp *, Reaching> inside_;
};

/// Renames what each statement of `ops` (and of their nested statements) reads as `reads` says for it, and
/// what it writes as `writes` says: the maps hold tile registers only, which no tensor, loop variable or
/// scalar shares a name with, so renaming every name of the statement (fuse_detail::rename_op) reaches just
/// its reads; its destination is set after.
void rename(std::vector<htp::TileOp> &ops,
            const std::map<const htp::TileOp *, std::map<std::string, std::string>> &reads,
            const std::map<const htp::TileOp *, std::string> &writes) {
  for (htp::TileOp &o : ops) {
    const htp::TileOp *at = &o;
    const std::optional<std::string> dst = o.dst;
    if (auto it = reads.find(at); it != reads.end()) htp::fuse_detail::rename_op(o, it->second);
    o.dst = dst;
    if (auto it = writes.find(at); it != writes.end()) o.dst = it->second;
    for (auto *body : {&o.body, &o.then_body, &o.else_body})
      rename(*body, reads, writes);
  }
}

} // namespace

void split_register_webs(htp::TileKernel &k) {
  Analysis a(k);
  Reaching start;
  a.walk(k.body, start);
  // Each register's webs in the order of their first definitions; the first keeps the name.
  std::map<std::string, std::vector<size_t>> webs_of;
  for (size_t d = 0; d < a.def_register.size(); ++d) {
    std::vector<size_t> &v = webs_of[a.def_register[d]];
    const size_t w = a.webs.find(d);
    if (std::find(v.begin(), v.end(), w) == v.end()) v.push_back(w);
  }
  // Only a register some matmul reads or writes: a register's role (accumulator, cube operand, vector tile)
  // is what one per value changes, and a vector kernel's in-place updates (`d = exp(d)`) keep their UB tile.
  std::set<std::string> cube;
  htp::for_each_op(k.body, [&](const htp::TileOp &o) {
    if (bare_op(o.op) != "matmul") return;
    if (o.dst) cube.insert(*o.dst);
    if (o.args)
      for (const auto &x : *o.args)
        if (x.is_string()) cube.insert(x.get<std::string>());
  });
  std::map<size_t, std::string> name_of; // web -> its register
  std::set<std::string> taken;
  for (const htp::TileLocal &l : k.locals)
    taken.insert(l.name);
  for (const htp::TileParam &p : k.params)
    taken.insert(p.name);
  bool any = false;
  for (const auto &[reg, webs] : webs_of) {
    if (!cube.count(reg)) {
      for (size_t w : webs)
        name_of[w] = reg;
      continue;
    }
    name_of[webs[0]] = reg;
    const htp::TileLocal declared = *k.local(reg);
    for (size_t i = 1, n = 1; i < webs.size(); ++i) {
      std::string name;
      do
        name = reg + "_" + std::to_string(n++);
      while (taken.count(name));
      taken.insert(name);
      htp::TileLocal l = declared;
      l.name = name;
      k.locals.push_back(std::move(l));
      name_of[webs[i]] = name;
      any = true;
    }
  }
  if (!any) return;
  std::map<const htp::TileOp *, std::map<std::string, std::string>> reads;
  std::map<const htp::TileOp *, std::string> writes;
  for (const auto &[use, def] : a.use_of) {
    const std::string &to = name_of.at(a.webs.find(def));
    if (to != use.second) reads[use.first][use.second] = to;
  }
  for (const auto &[op, def] : a.def_of) {
    const std::string &to = name_of.at(a.webs.find(def));
    if (to != *op->dst) writes[op] = to;
  }
  rename(k.body, reads, writes);
}

} // namespace ptobe
