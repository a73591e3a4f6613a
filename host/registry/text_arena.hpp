// Strings packed one after another in large chunks that never move: a view into the arena stays valid as
// long as the arena, however much is added after it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace htp {

class TextArena {
public:
  /// A copy of `text` in the arena.
  std::string_view copy(std::string_view text) {
    if (chunks_.empty() || used_ + text.size() > capacity_) {
      capacity_ = std::max<size_t>(kChunk, text.size());
      chunks_.push_back(std::make_unique_for_overwrite<char[]>(capacity_));
      used_ = 0;
    }
    char *at = chunks_.back().get() + used_;
    if (!text.empty()) std::memcpy(at, text.data(), text.size());
    used_ += text.size();
    return {at, text.size()};
  }

private:
  static constexpr size_t kChunk = size_t{1} << 16;
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t used_ = 0, capacity_ = 0;
};

} // namespace htp
