// The registry seen by the resolver: every component's capability text parsed once (each distinct text
// once), facts interned (each distinct text once), and providers, applies-to patterns, conflicts and
// targets indexed by Namespace.Name. Per-fact and per-pattern lists live in flat arrays and every lookup
// table is an IdHashTable over them, so building and dropping an index of 100,000 components costs a few
// dozen allocations, not one per capability.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <htp/capability.hpp>

#include "diag/diagnostic.hpp"
#include "registry/component.hpp"
#include "registry/registry.hpp"
#include "registry/text_arena.hpp"
#include "resolver/id_hash_table.hpp"

namespace htp {

using FactId = uint32_t;
using ComponentIndex = uint32_t;
using CapabilityKey = uint64_t;

/// A component's capability list: references into the index's pool of parsed capabilities, read like a
/// vector of Capability.
class CapabilityList {
public:
  class iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Capability;
    using difference_type = std::ptrdiff_t;
    using pointer = const Capability *;
    using reference = const Capability &;
    explicit iterator(const Capability *const *p) : p_(p) {}
    reference operator*() const { return **p_; }
    pointer operator->() const { return *p_; }
    iterator &operator++() { return ++p_, *this; }
    iterator operator++(int) { return iterator(p_++); }
    difference_type operator-(const iterator &o) const { return p_ - o.p_; }
    bool operator==(const iterator &o) const { return p_ == o.p_; }

  private:
    const Capability *const *p_;
  };

  CapabilityList() = default;
  /// A list over pointers the index owns.
  explicit CapabilityList(std::span<const Capability *const> items) : items_(items) {}
  /// The i-th capability.
  const Capability &operator[](size_t i) const { return *items_[i]; }
  /// Number of entries.
  size_t size() const { return items_.size(); }
  /// True without entries.
  bool empty() const { return items_.empty(); }
  /// Iteration yields `const Capability &`.
  iterator begin() const { return iterator(items_.data()); }
  iterator end() const { return iterator(items_.data() + items_.size()); }

private:
  std::span<const Capability *const> items_;
};

/// One component with its capability lists parsed.
struct IndexedComponent {
  const Component *component = nullptr;
  ComponentKind kind = ComponentKind::Pass; ///< component->kind, kept here where it is read often.
  CapabilityList provides;          ///< Facts.
  CapabilityList requires_;         ///< Requirements ('?' = optional; ranges allowed).
  CapabilityList conflicts;         ///< Patterns.
  CapabilityList accepts;           ///< Patterns over obligations.
  CapabilityList applies_to;        ///< Patterns (passes).
  CapabilityList invalidates;       ///< Patterns (passes).
  std::span<const FactId> provided; ///< Interned `provides`, ascending, unique.
  bool malformed = false;           ///< Some capability text did not parse; never selected.
};

/// Namespaces of which a plan holds at most one name (one backend, one binding).
bool is_exclusive_namespace(std::string_view ns);

/// A pattern of one component: `entry` indexes its applies_to or conflicts list.
struct PatternRef {
  ComponentIndex component = 0;
  uint32_t entry = 0;
};

class CapabilityIndex {
public:
  /// Parses and indexes every component of `registry`; malformed text becomes a diagnostic and marks
  /// the component unusable. Components are numbered in ascending id order, independent of registration.
  /// The registry must outlive the index.
  explicit CapabilityIndex(const Registry &registry);
  CapabilityIndex(const CapabilityIndex &) = delete;
  CapabilityIndex &operator=(const CapabilityIndex &) = delete;

  /// Components in ascending id order.
  const std::vector<IndexedComponent> &components() const { return components_; }
  /// The component numbered c.
  const IndexedComponent &at(ComponentIndex c) const { return components_[c]; }
  /// The index of the component with this id.
  std::optional<ComponentIndex> find(std::string_view id) const;

