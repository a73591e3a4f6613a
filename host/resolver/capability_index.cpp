#include "resolver/capability_index.hpp"

#include <algorithm>
#include <cstring>

#include "resolver/capability_diagnostic.hpp"

namespace htp {

namespace {

uint64_t mix(uint64_t h, std::string_view part) {
  uint64_t v = std::hash<std::string_view>{}(part);
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

} // namespace

namespace {

/// The registry's components in ascending id order. Sorting compares 16-byte id prefixes held in the
/// sort array itself and reaches the components' ids only on a tie, so it does not chase a pointer per
/// comparison.
std::vector<const Component *> sorted_by_id(const Registry &registry) {
  struct Entry {
    uint64_t hi, lo; // the first 16 bytes of the id, big-endian, zero-padded
    const Component *c;
  };
  std::vector<Entry> entries;
  entries.reserve(registry.size());
  for (const auto &c : registry.components()) {
    unsigned char bytes[16] = {};
    std::memcpy(bytes, c->id.data(), std::min<size_t>(16, c->id.size()));
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; ++i) {
      hi = (hi << 8) | bytes[i];
      lo = (lo << 8) | bytes[8 + i];
    }
    entries.push_back({hi, lo, c.get()});
  }
  // Zero padding sorts a shorter id first, as std::string does, unless an id holds a NUL byte: ties on
  // the prefix fall back to the full comparison, which settles that case too.
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    if (a.hi != b.hi) return a.hi < b.hi;
    if (a.lo != b.lo) return a.lo < b.lo;
    return a.c->id < b.c->id;
  });
  std::vector<const Component *> out;
  out.reserve(entries.size());
  for (const Entry &e : entries)
    out.push_back(e.c);
  return out;
}

} // namespace

CapabilityKey name_key(std::string_view ns, std::string_view name) {
  return mix(mix(0, ns), name);
}

CapabilityKey param_key(std::string_view ns, std::string_view name, std::string_view key,
                        std::string_view text) {
  return mix(mix(name_key(ns, name) + 1, key), text);
}

CapabilityIndex::Rows CapabilityIndex::Rows::from_pairs(size_t rows,
                                                        std::vector<std::pair<uint32_t, uint32_t>> &pairs) {
  // A counting sort by row, stable: ids ascend within a row when they ascend in `pairs` (as the index
  // produces them); otherwise sort first.
  if (!std::is_sorted(pairs.begin(), pairs.end(), [](const auto &a, const auto &b) { return a.second < b.second; }))
    std::sort(pairs.begin(), pairs.end());
  Rows r;
  r.offsets.assign(rows + 1, 0);
  for (const auto &pair : pairs)
    ++r.offsets[pair.first + 1];
  for (size_t i = 0; i < rows; ++i)
    r.offsets[i + 1] += r.offsets[i];
  r.data.resize(pairs.size());
  std::vector<uint32_t> next(r.offsets.begin(), r.offsets.end() - 1);
  for (const auto &[row, id] : pairs)
    r.data[next[row]++] = id;
  return r;
}

