#include "synthetic_registry.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace htp::bench {

namespace {

constexpr size_t kTargets = 4;
constexpr size_t kFamilySize = 50; ///< Passes per dialect family.

size_t family_count(size_t components) {
  return std::max<size_t>(1, components / kFamilySize / 1);
}

std::string fact(size_t family, size_t position) {
  return "IR.F" + std::to_string(family) + "_" + std::to_string(position);
}

} // namespace

SyntheticStats build_synthetic_registry(Registry &registry, size_t components) {
  SyntheticStats stats;
  auto add = [&](Component c) {
    stats.capabilities += c.provides.size() + c.requires_.size() + c.conflicts.size() + c.accepts.size() +
                          c.applies_to.size() + c.invalidates.size();
    ++stats.components;
    auto r = registry.add(std::move(c));
    if (!r) throw std::runtime_error(r.error().render());
  };
  auto base = [](ComponentKind kind, std::string id, std::string plugin) {
    Component c;
    c.kind = kind;
    c.id = std::move(id);
    c.version = "1.0.0";
    c.plugin = PluginRef{plugin, "1.0.0", "/plugins/lib" + plugin + ".so", "sha-" + plugin};
    return c;
  };

  for (size_t t = 0; t < kTargets; ++t) {
    std::string target = "t" + std::to_string(t), plugin = "backend-" + target;
    Component be = base(ComponentKind::Backend, "be." + target, plugin);
    be.targets = {target};
    be.priority = 1;
    be.provides = {"Backend.B" + std::to_string(t) + "(variant=" + target + ")"};
    be.accepts = {"Uses.Dialect", "Uses.Intrinsic", "Uses.Layout", "Uses.Feature"};
    add(std::move(be));
    Component slow = base(ComponentKind::Backend, "be." + target + ".slow", plugin);
    slow.targets = {target};
    slow.provides = {"Backend.Slow" + std::to_string(t)};
    add(std::move(slow));
    Component bi = base(ComponentKind::Binding, "bind." + target, plugin);
    bi.targets = {target};
    bi.provides = {"Binding.B" + std::to_string(t)};
    add(std::move(bi));
    Component pi = base(ComponentKind::Pipeline, "pipe." + target, plugin);
    pi.targets = {target};
    pi.passes = {"emit." + target};
    add(std::move(pi));
    Component emit = base(ComponentKind::Pass, "emit." + target, plugin);
    emit.stage = PassStage::Emit;
    emit.requires_ = {"Backend.B" + std::to_string(t), "IR.Lowered"};
    emit.provides = {"Artifact.A" + std::to_string(t) + "(kind=code)", "Artifact.Manifest"};
    add(std::move(emit));
  }
  Component lower = base(ComponentKind::Pass, "core.lower", "core");
  lower.stage = PassStage::Lower;
  lower.applies_to = {"Target.Selected"};
  lower.requires_ = {"?IR.Canonical"};
  lower.provides = {"IR.Lowered"};
  lower.invalidates = {"IR.Canonical"};
  add(std::move(lower));

  const size_t families = family_count(components);
  // Per family: one dialect, one intrinsic set, then passes until the budget is spent.
  size_t budget = components > stats.components ? components - stats.components : 0;
  for (size_t f = 0; f < families && budget > 0; ++f) {
    std::string d = "d" + std::to_string(f), plugin = "dialect-" + d;
    Component dia = base(ComponentKind::Dialect, "dialect." + d, plugin);
    dia.name = d;
    dia.provides = {"Dialect.D" + std::to_string(f), "IR.Canonical(dialect=" + d + ")"};
    dia.accepts = {"Uses.Dialect(name=" + d + ")"};
    add(std::move(dia));
    --budget;
    if (budget == 0) break;
    Component ops = base(ComponentKind::IntrinsicSet, "intrinsics." + d, plugin);
    ops.name = d;
    ops.names = {"add", "mul", "exp"};
    ops.provides = {"Intrinsics.I" + std::to_string(f) + "(version=1.4.0)"};
    ops.requires_ = {"Dialect.D" + std::to_string(f)};
    add(std::move(ops));
    --budget;
    size_t passes = std::min(budget, families == f + 1 ? budget : kFamilySize - 2);
    for (size_t j = 0; j < passes; ++j) {
      Component p = base(ComponentKind::Pass, d + ".p" + std::to_string(j), plugin);
      p.stage = static_cast<PassStage>(std::min<size_t>(4, j * 5 / std::max<size_t>(1, passes)));
      bool library = j % 5 == 4; // library passes are pulled in by requirements only
      p.provides = {fact(f, j), "IR.Lib" + std::to_string(f) + "(version=1." + std::to_string(j % 7) +
                                    ".0,slot=" + std::to_string(j % 3) + ")"};
      if (library)
        p.applies_to = {"Uses.Feature(name=never" + std::to_string(f) + ")"};
      else
        p.applies_to = {"Uses.Dialect(name=" + d + ")"};
      if (j > 0) p.requires_.push_back(fact(f, j - 1));
      if (j >= 10 && j % 5 == 0)
        p.requires_.push_back("IR.Lib" + std::to_string(f) + "(version>=1.2,<1.5)");
      else if (j > 0)
        p.requires_.push_back("Intrinsics.I" + std::to_string(f) + "(version=^1.2)");
      if (j % 10 == 3) p.conflicts = {"Conflict.C" + std::to_string(f) + "(slot=" + std::to_string(j) + ")"};
      add(std::move(p));
    }
    budget -= passes;
  }
  return stats;
}

ResolveRequest synthetic_request(size_t components) {
  ResolveRequest r;
  r.target = "t0";
  const size_t families = family_count(components);
  const size_t used = std::max<size_t>(1, families / 4);
  for (size_t f = 0; f < used; ++f) {
    std::string d = "d" + std::to_string(f);
    auto o = parse_obligation("Uses.Dialect(name=" + d + ")",
                              Span{"prog.py", static_cast<uint32_t>(f + 1), 0, 0, 0});
    r.obligations.push_back(*o);
    auto i = parse_obligation("Uses.Intrinsic(set=" + d + ",op=add)",
                              Span{"prog.py", static_cast<uint32_t>(f + 1), 4, 0, 0});
    r.obligations.push_back(*i);
  }
  return r;
}

} // namespace htp::bench