  /// Number of interned facts (every distinct provided capability).
  FactId fact_count() const { return static_cast<FactId>(facts_.size()); }
  /// The interned fact f.
  const Capability &fact(FactId f) const { return *facts_[f]; }
  /// The canonical text of fact f (valid as long as the index and its registry).
  std::string_view fact_text(FactId f) const { return fact_texts_[f]; }
  /// True when fact f is in an exclusive namespace (is_exclusive_namespace), kept per fact so that the
  /// resolver does not read the fact's capability for it each time the fact is counted.
  bool exclusive(FactId f) const { return fact_exclusive_[f] != 0; }
  /// Components providing fact f, ascending.
  std::span<const ComponentIndex> providers(FactId f) const { return providers_.row(f); }
  /// Facts that `pattern` matches, ascending.
  std::vector<FactId> matching_facts(const Capability &pattern) const;
  /// Facts filed under this Namespace.Name, ascending (near-match explanations). A list may hold a
  /// fact of another name whose key collides: check ns and name before relying on one.
  std::vector<FactId> facts_named(std::string_view ns, std::string_view name) const;

  /// Index facts that requirement / conflict / invalidates pattern `entry` of component c matches.
  std::span<const FactId> requires_matches(ComponentIndex c, uint32_t entry) const;
  std::span<const FactId> conflicts_matches(ComponentIndex c, uint32_t entry) const;
  std::span<const FactId> invalidates_matches(ComponentIndex c, uint32_t entry) const;
  /// Index facts that applies-to pattern `entry` of component c matches.
  std::span<const FactId> applies_to_matches(ComponentIndex c, uint32_t entry) const;

  /// All applies-to patterns of passes; appliers_of(f) lists those matching fact f (ids into this list).
  const std::vector<PatternRef> &applies_patterns() const { return applies_; }
  /// Applies-to pattern ids matching fact f.
  std::span<const uint32_t> appliers_of(FactId f) const { return appliers_of_.row(f); }
  /// Applies-to pattern ids matching a fact that is not interned (an obligation, the target).
  std::vector<uint32_t> appliers_matching(const Capability &fact) const;
  /// Number of non-optional applies-to patterns of each component (0 = never selected by applies-to).
  uint32_t required_applies(ComponentIndex c) const { return applies_needed_[c]; }

  /// All conflict patterns; conflicters_of(f) lists those matching fact f.
  const std::vector<PatternRef> &conflict_patterns() const { return conflicts_; }
  /// Conflict pattern ids matching fact f.
  std::span<const uint32_t> conflicters_of(FactId f) const { return conflicters_of_.row(f); }
  /// Conflict pattern ids matching a fact that is not interned.
  std::vector<uint32_t> conflicters_matching(const Capability &fact) const;

  /// Accept patterns that match `fact` (an obligation) as (component, index into accepts), ascending.
  std::vector<PatternRef> acceptors_matching(const Capability &fact) const;

  /// Components of one kind, ascending id.
  const std::vector<ComponentIndex> &of_kind(ComponentKind kind) const {
    return by_kind_[static_cast<size_t>(kind)];
  }
  /// Components of `kind` whose Component::name is `name` (dialects, intrinsic sets, layouts), ascending
  /// id.
  std::vector<ComponentIndex> named(ComponentKind kind, std::string_view name) const;
  /// Components of `kind` whose targets list `target`, ascending id.
  std::vector<ComponentIndex> claiming(ComponentKind kind, std::string_view target) const;
  /// Every target named by a backend, binding or pipeline, sorted.
  std::vector<std::string> targets() const;

  /// Diagnostics for malformed capability text found while indexing.
  const DiagnosticList &diagnostics() const { return diagnostics_; }

private:
  /// Rows of ids in one array: row r is data[offsets[r], offsets[r + 1]).
  struct Rows {
    std::vector<uint32_t> offsets{0};
    std::vector<uint32_t> data;
    std::span<const uint32_t> row(size_t r) const {
      return {data.data() + offsets[r], data.data() + offsets[r + 1]};
    }
    /// Number of rows.
    size_t size() const { return offsets.size() - 1; }
    /// Appends a row.
    template <class Range> void push(const Range &ids) {
      data.insert(data.end(), ids.begin(), ids.end());
      offsets.push_back(static_cast<uint32_t>(data.size()));
    }
    /// Builds `rows` rows from (row, id) pairs; ids ascend within a row.
    static Rows from_pairs(size_t rows, std::vector<std::pair<uint32_t, uint32_t>> &pairs);
  };