CapabilityIndex::CapabilityIndex(const Registry &registry) {
  const std::vector<const Component *> sorted = sorted_by_id(registry);

  const size_t n = sorted.size();
  components_.resize(n);
  component_ids_.reserve(n);
  by_kind_.resize(7);
  applies_needed_.assign(n, 0);
  // Each component is read once, here (a second pass over 100,000 components misses the cache again):
  // its lists go into list_pool_ as pool indices (the pool still grows), spans are taken afterwards.
  text_ids_.reserve(2 * n); // about a third of ~5 texts per component are distinct; grows if not
  texts_.reserve(2 * n);
  pool_.reserve(2 * n);
  list_pool_.reserve(6 * n);
  constexpr size_t kLists = 6;
  std::vector<std::array<uint32_t, kLists + 1>> list_offsets(n);
  size_t provided = 0;
  auto lists_of = [](const Component &c) {
    return std::array<const std::vector<std::string> *, kLists>{&c.provides,   &c.requires_,  &c.conflicts,
                                                                &c.accepts,    &c.applies_to, &c.invalidates};
  };
  // Components in id order are scattered over the heap, and each text is three dependent loads away
  // (component, list, characters) before its table slot: past the cache, each would wait on memory in
  // turn. A staircase of prefetches a few components ahead starts those loads early, one level per step.
  for (ComponentIndex i = 0; i < n; ++i) {
    if (i + 12 < n) {
      const Component *ahead = sorted[i + 12];
      __builtin_prefetch(&ahead->provides);
      __builtin_prefetch(&ahead->name);
      __builtin_prefetch(&ahead->applies_to);
    }
    if (i + 8 < n)
      for (const auto *l : lists_of(*sorted[i + 8]))
        if (!l->empty()) __builtin_prefetch(l->data());
    if (i + 4 < n)
      for (const auto *l : lists_of(*sorted[i + 4]))
        for (const std::string &t : *l)
          __builtin_prefetch(t.data());
    if (i + 2 < n)
      for (const auto *l : lists_of(*sorted[i + 2]))
        for (const std::string &t : *l)
          text_ids_.prefetch(IdHashTable::hash_text(t));
    const Component &c = *sorted[i];
    IndexedComponent &ic = components_[i];
    ic.component = &c;
    ic.kind = c.kind;
    component_ids_.insert(IdHashTable::hash_text(c.id), i,
                          [&](uint32_t k) { return components_[k].component->id == c.id; });
    auto &off = list_offsets[i];
    bool ok = true;
    off[0] = static_cast<uint32_t>(list_pool_.size());
    ok &= parse_list(c, c.provides, "provides", true, false);
    off[1] = static_cast<uint32_t>(list_pool_.size());
    ok &= parse_list(c, c.requires_, "requires", false, true);
    off[2] = static_cast<uint32_t>(list_pool_.size());
    ok &= parse_list(c, c.conflicts, "conflicts", false, false);
    off[3] = static_cast<uint32_t>(list_pool_.size());
    ok &= parse_list(c, c.accepts, "accepts", false, false);
    off[4] = static_cast<uint32_t>(list_pool_.size());
    ok &= parse_list(c, c.applies_to, "applies_to", false, true);
    off[5] = static_cast<uint32_t>(list_pool_.size());
    ok &= parse_list(c, c.invalidates, "invalidates", false, false);
    off[6] = static_cast<uint32_t>(list_pool_.size());
    ic.malformed = !ok;
    provided += off[1] - off[0];
    by_kind_[static_cast<size_t>(c.kind)].push_back(i);
    if (!c.name.empty()) by_name_.add(name_key(component_kind_name(c.kind), c.name), i);
  }
  list_arena_.reserve(list_pool_.size());
  for (uint32_t p : list_pool_)
    list_arena_.push_back(&pool_[p]);
  pool_fact_.assign(pool_.size(), IdHashTable::kNone);
  pool_row_.assign(pool_.size(), IdHashTable::kNone);
  fact_ids_.reserve(pool_.size());
  facts_.reserve(pool_.size());
  fact_texts_.reserve(pool_.size());
  fact_exclusive_.reserve(pool_.size());
  facts_by_name_.reserve(pool_.size(), pool_.size());
  facts_by_param_.reserve(pool_.size(), pool_.size());
  // Facts are interned in component order; provided_arena_ never outgrows its reservation, so spans into
  // it are taken as it fills.
  provided_arena_.reserve(provided);
  std::vector<std::pair<uint32_t, uint32_t>> provider_pairs;
  provider_pairs.reserve(provided);
  for (ComponentIndex i = 0; i < n; ++i) {
    IndexedComponent &ic = components_[i];
    const auto &off = list_offsets[i];
    auto first = static_cast<uint32_t>(provided_arena_.size());
    if (!ic.malformed) {
      for (uint32_t k = off[0]; k < off[1]; ++k)
        provided_arena_.push_back(intern(list_pool_[k]));
      std::sort(provided_arena_.begin() + first, provided_arena_.end());
      provided_arena_.erase(std::unique(provided_arena_.begin() + first, provided_arena_.end()),
                            provided_arena_.end());
      for (size_t k = first; k < provided_arena_.size(); ++k)
        provider_pairs.emplace_back(provided_arena_[k], i);
      auto list = [&](size_t k) {
        return CapabilityList(
            std::span<const Capability *const>(list_arena_.data() + off[k], off[k + 1] - off[k]));
      };
      ic.provides = list(0);
      ic.requires_ = list(1);
      ic.conflicts = list(2);
      ic.accepts = list(3);
      ic.applies_to = list(4);
      ic.invalidates = list(5);
    }
    ic.provided = std::span<const FactId>(provided_arena_.data() + first, provided_arena_.size() - first);
  }
  std::vector<uint32_t>().swap(list_pool_);
  providers_ = Rows::from_pairs(facts_.size(), provider_pairs);

  // Patterns are matched against the final fact table once (each distinct pattern once), so each
  // resolution only looks them up.
  std::vector<std::pair<uint32_t, uint32_t>> applier_pairs, conflicter_pairs;
  match_base_.resize(n);
  for (ComponentIndex i = 0; i < n; ++i) {
    IndexedComponent &ic = components_[i];
    auto &base = match_base_[i];
    base[0] = static_cast<uint32_t>(entry_rows_.size());
    for (const Capability &r : ic.requires_)
      entry_rows_.push_back(match_row(pool_index(r)));
    base[1] = static_cast<uint32_t>(entry_rows_.size());
    for (uint32_t e = 0; e < ic.conflicts.size(); ++e) {
      auto id = static_cast<uint32_t>(conflicts_.size());
      conflicts_.push_back({i, e});
      conflict_anchors_.add(ic.conflicts[e], id);
      uint32_t row = match_row(pool_index(ic.conflicts[e]));
      for (FactId f : matches_.row(row))
        conflicter_pairs.emplace_back(f, id);
      entry_rows_.push_back(row);
    }
    base[2] = static_cast<uint32_t>(entry_rows_.size());
    for (const Capability &r : ic.invalidates)
      entry_rows_.push_back(match_row(pool_index(r)));
    base[3] = static_cast<uint32_t>(entry_rows_.size());
    for (const Capability &r : ic.applies_to)
      entry_rows_.push_back(match_row(pool_index(r)));
    if (ic.kind == ComponentKind::Pass) {
      for (uint32_t e = 0; e < ic.applies_to.size(); ++e) {
        const Capability &pat = ic.applies_to[e];
        if (pat.optional) continue;
        auto id = static_cast<uint32_t>(applies_.size());
        applies_.push_back({i, e});
        applies_anchors_.add(pat, id);
        for (FactId f : matches_.row(entry_rows_[base[3] + e]))
          applier_pairs.emplace_back(f, id);
        ++applies_needed_[i];
      }
    }
    for (uint32_t e = 0; e < ic.accepts.size(); ++e) {
      accepts_anchors_.add(ic.accepts[e], static_cast<uint32_t>(accepts_.size()));
      accepts_.push_back({i, e});
    }
  }
  appliers_of_ = Rows::from_pairs(facts_.size(), applier_pairs);
  conflicters_of_ = Rows::from_pairs(facts_.size(), conflicter_pairs);
}

