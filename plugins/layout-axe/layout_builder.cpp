#include "layout_builder.hpp"

#include <algorithm>
#include <set>

namespace htp::axe {

namespace {

std::string iter_text(const UserIter &it) {
  return "(" + std::to_string(it.extent) + ", " + std::to_string(it.stride) + ", " + it.axis + ")";
}

LayoutError beyond_mesh(const std::string &what, const Mesh &mesh) {
  std::string axes;
  for (size_t i = 0; i < mesh.rank(); ++i)
    axes += (i ? ", " : "") + Mesh::axis_name(i);
  return fail(
      "layout.mesh-axis",
      what + ", but the kernel's mesh has " + std::to_string(mesh.rank()) + " axes" +
          (mesh.rank() ? " (" + mesh.describe() + ": " + axes + ")" : " (no @kernel(mapping=[...]))"));
}

/// Mesh axes no shard iter uses, as full replica iters.
std::vector<AxeIter> unused_mesh_axes(const std::vector<AxeIter> &shard, const Mesh &mesh) {
  std::vector<AxeIter> out;
  for (size_t i = 0; i < mesh.rank(); ++i) {
    std::string name = Mesh::axis_name(i);
    bool used = std::any_of(shard.begin(), shard.end(), [&](const AxeIter &s) { return s.axis == name; });
    if (!used) out.push_back({mesh.extents()[i], 1, name, -1});
  }
  return out;
}

/// A `core` iter (core = row-major index over the mesh) as mesh iters, when it aligns with the mesh
/// axes; otherwise unchanged.
std::vector<UserIter> normalize_core(const UserIter &it, const Mesh &mesh) {
  if (it.axis != "core" || mesh.rank() == 0) return {it};
  // Row-major strides of the mesh axes: the last axis is the fastest.
  std::vector<int64_t> radix(mesh.rank(), 1);
  for (size_t i = mesh.rank() - 1; i > 0; --i)
    radix[i - 1] = radix[i] * mesh.extents()[i];
  std::vector<UserIter> minor_first;
  int64_t extent = it.extent;
  int64_t stride = it.stride;
  for (size_t i = mesh.rank(); i-- > 0 && extent > 1;) {
    if (radix[i] != stride) {
      if (radix[i] < stride) continue;
      return {it};
    }
    int64_t p = mesh.extents()[i];
    int64_t take = std::min(extent, p);
    if (extent % take != 0 || (extent > p && take != p)) return {it};
    minor_first.push_back({take, 1, Mesh::axis_name(i)});
    extent /= take;
    stride *= p;
  }
  if (extent != 1) return {it};
  return {minor_first.rbegin(), minor_first.rend()};
}

std::vector<UserIter> normalize_all(const std::vector<UserIter> &iters, const Mesh &mesh) {
  std::vector<UserIter> out;
  for (const auto &it : iters)
    for (auto &n : normalize_core(it, mesh))
      out.push_back(std::move(n));
  return out;
}

Result<bool> check_axis_known(const std::string &axis, const Mesh &mesh) {
  if (mesh.extent_of(axis)) return true;
  if (axis.rfind("mesh.", 0) == 0) return beyond_mesh("axis '" + axis + "' is not a mesh axis", mesh);
  return fail("layout.axis", "unknown axis '" + axis +
                                 "': device axes are mesh.x, mesh.y, ... and core; local "
                                 "axes are m (memory offset) and <space>.bank");
}

/// Checks that the iters and offset on one device axis address distinct coordinates within its extent.
Result<bool> check_axis_coverage(const std::string &axis, const std::vector<AxeIter> &iters, int64_t offset,
                                 int64_t extent) {
  // Counted and bounded arithmetically first, so the enumeration below is at most kMaxAxisPoints long
  // whatever extents the program wrote.
  int64_t count = 1, top = offset;
  for (const auto &it : iters) {
    if (it.extent <= 0 || it.stride < 0)
      return fail("layout.iters", "the iter (" + std::to_string(it.extent) + ", " + std::to_string(it.stride) +
                                      ", " + axis + ") needs a positive extent and a non-negative stride");
    int64_t reach = 0;
    if (__builtin_mul_overflow(count, it.extent, &count) || count > kMaxAxisPoints)
      return fail("layout.overlap", "axis '" + axis + "' is over-subscribed: its iters address more than " +
                                        std::to_string(kMaxAxisPoints) + " coordinates");
    if (__builtin_mul_overflow(it.extent - 1, it.stride, &reach) || __builtin_add_overflow(top, reach, &top) ||
        top >= extent)
      return fail("layout.overlap", "the iters on axis '" + axis + "' reach beyond its extent " +
                                        std::to_string(extent));
  }
  if (count > extent)
    return fail("layout.overlap", "axis '" + axis + "' is over-subscribed: its iters address " +
                                      std::to_string(count) + " coordinates, its extent is " + std::to_string(extent));
  std::vector<int64_t> coords = {offset};
  for (const auto &it : iters) {
    std::vector<int64_t> next;
    next.reserve(coords.size() * static_cast<size_t>(it.extent));
    for (int64_t c : coords)
      for (int64_t k = 0; k < it.extent; ++k)
        next.push_back(c + k * it.stride);
    coords = std::move(next);
  }
  std::set<int64_t> distinct(coords.begin(), coords.end());
  if (distinct.size() != coords.size())
    return fail("layout.overlap", "the iters on axis '" + axis + "' address some coordinates twice");
  return true;
}

/// Appends the iters of one dim to the layout, classifying device, `m` and bank iters.
Result<bool> place_dim_iters(AxeLayout &l, int d, const std::vector<UserIter> &iters,
                             std::vector<std::vector<AxeIter>> &local_iters) {
  const UserIter *local = nullptr;  // the first local iter of the dim (major to minor)
  for (size_t i = 0; i < iters.size(); ++i) {
    const UserIter &it = iters[i];
    if (it.extent == 1 && (is_device_axis(it.axis) || is_local_axis(it.axis))) continue;  // addresses nothing
    AxeIter a{it.extent, it.stride, it.axis, d};
    if (is_device_axis(it.axis) && local) {
      int64_t block = 1;  // the elements each core takes in turn: the extents minor to the device iter
      for (size_t j = i + 1; j < iters.size(); ++j) block *= iters[j].extent;
      return fail("layout.cyclic",
                  "shard iter " + iter_text(it) + " is minor to the local iter " + iter_text(*local) + " in dim " +
                      std::to_string(d) + ": the dim is dealt to the " + std::to_string(it.extent) +
                      " cores cyclically (" + (block == 1 ? "one index" : "blocks of " + std::to_string(block) + " indices") +
                      " each in turn), which HTP does not lower; a device iter major to its dim's local iters is a "
                      "block shard");
    }
    if (is_local_axis(it.axis) && !local) local = &it;
    if (is_device_axis(it.axis)) {
      l.shard.push_back(a);
    } else if (it.axis == "m") {
      local_iters[static_cast<size_t>(d)].push_back(a);
    } else if (is_local_axis(it.axis)) {
      l.mem.banks.push_back(a);
      if (!l.hw.space) {
        std::string space = it.axis.substr(0, it.axis.size() - 5);
        std::transform(space.begin(), space.end(), space.begin(), ::toupper);
        l.hw.space = space;
      }
    } else {
      return fail("layout.axis", "unknown axis '" + it.axis + "' in shard iter " + iter_text(it) +
                                     ": device axes are mesh.x, mesh.y, ... and core; local axes are m and "
                                     "<space>.bank");
    }
  }
  return true;
}

} // namespace

Result<AxeLayout> from_dist(const DistSpec &spec, const TensorInfo &t, const Mesh &mesh) {
  if (!t.shape.empty() && spec.size() != t.shape.size())
    return fail("layout.rank", "layout '" + print_dist(spec) + "' has " + std::to_string(spec.size()) +
                                   " elements but the tensor has " + std::to_string(t.shape.size()) +
                                   " dims; write one 'R' or 'S(i)' per dim");
  AxeLayout l;
  l.rank = static_cast<int>(spec.size());
  l.shape = t.shape;
  l.dtype = t.dtype;
  l.text = print_dist(spec);
  for (size_t d = 0; d < spec.size(); ++d) {
    if (!spec[d].axis) continue;
    size_t axis = *spec[d].axis;
    if (axis >= mesh.rank()) {
      auto e = beyond_mesh("S(" + std::to_string(axis) + ") shards dim " + std::to_string(d) +
                               " on mesh axis " + std::to_string(axis),
                           mesh);
      e.column = spec[d].column;
      return e;
    }
    l.shard.push_back({mesh.extents()[axis], 1, Mesh::axis_name(axis), static_cast<int>(d)});
  }
  l.replica = unused_mesh_axes(l.shard, mesh);
  return validate(std::move(l), mesh);
}

Result<AxeLayout> from_axe_iters(const std::vector<UserIter> &shard_in,
                                 const std::vector<UserIter> &replica_in,
                                 const std::map<std::string, int64_t> &offset, const TensorInfo &t,
                                 const Mesh &mesh) {
  if (t.shape.empty())
    return fail("layout.shape", "Layout.axe needs the tensor's shape to group its shard iters");
  AxeLayout l;
  l.rank = static_cast<int>(t.shape.size());
  l.shape = t.shape;
  l.dtype = t.dtype;
  auto shard = normalize_all(shard_in, mesh);
  std::vector<std::vector<AxeIter>> local_iters(t.shape.size());  // the `m` iters of each dim, major first
  size_t next = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t covered = 1;
    std::vector<UserIter> dim;
    // A dim takes iters until they multiply to its size; iters of extent 1 address nothing, and one after a
    // size-1 dim or the last dim belongs to it (a [32, 1] tensor's trailing (1, 1, "m")).
    auto absorbs_unit = [&] {
      return next < shard.size() && shard[next].extent == 1 && (t.shape[d] == 1 || d + 1 == t.shape.size());
    };
    while (covered < t.shape[d] || absorbs_unit()) {
      if (next >= shard.size())
        return fail("layout.iters", "the shard iters cover " + std::to_string(covered) + " of the " +
                                        std::to_string(t.shape[d]) + " elements of dim " + std::to_string(d) +
                                        "; add iters (local ones on axis 'm') until every dim is covered");
      const UserIter &it = shard[next++];
      if (it.extent < 1 || it.stride < 1)
        return fail("layout.iters", "shard iter " + iter_text(it) + " needs a positive extent and stride");
      covered *= it.extent;
      if (t.shape[d] % covered != 0)
        return fail("layout.iters", "shard iter " + iter_text(it) + " straddles dim " + std::to_string(d) +
                                        " (size " + std::to_string(t.shape[d]) +
                                        "): the iters of one dim must "
                                        "multiply to its size");
      dim.push_back(it);
    }
    auto placed = place_dim_iters(l, static_cast<int>(d), dim, local_iters);
    if (!placed) return placed.error();
  }
  if (next != shard.size())
    return fail("layout.iters", "shard iter " + iter_text(shard[next]) +
                                    " is beyond the last dim: the iters "
                                    "cover more elements than the tensor has");
  // One `m` iter per dim: element strides; several on some dim: a tiled layout that keeps them all.
  if (std::any_of(local_iters.begin(), local_iters.end(), [](const auto &v) { return v.size() > 1; })) {
    for (const auto &v : local_iters)
      l.mem.iters.insert(l.mem.iters.end(), v.begin(), v.end());
  } else if (std::any_of(local_iters.begin(), local_iters.end(), [](const auto &v) { return !v.empty(); })) {
    std::vector<int64_t> strides;
    for (const auto &v : local_iters)
      strides.push_back(v.empty() ? 1 : v[0].stride);
    l.mem.strides = strides;
  }
  for (const auto &it : normalize_all(replica_in, mesh)) {
    if (!is_device_axis(it.axis))
      return fail("layout.axis",
                  "replica iter " + iter_text(it) + " must be on a device axis (mesh.*, core)");
    l.replica.push_back({it.extent, it.stride, it.axis, -1});
  }
  l.offset = offset;
  return validate(std::move(l), mesh);
}