  /// Posting lists by CapabilityKey, built in two steps: add() every (key, id), then freeze() lays each
  /// key's ids out contiguously, in the order added; lookups come after freeze(). A key costs a slot of
  /// one table (the key itself in the slot, so a probe reads nothing else), no allocation; adding writes
  /// nothing at random but that slot; reading a list reads adjacent ids.
  struct Postings {
    struct Head {
      uint32_t begin = 0, end = 0;
      uint32_t count() const { return end - begin; }
    };
    struct Slot {
      CapabilityKey key = 0;
      uint32_t row = UINT32_MAX; ///< Index into heads; UINT32_MAX when the slot is empty.
    };
    std::vector<Slot> slots; ///< Open addressing, linear probing; a power of two, at most half full.
    std::vector<Head> heads; ///< Per key: while building, begin counts its ids; then its range of ids.
    std::vector<std::pair<uint32_t, uint32_t>> added; ///< (row, id) as added; emptied by freeze().
    std::vector<uint32_t> ids;                        ///< Every list, contiguous, after freeze().
    /// Room for `keys` keys and `ids` ids.
    void reserve(size_t key_count, size_t id_count);
    /// Appends id to the list of key.
    void add(CapabilityKey key, uint32_t id);
    /// Loads the slot a lookup or addition of key reads first.
    void prefetch(CapabilityKey key) const {
      if (!slots.empty()) __builtin_prefetch(&slots[key & (slots.size() - 1)]);
    }
    /// Lays the lists out; call once, after the last add().
    void freeze();
    /// The list of key, or nullptr.
    const Head *find(CapabilityKey key) const;
    /// Calls f(id) for each id of a list, in insertion order.
    template <class F> void each(const Head &h, F f) const {
      for (uint32_t e = h.begin; e < h.end; ++e)
        f(ids[e]);
    }
    /// Appends the ids filed under key to out.
    void append(CapabilityKey key, std::vector<uint32_t> &out) const {
      if (const Head *h = find(key)) out.insert(out.end(), ids.begin() + h->begin, ids.begin() + h->end);
    }

  private:
    void grow();
  };

  /// Patterns by an anchor: Namespace.Name plus their first text parameter, or Namespace.Name alone.
  struct PatternAnchors {
    Postings by_key;
    void add(const Capability &pattern, uint32_t id);
    std::vector<uint32_t> candidates(const Capability &fact) const;
  };

  /// The fact id of pool entry p, interning it on first use.
  FactId intern(uint32_t p);
  /// Loads the table slots intern(p) will probe.
  void prefetch_intern(uint32_t p) const;
  /// Loads the pattern and the table slots match_row(p) will read.
  void prefetch_match(uint32_t p) const;
  /// Loads the posting-list slots of pool entry p's keys.
  void prefetch_postings(uint32_t p) const;
  /// Pool entry p's keys (pool_keys_at_).
  std::span<const CapabilityKey> pool_keys(uint32_t p) const;
  /// Appends the keys of `cap` the postings file it under: name_key, then param_key of each text parameter.
  static void append_keys(const Capability &cap, std::vector<CapabilityKey> &out);
  /// Records what interning and matching need of the pool entry just parsed (pool_facts_, pool_keys_);
  /// `ranged`: a parameter of it is a version range.
  void describe_pool_entry(const Capability &cap, bool ranged);
  /// The row of facts matching pool entry p (computed once per distinct pattern).
  uint32_t match_row(uint32_t p);
  /// Appends to out the facts that `pattern` matches, ascending.
  void append_matching_facts(const Capability &pattern, std::vector<FactId> &out) const;
  /// The same, with the pattern's keys (append_keys) given.
  void append_matching(const Capability &pattern, std::span<const CapabilityKey> keys,
                       std::vector<FactId> &out) const;
  /// Parses one list of a component through the pool into list_pool_; false when an entry is malformed.
  /// `hashes` are the texts' IdHashTable::hash_text, computed ahead.
  bool parse_list(const Component &c, std::span<const std::string_view> texts, const uint64_t *hashes,
                  const char *field, bool fact, bool allow_optional);
  /// The pool index of a capability in the pool.
  uint32_t pool_index(const Capability &cap) const { return static_cast<uint32_t>(&cap - pool_.data()); }

