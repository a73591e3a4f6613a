// htp_ptosim: SHA-256 for the build cache's content keys (plugins link nothing of the host).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace htp_ptosim {

class Sha256 {
public:
  Sha256();
  Sha256 &update(const void *data, size_t size);
  Sha256 &update(std::string_view s) { return update(s.data(), s.size()); }
  /// Adds a length-prefixed field, so that ("ab","c") and ("a","bc") differ.
  Sha256 &field(std::string_view s);
  /// Lower-case hex digest; the object must not be updated afterwards.
  std::string hex();

private:
  void block(const uint8_t *p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t used_ = 0;
  uint64_t bytes_ = 0;
};

} // namespace htp_ptosim
