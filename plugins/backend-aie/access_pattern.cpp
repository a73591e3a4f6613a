#include "access_pattern.hpp"

#include <algorithm>

namespace htp::aie {

namespace {

struct Level {
  int64_t size;
  int64_t stride;
};

/// Whether seq splits into blocks of `r` elements, each an arithmetic run of step `d`.
bool blocks_are_runs(const std::vector<int64_t> &seq, size_t r, int64_t d) {
  if (seq.size() % r != 0) return false;
  for (size_t b = 0; b < seq.size(); b += r)
    for (size_t k = 1; k < r; ++k)
      if (seq[b + k] != seq[b] + static_cast<int64_t>(k) * d) return false;
  return true;
}

/// Factors the address sequence into nested arithmetic runs, innermost first (unbounded dims).
std::optional<std::vector<Level>> factor(std::vector<int64_t> seq) {
  std::vector<Level> levels;
  while (seq.size() > 1) {
    if (levels.size() == 8) return std::nullopt;
    const int64_t d = seq[1] - seq[0];
    size_t run = 1;
    while (run < seq.size() && seq[run] - seq[run - 1] == d) ++run;
    size_t r = run;
    while (r > 1 && !blocks_are_runs(seq, r, d)) --r;
    if (r <= 1) return std::nullopt;
    levels.push_back({static_cast<int64_t>(r), d});
    std::vector<int64_t> starts;
    for (size_t b = 0; b < seq.size(); b += r) starts.push_back(seq[b]);
    seq = std::move(starts);
  }
  return levels;
}

/// Largest divisor f of n that is <= cap and for which `ok(f)` holds (1 when none).
template <class Ok> int64_t divisor_at_most(int64_t n, int64_t cap, Ok ok) {
  for (int64_t f = std::min(n, cap); f > 1; --f)
    if (n % f == 0 && ok(f)) return f;
  return 1;
}

/// Splits levels whose size exceeds the limit of their position (dim 0 counted in granules); checks
/// the strides.
bool split_to_limits(std::vector<Level> &levels, int64_t elem_bytes, const PatternLimits &lim) {
  const int64_t eb = std::max<int64_t>(1, elem_bytes);
  const int64_t inner_cap = std::max<int64_t>(1, lim.max_wrap * lim.granule_bytes / eb);
  auto cap = [&](size_t i) {
    if (i == 0) return inner_cap;
    return lim.max_repeat > 0 && i == 3 ? lim.max_repeat : lim.max_wrap;
  };
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].size <= cap(i)) continue;
    // The level split off outside steps by stride * f elements, which must be whole granules (an f16 run of
    // 2310 elements splits as 770 x 3, not 1155 x 2: 1155 f16 are 2310 bytes, not whole 32-bit words).
    const int64_t f = divisor_at_most(levels[i].size, cap(i), [&](int64_t f) {
      return levels[i].stride * f * eb % lim.granule_bytes == 0;
    });
    if (f == 1) return false;
    Level outer{levels[i].size / f, levels[i].stride * f};
    levels[i].size = f;
    levels.insert(levels.begin() + static_cast<long>(i) + 1, outer);
  }
  if (levels.size() > static_cast<size_t>(lim.dims) || levels.size() > 4) return false;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].size > cap(i)) return false;
    if (levels[i].size == 1) continue;
    const int64_t bytes = levels[i].stride * eb;
    if (levels[i].stride < 1 || ((i > 0 || levels[i].stride != 1) && bytes % lim.granule_bytes != 0)) return false;
    if (bytes / lim.granule_bytes > lim.max_stride_granules) return false;
  }
  return true;
}

}  // namespace

PatternLimits shim_transfer_limits(const DmaLimits &dma) {
  return {dma.shim.dims, dma.shim.max_wrap, dma.max_repeat, dma.shim.max_stride_words, dma.granule_bytes};
}

PatternLimits stream_limits(const DmaLimits &dma, TileKind kind) {
  const DmaAddressing &a = dma.of(kind);
  return {a.dims, a.max_wrap, 0, a.max_stride_words, dma.granule_bytes};
}

