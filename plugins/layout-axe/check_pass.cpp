// axe.check: judges the facts axe.infer recorded — every pending reduction discharged before a value is
// stored or returned, stores agree with their tensor's layout, and the buffers placed in explicit memory
// spaces fit the target's hardware profile.
#include <htp/layout_signatures.hpp>

#include <map>

#include "hardware_profile.hpp"
#include "layout_rules.hpp"
#include "layout_surface.hpp"
#include "passes.hpp"

namespace htp::axe {

namespace {

std::optional<nlohmann::json> json_attr(const std::optional<std::string> &text) {
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  return j.is_discarded() ? std::nullopt : std::optional<nlohmann::json>(j);
}

std::string bytes_text(int64_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB" : std::to_string(bytes) + " bytes";
}

/// The profile named by option axe.profile, else the target's, else nullopt; the label names its origin.
std::optional<HardwareProfile> select_profile(htp::PassContext &ctx, Reporter &r, std::string &label) {
  if (auto option = json_attr(ctx.option("axe.profile"))) {
    auto p = profile_from_option(*option);
    if (!p) {
      r.error(ctx.module().root(), p.error());
      label = "";  // (reported: the footprints are not checked against it, nor warned about)
      return std::nullopt;
    }
    label = "profile " + p->name;
    return *p;
  }
  auto target = json_attr(ctx.option("target"));
  std::string name = target && target->is_string() ? target->get<std::string>() : "";
  label = "target " + name;
  auto p = profile_for_target(name);
  if (p) label += " (profile " + p->name + ")";
  return p;
}

/// Footprints of one function's buffers per memory space, checked against the profile as they add up.
class FootprintCheck {
public:
  FootprintCheck(const std::optional<HardwareProfile> &profile, const std::string &label, Reporter &r)
      : profile_(profile), label_(label), r_(r) {}

  void add(htp::NodeRef at, const nlohmann::json &alloc, const std::string &fn) {
    std::string space = alloc.value("space", "");
    std::string name = alloc.value("name", "");
    int64_t bytes = alloc.value("bytes", int64_t{0});
    used_[space] += bytes;
    if (!profile_) {
      if (!warned_ && !label_.empty())  // (empty: the axe.profile option was wrong, reported as such)
        r_.ctx().warning(at, "layout.no-profile",
                         "no hardware profile for " + label_ + ": the footprint of '" + name + "' in " +
                             space + " is not checked (pass --option axe.profile=\"pto\" or \"aie\")");
      warned_ = true;
      return;
    }
    if (!profile_->has_space(space)) {
      std::string spaces;
      for (const auto &[s, _] : profile_->capacity)
        spaces += (spaces.empty() ? "" : ", ") + s;
      for (const auto &[s, _] : profile_->unbounded)
        spaces += ", " + s;
      r_.error(at, "layout.space",
               "memory space '" + space + "' does not exist on " + label_ + " (spaces: " + spaces + ")");
      return;
    }
    auto cap = profile_->capacity.find(space);
    if (cap == profile_->capacity.end() || used_[space] <= cap->second) {
      names_[space] += (names_[space].empty() ? "" : ", ") + name + " " + bytes_text(bytes);
      return;
    }
    std::string others = names_[space].empty() ? "" : " (with " + names_[space] + ")";
    r_.error(at, "layout.capacity",
             "'" + name + "' needs " + bytes_text(bytes) + " of " + space + " per core (local shape " +
                 alloc.value("local_shape", nlohmann::json::array()).dump() + " " + alloc.value("dtype", "") +
                 "); '" + fn + "' then uses " + bytes_text(used_[space]) + others + ", over the " +
                 bytes_text(cap->second) + " of " + space + " on " + label_);
  }

  /// Bytes per memory space, by space name.
  std::vector<std::pair<std::string, int64_t>> used() const { return {used_.begin(), used_.end()}; }

private:
  const std::optional<HardwareProfile> &profile_;
  const std::string &label_;
  Reporter &r_;
  std::map<std::string, int64_t> used_;
  std::map<std::string, std::string> names_;
  bool warned_ = false;
};

/// Checks the store and return facts of one node.
void check_exits(htp::NodeRef n, const Mesh &mesh, Reporter &r) {
  if (auto store = json_attr(n.attr("layout.store"))) {
    auto value = layout_from_json((*store)["value"]);
    auto dst = layout_from_json((*store)["dst"]);
    if (value && dst)
      if (auto e = check_store(*value, *dst, store->value("target", ""), mesh)) r.error(n, *e);
  }
  if (auto ret = json_attr(n.attr("layout.return"))) {
    auto value = layout_from_json(*ret);
    if (value)
      if (auto e = check_discharged(*value, "returning", mesh)) r.error(n, *e);
  }
}

} // namespace

void check(htp::PassContext &ctx) {
  Reporter r(ctx);
  auto module = ctx.module();
  std::optional<htp::LayoutSignatures> signatures;
  try {
    signatures = htp::layout_signatures(module);
  } catch (const htp::PassError &e) {
    r.error(module.root(), "layout.internal", std::string("axe.check cannot read layout.signatures: ") + e.what());
    return;
  }
  if (!signatures) {
    r.error(module.root(), "layout.internal", "axe.check found no layout.signatures: axe.infer did not run");
    return;
  }
  std::string label;
  auto profile = select_profile(ctx, r, label);
  for (auto fn : module.root().items("body")) {
    const std::string name = fn.is("FunctionDef") ? fn.text("name").value_or("") : "";
    htp::LayoutFunction *f = signatures->function(name);
    if (!f) continue;
    Mesh mesh = Mesh::from_mapping(f->mapping.value_or(std::vector<int64_t>{}));
    FootprintCheck footprint(profile, label, r);
    fn.walk([&](htp::NodeRef n) {
      check_exits(n, mesh, r);
      if (auto alloc = json_attr(n.attr("layout.alloc"))) footprint.add(n, *alloc, name);
    });
    f->footprint = footprint.used();
  }
  signatures->checked = true;
  nlohmann::ordered_json doc;
  htp::to_json(doc, *signatures);
  publish_signatures(ctx, r, doc);
}

} // namespace htp::axe