std::span<const FactId> CapabilityIndex::requires_matches(ComponentIndex c, uint32_t entry) const {
  return matches_.row(entry_rows_[match_base_[c][0] + entry]);
}

std::span<const FactId> CapabilityIndex::conflicts_matches(ComponentIndex c, uint32_t entry) const {
  return matches_.row(entry_rows_[match_base_[c][1] + entry]);
}

std::span<const FactId> CapabilityIndex::invalidates_matches(ComponentIndex c, uint32_t entry) const {
  return matches_.row(entry_rows_[match_base_[c][2] + entry]);
}

std::span<const FactId> CapabilityIndex::applies_to_matches(ComponentIndex c, uint32_t entry) const {
  return matches_.row(entry_rows_[match_base_[c][3] + entry]);
}

uint32_t CapabilityIndex::match_row(uint32_t p) {
  if (pool_row_[p] != IdHashTable::kNone) return pool_row_[p];
  append_matching_facts(pool_[p], matches_.data);
  matches_.offsets.push_back(static_cast<uint32_t>(matches_.data.size()));
  return pool_row_[p] = static_cast<uint32_t>(matches_.size() - 1);
}

bool CapabilityIndex::parse_list(const Component &c, const std::vector<std::string> &texts, const char *field,
                                 bool fact, bool allow_optional) {
  bool ok = true;
  for (const std::string &text : texts) {
    // The text keys the pool; its first occurrence is copied into the arena, which later ones compare with.
    auto next = static_cast<uint32_t>(texts_.size());
    auto [id, inserted] = text_ids_.insert(IdHashTable::hash_text(text), next,
                                           [&](uint32_t t) { return texts_[t].text == text; });
    if (inserted) {
      TextEntry entry{arena_.copy(text)};
      auto parsed = parse_capability(text, CapabilityMode::Requirement);
      if (parsed) {
        entry.pool = static_cast<uint32_t>(pool_.size());
        entry.optional = parsed->optional;
        entry.ranged = std::any_of(parsed->params.begin(), parsed->params.end(), [](const CapabilityParam &p) {
          return std::holds_alternative<VersionRange>(p.value);
        });
        pool_.push_back(std::move(parsed.value()));
        pool_text_.push_back(entry.text);
      }
      texts_.push_back(entry);
    }
    // A repeated text is settled by its entry alone: the pool (large, read at random) is not touched.
    const TextEntry &entry = texts_[id];
    std::optional<CapabilityError> error;
    if (entry.pool == IdHashTable::kNone)
      error = parse_capability(text, CapabilityMode::Requirement).error();
    else if (entry.optional && !allow_optional)
      error = CapabilityError{text.find('?'), std::string("'?' is not allowed in ") + field};
    else if (fact && entry.ranged)
      error = parse_capability(text, CapabilityMode::Fact).error();
    if (error) {
      std::string where = std::string(field) + " of " + component_kind_name(c.kind) + " '" + c.id +
                          "' (plugin '" + c.plugin.name + "')";
      diagnostics_.report(capability_diagnostic(*error, text, where));
      ok = false;
      continue;
    }
    list_pool_.push_back(entry.pool);
  }
  return ok;
}

