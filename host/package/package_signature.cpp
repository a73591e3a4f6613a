#include "package/package_signature.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "digest/sha256.hpp"
#include "io/atomic_file.hpp"
#include "io/safe_read.hpp"
#include "package/package_manifest.hpp"
#include "package/package_writer.hpp"

namespace fs = std::filesystem;

namespace htp {

namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

Diagnostic signature_error(const std::string &message) { return Diagnostic::error("package.signature", message); }

std::optional<std::vector<unsigned char>> unhex(const std::string &text) {
  if (text.size() % 2) return std::nullopt;
  std::vector<unsigned char> out(text.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int v = 0;
    for (int k = 0; k < 2; ++k) {
      const char c = text[2 * i + k];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + d;
    }
    out[i] = static_cast<unsigned char>(v);
  }
  return out;
}

/// A PEM key file: private (`want_private`) or public.
Expected<Key> read_key(const fs::path &path, bool want_private) {
  auto text = read_regular_file(path, 64 * 1024);
  if (!text) return text.error();
  Bio bio(BIO_new_mem_buf(text->data(), static_cast<int>(text->size())), &BIO_free);
  Key key(want_private ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                       : PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr),
          &EVP_PKEY_free);
  if (!key || EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519)
    return signature_error("'" + path.string() + "' is not a PEM Ed25519 " + (want_private ? "private" : "public") +
                           " key (make one with `htp-host keygen KEY`)");
  return key;
}

/// The sha256 of the raw 32-byte public key: how signatures name their key.
std::string key_id(EVP_PKEY *key) {
  unsigned char raw[32];
  size_t n = sizeof raw;
  if (EVP_PKEY_get_raw_public_key(key, raw, &n) != 1) return "";
  return sha256_hex(std::string_view(reinterpret_cast<const char *>(raw), n));
}

std::string pem_of(EVP_PKEY *key, bool private_key) {
  Bio bio(BIO_new(BIO_s_mem()), &BIO_free);
  const int ok = private_key ? PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)
                             : PEM_write_bio_PUBKEY(bio.get(), key);
  if (ok != 1) return "";
  char *data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

}  // namespace

std::optional<Diagnostic> generate_signing_key(const fs::path &private_key) {
  const fs::path public_key = private_key.string() + ".pub";
  if (file_kind(private_key) != "nothing")
    return signature_error("'" + private_key.string() + "' exists; refusing to overwrite a key");
  EVP_PKEY *raw = nullptr;
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr),
                                                                 &EVP_PKEY_CTX_free);
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1)
    return signature_error("OpenSSL could not generate an Ed25519 key");
  Key key(raw, &EVP_PKEY_free);
  const std::string priv = pem_of(key.get(), true), pub = pem_of(key.get(), false);
  if (priv.empty() || pub.empty()) return signature_error("OpenSSL could not encode the key as PEM");
  if (auto e = atomic_write_file(private_key, priv)) return e;
  fs::permissions(private_key, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  return atomic_write_file(public_key, pub);
}

std::optional<Diagnostic> sign_package(const fs::path &package, const fs::path &private_key) {
  auto key = read_key(private_key, true);
  if (!key) return key.error();
  auto manifest = read_regular_file(package / kManifestFile, kMaxDocumentBytes);
  if (!manifest) return manifest.error();
  MdCtx ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  unsigned char sig[64];
  size_t n = sizeof sig;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key->get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &n, reinterpret_cast<const unsigned char *>(manifest->data()), manifest->size()) != 1)
    return signature_error("OpenSSL could not sign '" + (package / kManifestFile).string() + "'");
  nlohmann::ordered_json doc = {{"schema", kSignatureSchema},
                                {"algorithm", "ed25519"},
                                {"public_key_sha256", key_id(key->get())},
                                {"manifest_sha256", sha256_hex(*manifest)},
                                {"signature", hex_encode(sig, n)}};
  return atomic_write_file(package / kSignatureFile, doc.dump(2) + "\n");
}

DiagnosticList verify_package_signature(const fs::path &package, const fs::path &public_key) {
  DiagnosticList diags;
  auto key = read_key(public_key, false);
  if (!key) {
    diags.report(key.error());
    return diags;
  }
  const fs::path sig_file = package / kSignatureFile;
  if (file_kind(sig_file) == "nothing") {
    diags.report(signature_error("the package is not signed: no " + std::string(kSignatureFile) +
                                 " (sign it with `htp-host sign PKG --key KEY`)"));
    return diags;
  }
  auto text = read_regular_file(sig_file, 64 * 1024);
  auto manifest = read_regular_file(package / kManifestFile, kMaxDocumentBytes);
  if (!text || !manifest) {
    diags.report(!text ? text.error() : manifest.error());
    return diags;
  }
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  std::optional<std::vector<unsigned char>> sig;
  if (doc.is_object() && doc.value("schema", "") == kSignatureSchema && doc.value("algorithm", "") == "ed25519" &&
      doc.contains("signature") && doc["signature"].is_string())
    sig = unhex(doc["signature"].get<std::string>());
  if (!sig || sig->size() != 64) {
    diags.report(signature_error("'" + sig_file.string() + "' is not an " + kSignatureSchema + " Ed25519 signature"));
    return diags;
  }
  const std::string want = key_id(key->get()), signer = doc.value("public_key_sha256", "");
  if (signer != want) {
    diags.report(signature_error("the package was signed by another key (public key sha256 " + signer +
                                 "), not by '" + public_key.string() + "' (" + want + ")"));
    return diags;
  }
  MdCtx ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key->get()) == 1 &&
                  EVP_DigestVerify(ctx.get(), sig->data(), sig->size(),
                                   reinterpret_cast<const unsigned char *>(manifest->data()), manifest->size()) == 1;
  if (!ok)
    diags.report(signature_error("the signature does not match manifest.json: the manifest was changed after it was "
                                 "signed (signed sha256 " + doc.value("manifest_sha256", std::string("?")) +
                                 ", now " + sha256_hex(*manifest) + ")"));
  return diags;
}

}  // namespace htp
