// A hash table of dense ids whose keys live with the caller: open addressing with linear probing over
// one array of 8-byte slots (32 bits of hash, id). The capability index keeps hundreds of thousands of
// texts and keys; with std::unordered_map each cost a node allocation (and a free when the index goes),
// here they cost a slot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace htp {

class IdHashTable {
public:
  static constexpr uint32_t kNone = UINT32_MAX;

  /// Room for `n` ids without rehashing.
  void reserve(size_t n) {
    size_t want = 16;
    while (want < 2 * n)
      want *= 2;
    if (want > slots_.size()) rehash(want);
  }
  /// Number of ids held.
  size_t size() const { return size_; }

  /// The id whose key has this hash and satisfies `equal(id)`, or kNone.
  template <class Equal> uint32_t find(uint64_t hash, Equal &&equal) const {
    if (slots_.empty()) return kNone;
    const uint32_t h = fold(hash);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot &s = slots_[i];
      if (s.id == kNone) return kNone;
      if (s.hash == h && equal(s.id)) return s.id;
    }
  }

  /// The id of the key equal to the new one (same hash and `equal(id)`), or `id` after inserting it:
  /// (that id, true when inserted).
  template <class Equal> std::pair<uint32_t, bool> insert(uint64_t hash, uint32_t id, Equal &&equal) {
    if (2 * (size_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
    const uint32_t h = fold(hash);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot &s = slots_[i];
      if (s.id == kNone) {
        s = Slot{h, id};
        ++size_;
        return {id, true};
      }
      if (s.hash == h && equal(s.id)) return {s.id, false};
    }
  }

  /// Starts loading the slot where a key of this hash is looked up first (a lookup soon after finds it
  /// in the cache).
  void prefetch(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[fold(hash) & mask_]);
  }

  /// The id a lookup of this hash would compare first (the first slot of equal folded hash), or kNone:
  /// what a caller prefetching ahead of its lookups loads next, without comparing keys.
  uint32_t peek(uint64_t hash) const {
    if (slots_.empty()) return kNone;
    const uint32_t h = fold(hash);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot &s = slots_[i];
      if (s.id == kNone || s.hash == h) return s.id;
    }
  }

  /// Hash of text, for callers keyed by strings.
  static uint64_t hash_text(std::string_view text) { return std::hash<std::string_view>{}(text); }
  /// Hash of an integer key (a multiplicative mix, so consecutive keys spread).
  static uint64_t hash_integer(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    return key ^ (key >> 33);
  }

private:
  struct Slot {
    uint32_t hash = 0;
    uint32_t id = kNone;
  };

  static uint32_t fold(uint64_t hash) { return static_cast<uint32_t>(hash ^ (hash >> 32)); }

  void rehash(size_t count) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(count, Slot{});
    mask_ = count - 1;
    for (const Slot &s : old) {
      if (s.id == kNone) continue;
      size_t i = s.hash & mask_;
      while (slots_[i].id != kNone)
        i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

} // namespace htp