FactId CapabilityIndex::intern(uint32_t p) {
  if (pool_fact_[p] != IdHashTable::kNone) return pool_fact_[p];
  const Capability &fact = pool_[p];
  canonical_.clear();
  append_canonical(canonical_, fact);
  std::string_view text = canonical_;
  auto next = static_cast<FactId>(facts_.size());
  auto [id, inserted] =
      fact_ids_.insert(IdHashTable::hash_text(text), next, [&](FactId f) { return fact_texts_[f] == text; });
  pool_fact_[p] = id;
  if (!inserted) return id;
  fact_texts_.push_back(text == pool_text_[p] ? pool_text_[p] : arena_.copy(text));
  for (const CapabilityParam &param : fact.params)
    if (const auto *s = std::get_if<std::string>(&param.value))
      facts_by_param_.add(param_key(fact.ns, fact.name, param.key, *s), id);
  facts_by_name_.add(name_key(fact.ns, fact.name), id);
  facts_.push_back(&fact);
  fact_exclusive_.push_back(is_exclusive_namespace(fact.ns) ? 1 : 0);
  return id;
}

std::string_view CapabilityIndex::TextArena::copy(std::string_view text) {
  if (chunks_.empty() || used_ + text.size() > capacity_) {
    capacity_ = std::max<size_t>(size_t{1} << 16, text.size());
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(capacity_));
    used_ = 0;
  }
  char *at = chunks_.back().get() + used_;
  std::memcpy(at, text.data(), text.size());
  used_ += text.size();
  return {at, text.size()};
}

std::optional<ComponentIndex> CapabilityIndex::find(std::string_view id) const {
  uint32_t c = component_ids_.find(IdHashTable::hash_text(id),
                                   [&](uint32_t k) { return components_[k].component->id == id; });
  if (c == IdHashTable::kNone) return std::nullopt;
  return c;
}

void CapabilityIndex::Postings::reserve(size_t key_count, size_t ids) {
  table.reserve(key_count);
  keys.reserve(key_count);
  heads.reserve(key_count);
  entries.reserve(ids);
}

void CapabilityIndex::Postings::add(CapabilityKey key, uint32_t id) {
  auto entry = static_cast<uint32_t>(entries.size());
  entries.emplace_back(id, UINT32_MAX);
  auto next = static_cast<uint32_t>(keys.size());
  auto [k, inserted] = table.insert(key, next, [&](uint32_t i) { return keys[i] == key; });
  if (inserted) {
    keys.push_back(key);
    heads.emplace_back();
  }
  Head &h = heads[k];
  if (h.count == 0)
    h.first = entry;
  else
    entries[h.last].second = entry;
  h.last = entry;
  ++h.count;
}

const CapabilityIndex::Postings::Head *CapabilityIndex::Postings::find(CapabilityKey key) const {
  uint32_t k = table.find(key, [&](uint32_t i) { return keys[i] == key; });
  return k == IdHashTable::kNone ? nullptr : &heads[k];
}

