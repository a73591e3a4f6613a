#include "digest/sha256.hpp"

#include "io/safe_read.hpp"

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

namespace htp {

namespace {

struct DigestCtx {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  DigestCtx() { EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr); }
  void update(const void *data, size_t n) { EVP_DigestUpdate(ctx.get(), data, n); }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), md.data(), &len);
    return hex_encode(md.data(), len);
  }
};

}  // namespace

std::string hex_encode(const unsigned char *data, size_t n) {
  static const char *digits = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  DigestCtx d;
  d.update(bytes.data(), bytes.size());
  return d.hex();
}

Expected<std::string> sha256_file(const std::filesystem::path &path) {
  DigestCtx d;
  if (auto e = stream_regular_file(path, [&](const char *data, size_t n) { d.update(data, n); })) return *e;
  return d.hex();
}

}  // namespace htp