Result<AxeLayout> complete(AxeLayout partial, const TensorInfo &t, const Mesh &mesh) {
  int rank = static_cast<int>(t.shape.size());
  if (partial.rank != 0 && !t.shape.empty() && partial.rank != rank)
    return fail("layout.rank", "the " + partial.source_kind + " layout has rank " +
                                   std::to_string(partial.rank) + " but the tensor has " +
                                   std::to_string(rank) + " dims");
  if (!t.shape.empty()) partial.rank = rank;
  partial.shape = t.shape;
  partial.dtype = t.dtype;
  if (partial.replica.empty()) partial.replica = unused_mesh_axes(partial.shard, mesh);
  return validate(std::move(partial), mesh);
}

Result<AxeLayout> validate(AxeLayout l, const Mesh &mesh) {
  std::map<std::string, std::vector<AxeIter>> by_axis;
  for (const auto *list : {&l.shard, &l.replica})
    for (const auto &it : *list) {
      auto known = check_axis_known(it.axis, mesh);
      if (!known) return known.error();
      if (it.dim >= l.rank)
        return fail("layout.rank", "shard iter on " + it.axis + " names a dim beyond the rank");
      by_axis[it.axis].push_back(it);
    }
  for (const auto &[axis, k] : l.offset) {
    auto known = check_axis_known(axis, mesh);
    if (!known) return known.error();
    if (k < 0) return fail("layout.overlap", "offset on axis '" + axis + "' must not be negative");
    by_axis[axis];
  }
  for (const auto &[axis, iters] : by_axis) {
    auto it = l.offset.find(axis);
    auto ok = check_axis_coverage(axis, iters, it == l.offset.end() ? 0 : it->second, *mesh.extent_of(axis));
    if (!ok) return ok.error();
  }
  if (!l.shape.empty()) {
    auto local = local_shape(l);
    if (!local) return local.error();
  }
  auto rank_list = [&](const std::optional<std::vector<int64_t>> &v, const char *what) -> Result<bool> {
    if (v && static_cast<int>(v->size()) != l.rank)
      return fail("layout.mem", std::string("mem.") + what + " has " + std::to_string(v->size()) +
                                    " entries but the layout has rank " + std::to_string(l.rank));
    return true;
  };
  if (auto r = rank_list(l.mem.strides, "strides"); !r) return r.error();
  if (!l.mem.iters.empty()) {  // a tiled layout: each dim's iters cover its local extent
    auto local = local_shape(l);
    for (int d = 0; local && d < l.rank; ++d) {
      int64_t covered = 1;
      bool any = false;
      for (const AxeIter &it : l.mem.iters)
        if (it.dim == d) covered *= it.extent, any = true;
      if (any && covered != (*local)[static_cast<size_t>(d)])
        return fail("layout.mem", "the local iters of dim " + std::to_string(d) + " cover " + std::to_string(covered) +
                                      " elements, but its local extent is " +
                                      std::to_string((*local)[static_cast<size_t>(d)]));
    }
    if (l.mem.strides || l.mem.order)
      return fail("layout.mem", "a tiled local layout (several `m` iters on a dim) takes no strides= or order=");
  }
  if (auto r = rank_list(l.mem.order, "order"); !r) return r.error();
  if (l.mem.order) {
    std::vector<int64_t> sorted = *l.mem.order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != static_cast<int64_t>(i))
        return fail("layout.mem",
                    "mem.order must be a permutation of the dims 0.." + std::to_string(l.rank - 1));
  }
  return l;
}

} // namespace htp::axe
