// IdHashTable against std::unordered_map: same ids for the same keys through growth, duplicates and
// hash collisions.
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "resolver/id_hash_table.hpp"

namespace htp {
namespace {

/// Interns strings: the table holds ids, the keys live in `keys`.
struct Interner {
  IdHashTable table;
  std::vector<std::string> keys;
  uint64_t (*hash)(std::string_view) = [](std::string_view s) { return IdHashTable::hash_text(s); };

  std::pair<uint32_t, bool> intern(const std::string &s) {
    auto next = static_cast<uint32_t>(keys.size());
    auto r = table.insert(hash(s), next, [&](uint32_t id) { return keys[id] == s; });
    if (r.second) keys.push_back(s);
    return r;
  }
  uint32_t find(const std::string &s) const {
    return table.find(hash(s), [&](uint32_t id) { return keys[id] == s; });
  }
};

TEST(IdHashTable, AnEmptyTableFindsNothing) {
  IdHashTable t;
  EXPECT_EQ(t.find(42, [](uint32_t) { return true; }), IdHashTable::kNone);
  EXPECT_EQ(t.size(), 0u);
}

TEST(IdHashTable, GivesTheSameIdsAsAnUnorderedMapThroughGrowth) {
  std::mt19937 rng(1);
  Interner in;
  std::unordered_map<std::string, uint32_t> ref;
  for (int i = 0; i < 200000; ++i) {
    std::string s = "IR.F" + std::to_string(rng() % 50000) + (rng() % 2 ? "(k=v)" : "");
    auto [id, inserted] = in.intern(s);
    auto [it, ref_inserted] = ref.emplace(s, static_cast<uint32_t>(ref.size()));
    ASSERT_EQ(inserted, ref_inserted) << s;
    ASSERT_EQ(id, it->second) << s;
  }
  EXPECT_EQ(in.table.size(), ref.size());
  for (const auto &[s, id] : ref)
    ASSERT_EQ(in.find(s), id);
  EXPECT_EQ(in.find("IR.Absent"), IdHashTable::kNone);
}

TEST(IdHashTable, KeysWithOneHashAreToldApartByEquality) {
  Interner in;
  in.hash = [](std::string_view) -> uint64_t { return 7; };
  for (int i = 0; i < 300; ++i)
    EXPECT_EQ(in.intern("k" + std::to_string(i)), std::make_pair(static_cast<uint32_t>(i), true));
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(in.find("k" + std::to_string(i)), static_cast<uint32_t>(i));
    EXPECT_EQ(in.intern("k" + std::to_string(i)), std::make_pair(static_cast<uint32_t>(i), false));
  }
  EXPECT_EQ(in.find("k300"), IdHashTable::kNone);
}

TEST(IdHashTable, ReserveKeepsWhatIsHeld) {
  Interner in;
  in.intern("a");
  in.intern("b");
  in.table.reserve(100000);
  EXPECT_EQ(in.find("a"), 0u);
  EXPECT_EQ(in.find("b"), 1u);
  EXPECT_EQ(in.intern("c").first, 2u);
}

TEST(IdHashTable, IntegerKeysSpreadOverTheTable) {
  IdHashTable t;
  std::vector<uint64_t> keys;
  for (uint64_t k = 0; k < 100000; ++k) {
    keys.push_back(k << 20); // keys that differ only in high bits
    t.insert(IdHashTable::hash_integer(keys.back()), static_cast<uint32_t>(k),
             [&](uint32_t id) { return keys[id] == keys.back(); });
  }
  for (uint64_t k = 0; k < 100000; k += 997)
    EXPECT_EQ(t.find(IdHashTable::hash_integer(k << 20), [&](uint32_t id) { return keys[id] == (k << 20); }), k);
}

} // namespace
} // namespace htp