bool innermost_stride_ok(int64_t stride, int64_t elem_bytes, int64_t granule_bytes) {
  return stride == 1 || (stride > 1 && elem_bytes >= granule_bytes);
}

std::optional<AccessPattern> fit_pattern(const std::vector<int64_t> &addrs, int64_t elem_bytes, const PatternLimits &limits) {
  if (addrs.empty()) return std::nullopt;
  auto levels = factor(addrs);
  if (!levels) return std::nullopt;
  // The same elements again and again (a runtime scalar a core reads once per iteration): the outermost run
  // steps by 0, which the shim does as its repeat count, dimension 3, the others fitting in the three inside it.
  std::optional<Level> repeat;
  if (!levels->empty() && levels->back().stride == 0 && limits.max_repeat > 0) {
    repeat = levels->back();
    levels->pop_back();
  }
  if (levels->empty()) levels->push_back({1, 1});
  if ((*levels)[0].size == 1) (*levels)[0].stride = 1;
  if (!innermost_stride_ok((*levels)[0].stride, elem_bytes, limits.granule_bytes)) return std::nullopt;
  if (repeat) {
    PatternLimits inside = limits;
    inside.dims = std::min(limits.dims, 4) - 1;
    inside.max_repeat = 0;
    if (repeat->size > limits.max_repeat || !split_to_limits(*levels, elem_bytes, inside)) return std::nullopt;
    levels->resize(3, Level{1, 1});
    levels->push_back(*repeat);
  } else if (!split_to_limits(*levels, elem_bytes, limits)) {
    return std::nullopt;
  }
  AccessPattern p;
  p.base = addrs[0];
  for (size_t i = 0; i < levels->size(); ++i) {
    p.sizes[3 - i] = (*levels)[i].size;
    p.strides[3 - i] = (*levels)[i].size == 1 ? 0 : (*levels)[i].stride;
  }
  if (p.sizes[3] == 1) p.strides[3] = 1;
  return p;
}

std::vector<StreamDim> stream_dims(const AccessPattern &p) {
  size_t first = 0;
  while (first < 3 && p.sizes[first] == 1) ++first;
  std::vector<StreamDim> dims;
  for (size_t i = first; i < 4; ++i) dims.push_back({p.sizes[i], p.sizes[i] == 1 ? 1 : p.strides[i]});
  return dims;
}

std::vector<int64_t> enumerate(const std::vector<StreamDim> &dims) {
  std::vector<int64_t> out;
  if (dims.empty()) return out;
  std::vector<int64_t> idx(dims.size(), 0);
  for (const auto &d : dims)
    if (d.size < 1) return out;
  for (;;) {
    int64_t a = 0;
    for (size_t k = 0; k < dims.size(); ++k) a += idx[k] * dims[k].stride;
    out.push_back(a);
    size_t k = dims.size();
    while (k-- > 0) {
      if (++idx[k] < dims[k].size) break;
      idx[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return out;
  }
}

std::vector<int64_t> enumerate(const AccessPattern &p) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(std::max<int64_t>(0, p.elements())));
  for (int64_t a = 0; a < p.sizes[0]; ++a)
    for (int64_t b = 0; b < p.sizes[1]; ++b)
      for (int64_t c = 0; c < p.sizes[2]; ++c)
        for (int64_t d = 0; d < p.sizes[3]; ++d)
          out.push_back(p.base + a * p.strides[0] + b * p.strides[1] + c * p.strides[2] + d * p.strides[3]);
  return out;
}

std::optional<std::array<int64_t, 4>> offsets_for(const AccessPattern &p) {
  std::array<int64_t, 4> off{0, 0, 0, 0};
  std::array<size_t, 4> dims{0, 1, 2, 3};
  std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return p.strides[a] > p.strides[b]; });
  int64_t rest = p.base;
  for (size_t i : dims) {
    if (p.strides[i] <= 0) continue;
    off[i] = rest / p.strides[i];
    rest -= off[i] * p.strides[i];
  }
  if (rest != 0) return std::nullopt;
  return off;
}

}  // namespace htp::aie