std::vector<FactId> CapabilityIndex::matching_facts(const Capability &pattern) const {
  std::vector<FactId> out;
  append_matching_facts(pattern, out);
  return out;
}

void CapabilityIndex::append_matching_facts(const Capability &pattern, std::vector<FactId> &out) const {
  const Postings::Head *best = facts_by_name_.find(name_key(pattern.ns, pattern.name));
  if (!best) return;
  const Postings *list = &facts_by_name_;
  // A text parameter must be equal, so the shortest posting list of one bounds the scan.
  for (const CapabilityParam &p : pattern.params) {
    const auto *s = std::get_if<std::string>(&p.value);
    if (!s) continue;
    const Postings::Head *h = facts_by_param_.find(param_key(pattern.ns, pattern.name, p.key, *s));
    if (!h) return;
    if (h->count < best->count) best = h, list = &facts_by_param_;
  }
  list->each(*best, [&](FactId f) {
    if (matches(pattern, *facts_[f])) out.push_back(f);
  });
}

std::vector<FactId> CapabilityIndex::facts_named(std::string_view ns, std::string_view name) const {
  std::vector<FactId> out;
  facts_by_name_.append(name_key(ns, name), out);
  return out;
}

void CapabilityIndex::PatternAnchors::add(const Capability &pattern, uint32_t id) {
  for (const CapabilityParam &p : pattern.params)
    if (const auto *s = std::get_if<std::string>(&p.value)) {
      by_key.add(param_key(pattern.ns, pattern.name, p.key, *s), id);
      return;
    }
  by_key.add(name_key(pattern.ns, pattern.name), id);
}

std::vector<uint32_t> CapabilityIndex::PatternAnchors::candidates(const Capability &fact) const {
  std::vector<uint32_t> out;
  by_key.append(name_key(fact.ns, fact.name), out);
  for (const CapabilityParam &p : fact.params)
    if (const auto *s = std::get_if<std::string>(&p.value))
      by_key.append(param_key(fact.ns, fact.name, p.key, *s), out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint32_t> CapabilityIndex::appliers_matching(const Capability &fact) const {
  std::vector<uint32_t> out;
  for (uint32_t p : applies_anchors_.candidates(fact)) {
    PatternRef ref = applies_[p];
    if (matches(components_[ref.component].applies_to[ref.entry], fact)) out.push_back(p);
  }
  return out;
}

std::vector<uint32_t> CapabilityIndex::conflicters_matching(const Capability &fact) const {
  std::vector<uint32_t> out;
  for (uint32_t p : conflict_anchors_.candidates(fact)) {
    PatternRef ref = conflicts_[p];
    if (matches(components_[ref.component].conflicts[ref.entry], fact)) out.push_back(p);
  }
  return out;
}

std::vector<PatternRef> CapabilityIndex::acceptors_matching(const Capability &fact) const {
  std::vector<PatternRef> out;
  for (uint32_t a : accepts_anchors_.candidates(fact)) {
    PatternRef ref = accepts_[a];
    if (matches(components_[ref.component].accepts[ref.entry], fact)) out.push_back(ref);
  }
  return out;
}

std::vector<ComponentIndex> CapabilityIndex::named(ComponentKind kind, std::string_view name) const {
  std::vector<uint32_t> ids;
  by_name_.append(name_key(component_kind_name(kind), name), ids);
  std::vector<ComponentIndex> out;
  for (uint32_t c : ids)
    if (components_[c].component->kind == kind && components_[c].component->name == name) out.push_back(c);
  return out;
}

std::vector<ComponentIndex> CapabilityIndex::claiming(ComponentKind kind, std::string_view target) const {
  std::vector<ComponentIndex> out;
  for (ComponentIndex c : of_kind(kind)) {
    const IndexedComponent &ic = components_[c];
    if (ic.malformed) continue;
    const auto &ts = ic.component->targets;
    if (std::find(ts.begin(), ts.end(), target) != ts.end()) out.push_back(c);
  }
  return out;
}

std::vector<std::string> CapabilityIndex::targets() const {
  std::vector<std::string> out;
  for (ComponentKind k : {ComponentKind::Backend, ComponentKind::Binding, ComponentKind::Pipeline})
    for (ComponentIndex c : of_kind(k))
      for (const std::string &t : components_[c].component->targets)
        out.push_back(t);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace htp
