#include "axe_layout.hpp"

#include <algorithm>

namespace htp::axe {

Mesh Mesh::from_mapping(const std::vector<int64_t> &mapping) {
  Mesh m;
  m.extents_ = mapping;
  return m;
}

std::string Mesh::axis_name(size_t i) {
  static const char *kNames[] = {"mesh.x", "mesh.y", "mesh.z", "mesh.w"};
  return i < 4 ? kNames[i] : "mesh." + std::to_string(i);
}

std::optional<size_t> Mesh::index_of(std::string_view axis) const {
  for (size_t i = 0; i < extents_.size(); ++i)
    if (axis_name(i) == axis) return i;
  return std::nullopt;
}

std::optional<int64_t> Mesh::extent_of(std::string_view axis) const {
  if (axis == "core") {
    int64_t n = 1;
    for (int64_t e : extents_)
      n *= e;
    return n;
  }
  if (auto i = index_of(axis)) return extents_[*i];
  return std::nullopt;
}

std::string Mesh::describe() const {
  std::string s = "mapping=[";
  for (size_t i = 0; i < extents_.size(); ++i)
    s += (i ? ", " : "") + std::to_string(extents_[i]);
  return s + "]";
}

bool is_device_axis(std::string_view axis) {
  return axis == "core" || axis.rfind("mesh.", 0) == 0;
}

bool is_local_axis(std::string_view axis) {
  return axis == "m" || (axis.size() > 5 && axis.substr(axis.size() - 5) == ".bank");
}

std::vector<AxeIter> AxeLayout::dim_iters(int d) const {
  std::vector<AxeIter> out;
  for (const auto &it : shard)
    if (it.dim == d) out.push_back(it);
  return out;
}

bool AxeLayout::replicated_over(std::string_view axis) const {
  return std::any_of(replica.begin(), replica.end(), [&](const AxeIter &r) { return r.axis == axis; });
}

std::optional<std::vector<std::optional<size_t>>> dist_view(const AxeLayout &l, const Mesh &mesh) {
  if (!l.offset.empty()) return std::nullopt;
  std::vector<std::optional<size_t>> view(static_cast<size_t>(l.rank));
  std::vector<bool> used(mesh.rank(), false);
  for (int d = 0; d < l.rank; ++d) {
    auto iters = l.dim_iters(d);
    if (iters.empty()) continue;
    if (iters.size() != 1 || iters[0].stride != 1) return std::nullopt;
    auto axis = mesh.index_of(iters[0].axis);
    if (!axis || iters[0].extent != mesh.extents()[*axis]) return std::nullopt;
    view[static_cast<size_t>(d)] = *axis;
    used[*axis] = true;
  }
  // The short form replicates over every mesh axis no dim shards (and owes nothing on it).
  for (size_t i = 0; i < mesh.rank(); ++i) {
    if (used[i]) continue;
    bool pending = std::any_of(l.pending.begin(), l.pending.end(),
                               [&](const PendingEffect &p) { return p.iter.axis == Mesh::axis_name(i); });
    if (!pending && !l.replicated_over(Mesh::axis_name(i))) return std::nullopt;
  }
  return view;
}

std::string dist_text(const std::vector<std::optional<size_t>> &view) {
  std::string s;
  for (const auto &d : view)
    s += d ? "S(" + std::to_string(*d) + ")" : "R";
  return s;
}

namespace {

std::string iter_text(const AxeIter &it) {
  std::string s = "(" + std::to_string(it.extent) + "," + std::to_string(it.stride) + "," + it.axis + ")";
  return it.dim >= 0 ? s + "@" + std::to_string(it.dim) : s;
}

std::string iters_text(const std::vector<AxeIter> &iters) {
  std::string s = "[";
  for (size_t i = 0; i < iters.size(); ++i)
    s += (i ? ", " : "") + iter_text(iters[i]);
  return s + "]";
}

} // namespace

std::string describe(const AxeLayout &l, const Mesh &mesh) {
  std::string owed;
  for (const auto &p : l.pending)
    owed += (owed.empty() ? " owing " : " and ") + p.op + " over " + p.iter.axis;
  if (auto view = dist_view(l, mesh)) return dist_text(*view) + owed;
  std::string s = "axe(shard=" + iters_text(l.shard) + ", replica=" + iters_text(l.replica);
  if (!l.offset.empty()) {
    s += ", offset={";
    bool first = true;
    for (const auto &[axis, k] : l.offset) {
      s += (first ? "" : ", ") + axis + ": " + std::to_string(k);
      first = false;
    }
    s += "}";
  }
  return s + ")" + owed;
}

Result<std::vector<int64_t>> local_shape(const AxeLayout &l) {
  if (static_cast<int>(l.shape.size()) != l.rank)
    return fail("layout.shape", "the local shape needs the tensor's shape");
  std::vector<int64_t> out = l.shape;
  for (int d = 0; d < l.rank; ++d) {
    int64_t parts = 1;
    for (const auto &it : l.dim_iters(d))
      parts *= it.extent;
    if (parts <= 0 || out[static_cast<size_t>(d)] % parts != 0)
      return fail("layout.divisibility", "dim " + std::to_string(d) + " of size " +
                                             std::to_string(out[static_cast<size_t>(d)]) +
                                             " is not divisible into " + std::to_string(parts) + " shards");
    out[static_cast<size_t>(d)] /= parts;
  }
  return out;
}

std::optional<int64_t> dtype_size(std::string_view dtype) {
  static const std::map<std::string, int64_t, std::less<>> kSizes = {
      {"f16", 2}, {"bf16", 2}, {"f32", 4}, {"i8", 1}, {"i16", 2}, {"i32", 4}, {"i64", 8}, {"u8", 1}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

// ---- JSON ------------------------------------------------------------------------------------------

namespace {

nlohmann::ordered_json iter_json(const AxeIter &it) {
  nlohmann::ordered_json j = {{"extent", it.extent}, {"stride", it.stride}, {"axis", it.axis}};
  if (it.dim >= 0) j["dim"] = it.dim;
  return j;
}

nlohmann::ordered_json iters_json(const std::vector<AxeIter> &iters) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto &it : iters)
    a.push_back(iter_json(it));
  return a;
}

template <class T> nlohmann::ordered_json opt_json(const std::optional<T> &v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

Result<AxeIter> iter_from_json(const nlohmann::json &j, bool with_dim) {
  if (!j.is_object() || !j.contains("extent") || !j.contains("axis") || !j["extent"].is_number_integer() ||
      !j["axis"].is_string())
    return fail("layout.schema", "an iter needs an integer 'extent' and a string 'axis': " + j.dump());
  AxeIter it;
  it.extent = j["extent"].get<int64_t>();
  it.stride = j.value("stride", int64_t{1});
  it.axis = j["axis"].get<std::string>();
  if (with_dim) {
    if (!j.contains("dim") || !j["dim"].is_number_integer())
      return fail("layout.schema", "a shard iter needs an integer 'dim': " + j.dump());
    it.dim = j["dim"].get<int>();
  }
  if (it.extent < 1 || it.stride < 1)
    return fail("layout.schema", "an iter's extent and stride must be positive: " + j.dump());
  return it;
}

Result<std::vector<AxeIter>> iters_from_json(const nlohmann::json &j, const char *key, bool with_dim) {
  std::vector<AxeIter> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_array()) return fail("layout.schema", std::string("'") + key + "' must be an array");
  for (const auto &e : j[key]) {
    auto it = iter_from_json(e, with_dim);
    if (!it) return it.error();
    out.push_back(*it);
  }
  return out;
}

Result<MemFacet> mem_from_json(const nlohmann::json &j) {
  MemFacet m;
  if (!j.is_object()) return m;
  try {
    if (j.contains("strides") && !j["strides"].is_null())
      m.strides = j["strides"].get<std::vector<int64_t>>();
    if (j.contains("order") && !j["order"].is_null()) m.order = j["order"].get<std::vector<int64_t>>();
  } catch (const nlohmann::json::exception &) {
    return fail("layout.schema", "mem.strides and mem.order must be integer lists");
  }
  m.swizzle = j.value("swizzle", nlohmann::json());
  m.pack = j.value("pack", nlohmann::json());
  auto banks = iters_from_json(j, "banks", true);
  if (!banks) return banks.error();
  m.banks = *banks;
  auto iters = iters_from_json(j, "iters", true);
  if (!iters) return iters.error();
  m.iters = *iters;
  return m;
}

} // namespace

nlohmann::ordered_json to_json(const AxeLayout &l, const Mesh &mesh) {
  nlohmann::ordered_json j;
  j["kind"] = "axe";
  if (l.source_kind != "axe") j["source_kind"] = l.source_kind;
  auto view = dist_view(l, mesh);
  j["text"] = !l.text.empty() ? l.text : view ? dist_text(*view) : describe(l, mesh);
  j["dist"] = view ? nlohmann::ordered_json(dist_text(*view)) : nlohmann::ordered_json(nullptr);
  j["rank"] = l.rank;
  if (!l.shape.empty()) j["shape"] = l.shape;
  if (auto ls = local_shape(l)) j["local_shape"] = *ls;
  if (!l.dtype.empty()) j["dtype"] = l.dtype;
  if (!l.tile.empty()) j["tile"] = l.tile;
  j["shard"] = iters_json(l.shard);
  j["replica"] = iters_json(l.replica);
  j["offset"] = nlohmann::ordered_json::object();
  for (const auto &[axis, k] : l.offset)
    j["offset"][axis] = k;
  j["mem"] = {{"strides", opt_json(l.mem.strides)},
              {"order", opt_json(l.mem.order)},
              {"swizzle", l.mem.swizzle},
              {"pack", l.mem.pack}};
  if (!l.mem.banks.empty()) j["mem"]["banks"] = iters_json(l.mem.banks);
  if (!l.mem.iters.empty()) j["mem"]["iters"] = iters_json(l.mem.iters);
  j["hw"] = {{"space", l.hw.space.value_or("GM")}};
  nlohmann::ordered_json pending = nlohmann::ordered_json::array();
  for (const auto &p : l.pending)
    pending.push_back({{"op", p.op}, {"axis", p.iter.axis}, {"extent", p.iter.extent}, {"source", p.source}});
  j["pending"] = std::move(pending);
  return j;
}

Result<AxeLayout> layout_from_json(const nlohmann::json &j) {
  if (!j.is_object()) return fail("layout.schema", "a layout must be a JSON object");
  if (j.value("kind", std::string("axe")) != "axe")
    return fail("layout.schema",
                "a canonical layout has kind 'axe', not '" + j.value("kind", std::string()) + "'");
  AxeLayout l;
  auto shard = iters_from_json(j, "shard", true);
  if (!shard) return shard.error();
  auto replica = iters_from_json(j, "replica", false);
  if (!replica) return replica.error();
  auto mem = mem_from_json(j.value("mem", nlohmann::json::object()));
  if (!mem) return mem.error();
  l.shard = *shard;
  l.replica = *replica;
  l.mem = *mem;
  try {
    if (j.contains("shape")) l.shape = j["shape"].get<std::vector<int64_t>>();
    l.rank = j.contains("rank") ? j["rank"].get<int>() : static_cast<int>(l.shape.size());
    if (j.contains("offset"))
      for (const auto &[axis, k] : j["offset"].items())
        l.offset[axis] = k.get<int64_t>();
    if (j.contains("hw") && j["hw"].contains("space") && j["hw"]["space"].is_string())
      l.hw.space = j["hw"]["space"].get<std::string>();
    l.dtype = j.value("dtype", std::string());
    if (j.contains("tile")) l.tile = j["tile"].get<std::vector<int64_t>>();
    l.text = j.value("text", std::string());
    l.source_kind = j.value("source_kind", std::string("axe"));
    for (const auto &p : j.value("pending", nlohmann::json::array()))
      l.pending.push_back({p.at("op").get<std::string>(),
                           AxeIter{p.value("extent", int64_t{1}), 1, p.at("axis").get<std::string>(), -1},
                           p.value("source", std::string())});
  } catch (const nlohmann::json::exception &e) {
    return fail("layout.schema", std::string("malformed layout object: ") + e.what());
  }
  for (const auto &it : l.shard)
    if (it.dim < 0 || (l.rank > 0 && it.dim >= l.rank))
      return fail("layout.schema", "shard iter on " + it.axis + " names dim " + std::to_string(it.dim) +
                                       " of a rank-" + std::to_string(l.rank) + " layout");
  return l;
}

} // namespace htp::axe
