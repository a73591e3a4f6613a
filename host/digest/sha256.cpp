#include "digest/sha256.hpp"

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
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Diagnostic::error("io.read", "cannot read '" + path.string() + "': " + std::strerror(errno));
  DigestCtx d;
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    if (in.gcount() > 0) d.update(buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Diagnostic::error("io.read", "error while reading '" + path.string() + "'");
  return d.hex();
}

}  // namespace htp
