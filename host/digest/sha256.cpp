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
    static const char *digits = "0123456789abcdef";
    std::string out(len * 2, '0');
    for (unsigned i = 0; i < len; ++i) {
      out[2 * i] = digits[md[i] >> 4];
      out[2 * i + 1] = digits[md[i] & 15];
    }
    return out;
  }
};

}  // namespace

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
