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

/// The registry's packed components in ascending id order, as indices into Registry::packed(). Sorting
/// compares 16-byte id prefixes held in the sort array itself and reaches the ids only on a tie, so it
/// does not chase a pointer per comparison; the prefixes are read from the packed texts in one pass.
std::vector<uint32_t> sorted_by_id(const Registry &registry) {
  struct Entry {
    uint64_t hi, lo; // the first 16 bytes of the id, big-endian, zero-padded
    uint32_t at;
  };
  const std::vector<PackedComponent> &packed = registry.packed();
  std::vector<Entry> entries;
  entries.reserve(packed.size());
  for (uint32_t i = 0; i < packed.size(); ++i) {
    std::string_view id = registry.packed_id(packed[i]);
    unsigned char bytes[16] = {};
    std::memcpy(bytes, id.data(), std::min<size_t>(16, id.size()));
    uint64_t hi = 0, lo = 0;
    for (int k = 0; k < 8; ++k) {
      hi = (hi << 8) | bytes[k];
      lo = (lo << 8) | bytes[8 + k];
    }
    entries.push_back({hi, lo, i});
  }
  // Zero padding sorts a shorter id first, as std::string does, unless an id holds a NUL byte: ties on
  // the prefix fall back to the full comparison, which settles that case too.
  std::sort(entries.begin(), entries.end(), [&](const Entry &a, const Entry &b) {
    if (a.hi != b.hi) return a.hi < b.hi;
    if (a.lo != b.lo) return a.lo < b.lo;
    return registry.packed_id(packed[a.at]) < registry.packed_id(packed[b.at]);
  });
  std::vector<uint32_t> out;
  out.reserve(entries.size());
  for (const Entry &e : entries)
    out.push_back(e.at);
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
  const std::vector<uint32_t> sorted = sorted_by_id(registry);
  const std::vector<PackedComponent> &packed = registry.packed();
  const std::string_view *texts = registry.packed_texts().data();

  const size_t n = sorted.size();
  components_.resize(n);
  component_ids_.reserve(n);
  by_kind_.resize(7);
  applies_needed_.assign(n, 0);
  // Each component is read once, here, from the registry's packed copy of what the index needs (its kind,
  // id, name and list texts, adjacent): its lists go into list_pool_ as pool indices (the pool still
  // grows), spans are taken afterwards.
  text_ids_.reserve(2 * n); // about a third of ~5 texts per component are distinct; grows if not
  texts_.reserve(2 * n);
  pool_.reserve(2 * n);
  pool_facts_.reserve(2 * n);
  pool_keys_at_.reserve(2 * n + 1);
  pool_keys_.reserve(4 * n);
  list_pool_.reserve(6 * n);
  constexpr size_t kLists = PackedComponent::kLists;
  static const char *const kFields[kLists] = {"provides", "requires",   "conflicts",
                                              "accepts",  "applies_to", "invalidates"};
  std::vector<std::array<uint32_t, kLists + 1>> list_offsets(n);
  size_t provided = 0;
  // Components in id order are not in registration order, so each one's packed texts start a read of
  // their own, and each text's table slot, entry and first occurrence are reads at random: past the
  // cache each would wait on memory in turn. A staircase of prefetches ahead of the component being read
  // starts them one level per step: the record, its views, its characters; then its texts are hashed
  // (once: the hashes wait in a ring until the component's turn) and their slots loaded; then the entries
  // those slots name.
  constexpr ComponentIndex kRing = 8, kHashAhead = 4;
  std::array<std::vector<uint64_t>, kRing> hashes; // id, name, then each list text
  auto ahead = [&](ComponentIndex i, ComponentIndex d) -> const PackedComponent * {
    return i + d < n ? &packed[sorted[i + d]] : nullptr;
  };
  auto hash_component = [&](ComponentIndex i) {
    const PackedComponent &p = packed[sorted[i]];
    std::vector<uint64_t> &h = hashes[i % kRing];
    h.clear();
    for (size_t k = 0, t = p.text_count(); k < t; ++k) // (the name is keyed by name_key, not by its hash)
      h.push_back(k == 1 ? 0 : IdHashTable::hash_text(texts[p.first + k]));
    component_ids_.prefetch(h[0]);
    for (size_t k = 2; k < h.size(); ++k)
      text_ids_.prefetch(h[k]);
  };
  for (ComponentIndex i = 0; i < std::min<size_t>(n, kHashAhead); ++i)
    hash_component(i);
  for (ComponentIndex i = 0; i < n; ++i) {
    if (const PackedComponent *a = ahead(i, 16)) __builtin_prefetch(a);
    if (const PackedComponent *a = ahead(i, 12))
      for (size_t k = 0, t = a->text_count(); k < t; k += 4)
        __builtin_prefetch(texts + a->first + k);
    if (const PackedComponent *a = ahead(i, 8))
      for (size_t k = 0, t = a->text_count(); k < t; ++k)
        __builtin_prefetch(texts[a->first + k].data());
    if (i + kHashAhead < n) hash_component(i + kHashAhead);
    if (i + 2 < n)
      for (size_t k = 2, t = hashes[(i + 2) % kRing].size(); k < t; ++k)
        if (uint32_t seen = text_ids_.peek(hashes[(i + 2) % kRing][k]); seen != IdHashTable::kNone)
          __builtin_prefetch(&texts_[seen]);
    const PackedComponent &p = packed[sorted[i]];
    const Component &c = *p.component;
    const std::vector<uint64_t> &h = hashes[i % kRing];
    std::string_view id = texts[p.first], name = texts[p.first + 1];
    IndexedComponent &ic = components_[i];
    ic.component = p.component;
    ic.kind = p.kind;
    component_ids_.insert(h[0], i, [&](uint32_t k) { return components_[k].component->id == id; });
    auto &off = list_offsets[i];
    bool ok = true;
    size_t at = 2;
    for (size_t k = 0; k < kLists; ++k) {
      off[k] = static_cast<uint32_t>(list_pool_.size());
      ok &= parse_list(c, std::span<const std::string_view>(texts + p.first + at, p.sizes[k]), h.data() + at,
                       kFields[k], k == 0, k == 1 || k == 4);
      at += p.sizes[k];
    }
    off[kLists] = static_cast<uint32_t>(list_pool_.size());
    ic.malformed = !ok;
    provided += off[1] - off[0];
    by_kind_[static_cast<size_t>(p.kind)].push_back(i);
    if (!name.empty()) by_name_.add(name_key(component_kind_name(p.kind), name), i);
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
    // The fact table's and the postings' slots are read at random: load them a few components ahead.
    if (i + 4 < n && !components_[i + 4].malformed)
      for (uint32_t k = list_offsets[i + 4][0]; k < list_offsets[i + 4][1]; ++k)
        prefetch_intern(list_pool_[k]);
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
  facts_by_name_.freeze();
  facts_by_param_.freeze();
  providers_ = Rows::from_pairs(facts_.size(), provider_pairs);

  // Patterns are matched against the final fact table once (each distinct pattern once), so each
  // resolution only looks them up.
  std::vector<std::pair<uint32_t, uint32_t>> applier_pairs, conflicter_pairs;
  match_base_.resize(n);
  for (ComponentIndex i = 0; i < n; ++i) {
    // The postings' slots and the patterns are read at random: load them a few components ahead.
    if (i + 4 < n) {
      const IndexedComponent &a = components_[i + 4];
      for (const CapabilityList *l : {&a.requires_, &a.conflicts, &a.invalidates, &a.applies_to})
        for (const Capability &r : *l)
          prefetch_match(pool_index(r));
    }
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
  by_name_.freeze();
  applies_anchors_.by_key.freeze();
  conflict_anchors_.by_key.freeze();
  accepts_anchors_.by_key.freeze();
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
  append_matching(pool_[p], pool_keys(p), matches_.data); // (the keys describe_pool_entry kept)
  matches_.offsets.push_back(static_cast<uint32_t>(matches_.data.size()));
  return pool_row_[p] = static_cast<uint32_t>(matches_.size() - 1);
}

void CapabilityIndex::prefetch_match(uint32_t p) const {
  if (pool_row_[p] != IdHashTable::kNone) return;
  __builtin_prefetch(&pool_[p]);
  prefetch_postings(p);
}

bool CapabilityIndex::parse_list(const Component &c, std::span<const std::string_view> texts,
                                 const uint64_t *hashes, const char *field, bool fact, bool allow_optional) {
  bool ok = true;
  for (size_t t = 0; t < texts.size(); ++t) {
    std::string_view text = texts[t];
    // The text keys the pool: a registry text (packed, and outliving the index), which later ones compare
    // with.
    auto next = static_cast<uint32_t>(texts_.size());
    auto [id, inserted] =
        text_ids_.insert(hashes[t], next, [&](uint32_t t) { return texts_[t].text == text; });
    if (inserted) {
      TextEntry entry{text};
      auto parsed = parse_capability(text, CapabilityMode::Requirement);
      if (parsed) {
        entry.pool = static_cast<uint32_t>(pool_.size());
        entry.optional = parsed->optional;
        entry.ranged = std::any_of(parsed->params.begin(), parsed->params.end(), [](const CapabilityParam &p) {
          return std::holds_alternative<VersionRange>(p.value);
        });
        pool_.push_back(std::move(parsed.value()));
        pool_text_.push_back(entry.text);
        describe_pool_entry(pool_.back(), entry.ranged);
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

void CapabilityIndex::describe_pool_entry(const Capability &cap, bool ranged) {
  PoolFacts &d = pool_facts_.emplace_back();
  if (!cap.optional && !ranged) {
    canonical_.clear();
    append_canonical(canonical_, cap);
    d.canonical = canonical_ == pool_text_.back() ? pool_text_.back() : arena_.copy(canonical_);
    d.hash = IdHashTable::hash_text(d.canonical);
  }
  d.exclusive = is_exclusive_namespace(cap.ns);
  if (pool_keys_at_.empty()) pool_keys_at_.push_back(0);
  append_keys(cap, pool_keys_);
  pool_keys_at_.push_back(static_cast<uint32_t>(pool_keys_.size()));
}

void CapabilityIndex::append_keys(const Capability &cap, std::vector<CapabilityKey> &out) {
  out.push_back(name_key(cap.ns, cap.name));
  for (const CapabilityParam &param : cap.params)
    if (const auto *s = std::get_if<std::string>(&param.value))
      out.push_back(param_key(cap.ns, cap.name, param.key, *s));
}

std::span<const CapabilityKey> CapabilityIndex::pool_keys(uint32_t p) const {
  return std::span<const CapabilityKey>(pool_keys_)
      .subspan(pool_keys_at_[p], pool_keys_at_[p + 1] - pool_keys_at_[p]);
}

void CapabilityIndex::prefetch_postings(uint32_t p) const {
  std::span<const CapabilityKey> keys = pool_keys(p);
  facts_by_name_.prefetch(keys[0]);
  for (CapabilityKey key : keys.subspan(1))
    facts_by_param_.prefetch(key);
}

void CapabilityIndex::prefetch_intern(uint32_t p) const {
  if (pool_fact_[p] != IdHashTable::kNone) return;
  fact_ids_.prefetch(pool_facts_[p].hash);
  prefetch_postings(p);
}

FactId CapabilityIndex::intern(uint32_t p) {
  if (pool_fact_[p] != IdHashTable::kNone) return pool_fact_[p];
  // Everything but the Capability's address comes from what describe_pool_entry kept.
  const PoolFacts &d = pool_facts_[p];
  std::string_view text = d.canonical;
  auto next = static_cast<FactId>(facts_.size());
  auto [id, inserted] = fact_ids_.insert(d.hash, next, [&](FactId f) { return fact_texts_[f] == text; });
  pool_fact_[p] = id;
  if (!inserted) return id;
  fact_texts_.push_back(text);
  std::span<const CapabilityKey> keys = pool_keys(p);
  for (CapabilityKey key : keys.subspan(1))
    facts_by_param_.add(key, id);
  facts_by_name_.add(keys[0], id);
  facts_.push_back(&pool_[p]);
  fact_exclusive_.push_back(d.exclusive ? 1 : 0);
  return id;
}

std::optional<ComponentIndex> CapabilityIndex::find(std::string_view id) const {
  uint32_t c = component_ids_.find(IdHashTable::hash_text(id),
                                   [&](uint32_t k) { return components_[k].component->id == id; });
  if (c == IdHashTable::kNone) return std::nullopt;
  return c;
}

void CapabilityIndex::Postings::reserve(size_t key_count, size_t id_count) {
  size_t want = 16;
  while (want < 2 * key_count)
    want *= 2;
  while (slots.size() < want)
    grow();
  heads.reserve(key_count);
  added.reserve(id_count);
}

void CapabilityIndex::Postings::grow() {
  std::vector<Slot> old = std::move(slots);
  slots.assign(old.empty() ? 16 : 2 * old.size(), Slot{});
  const size_t mask = slots.size() - 1;
  for (const Slot &s : old)
    if (s.row != UINT32_MAX) {
      size_t i = s.key & mask;
      while (slots[i].row != UINT32_MAX)
        i = (i + 1) & mask;
      slots[i] = s;
    }
}

void CapabilityIndex::Postings::add(CapabilityKey key, uint32_t id) {
  if (2 * (heads.size() + 1) > slots.size()) grow();
  const size_t mask = slots.size() - 1;
  size_t i = key & mask;
  while (slots[i].row != UINT32_MAX && slots[i].key != key)
    i = (i + 1) & mask;
  if (slots[i].row == UINT32_MAX) {
    slots[i] = Slot{key, static_cast<uint32_t>(heads.size())};
    heads.emplace_back();
  }
  ++heads[slots[i].row].begin; // a count until freeze()
  added.emplace_back(slots[i].row, id);
}

void CapabilityIndex::Postings::freeze() {
  uint32_t at = 0;
  for (Head &h : heads) {
    uint32_t count = h.begin;
    h.begin = h.end = at;
    at += count;
  }
  ids.resize(at);
  for (const auto &[row, id] : added)
    ids[heads[row].end++] = id;
  std::vector<std::pair<uint32_t, uint32_t>>().swap(added);
}

const CapabilityIndex::Postings::Head *CapabilityIndex::Postings::find(CapabilityKey key) const {
  if (slots.empty()) return nullptr;
  const size_t mask = slots.size() - 1;
  for (size_t i = key & mask;; i = (i + 1) & mask) {
    const Slot &s = slots[i];
    if (s.row == UINT32_MAX) return nullptr;
    if (s.key == key) return &heads[s.row];
  }
}

std::vector<FactId> CapabilityIndex::matching_facts(const Capability &pattern) const {
  std::vector<FactId> out;
  append_matching_facts(pattern, out);
  return out;
}

void CapabilityIndex::append_matching_facts(const Capability &pattern, std::vector<FactId> &out) const {
  std::vector<CapabilityKey> keys;
  append_keys(pattern, keys);
  append_matching(pattern, keys, out);
}

void CapabilityIndex::append_matching(const Capability &pattern, std::span<const CapabilityKey> keys,
                                      std::vector<FactId> &out) const {
  const Postings::Head *best = facts_by_name_.find(keys[0]);
  if (!best) return;
  const Postings *list = &facts_by_name_;
  // A text parameter must be equal, so the shortest posting list of one bounds the scan.
  for (CapabilityKey key : keys.subspan(1)) {
    const Postings::Head *h = facts_by_param_.find(key);
    if (!h) return;
    if (h->count() < best->count()) best = h, list = &facts_by_param_;
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