  /// A distinct registered text: the registry's packed copy (which outlives the index), its pool entry
  /// (IdHashTable::kNone when malformed) and what the list checks need of its parse.
  struct TextEntry {
    std::string_view text;
    uint32_t pool = IdHashTable::kNone;
    bool optional = false; ///< Written with '?'.
    bool ranged = false;   ///< Some parameter is a version range (not a fact).
  };
  // Registered texts, each parsed once.
  std::vector<TextEntry> texts_;
  IdHashTable text_ids_;
  std::vector<Capability> pool_;            ///< CapabilityLists point into it once it is complete.
  std::vector<FactId> pool_fact_;           ///< Pool entry -> its fact, kNone until interned.
  std::vector<uint32_t> pool_row_;          ///< Pool entry -> its row in matches_, kNone until matched.
  std::vector<uint32_t> list_pool_;            ///< Every list's pool entries, while parsing.
  std::vector<const Capability *> list_arena_; ///< Every CapabilityList.
  std::vector<FactId> provided_arena_;         ///< Every `provided`.

  std::vector<IndexedComponent> components_;
  IdHashTable component_ids_;
  std::vector<const Capability *> facts_;
  /// Canonical texts: the registered (packed) text when it is canonical (as plugins usually write it),
  /// else the printed canonical text in arena_.
  std::vector<std::string_view> fact_texts_;
  std::vector<char> fact_exclusive_; ///< Per fact: is_exclusive_namespace(ns).
  TextArena arena_; ///< Canonical texts printed because they differ from the registered ones.
  std::vector<std::string_view>
      pool_text_; ///< Pool entry -> the registered (packed) text it was parsed from.
  /// What interning and matching need of a pool entry, computed when it is parsed (while it is in the
  /// cache) so that those later passes, which visit the pool at random, do not read the Capability again:
  /// the canonical text and its hash (when it can be a fact: no '?', no range), whether its namespace is
  /// exclusive, and its keys (name_key, then param_key of each text parameter) at pool_keys_at_[p].
  struct PoolFacts {
    std::string_view canonical; ///< Null data when the entry cannot be a fact.
    uint64_t hash = 0;
    bool exclusive = false;
  };
  std::vector<PoolFacts> pool_facts_;
  std::vector<uint32_t> pool_keys_at_; ///< Pool entry -> its first key in pool_keys_; one past the end last.
  std::vector<CapabilityKey> pool_keys_;
  std::string canonical_;                   ///< Printing buffer, reused.
  IdHashTable fact_ids_; ///< Canonical text -> fact.
  Rows providers_;
  Postings facts_by_name_;
  Postings facts_by_param_;
  Rows matches_; ///< One row per distinct requirement, conflict, invalidates or applies-to pattern.
  std::vector<uint32_t> entry_rows_; ///< Per requirement, conflict, invalidates, applies-to entry: its row.
  std::vector<std::array<uint32_t, 4>> match_base_; ///< Per component: first entry of each of the four.
  std::vector<PatternRef> applies_;
  Rows appliers_of_;
  PatternAnchors applies_anchors_;
  std::vector<uint32_t> applies_needed_;
  std::vector<PatternRef> conflicts_;
  Rows conflicters_of_;
  PatternAnchors conflict_anchors_;
  std::vector<PatternRef> accepts_;
  PatternAnchors accepts_anchors_;
  Postings by_name_; ///< name_key(kind name, Component::name) -> components
  std::vector<std::vector<ComponentIndex>> by_kind_;
  DiagnosticList diagnostics_;
};

/// A 64-bit key of a Namespace.Name, or of a Namespace.Name with one text parameter, for posting lists.
/// Keys can collide; that only lengthens a list, because every candidate is checked with matches().
/// The key of Namespace.Name.
CapabilityKey name_key(std::string_view ns, std::string_view name);
/// The key of Namespace.Name with text parameter key=text.
CapabilityKey param_key(std::string_view ns, std::string_view name, std::string_view key,
                        std::string_view text);

} // namespace htp
