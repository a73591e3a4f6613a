// Authenticity of packages: an Ed25519 signature over the exact bytes of manifest.json (which pins every
// file by sha256), detached in manifest.sig. Verify proves integrity; a signature checked against a
// trusted public key proves the manifest (and so every file) is what the key holder signed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "diag/diagnostic.hpp"

namespace htp {

inline constexpr const char *kSignatureSchema = "htp.signature.v1";

/// Writes a new Ed25519 key pair as PEM: the private key at `private_key` (mode 0600, refused if it exists)
/// and the public key at `private_key` + ".pub".
std::optional<Diagnostic> generate_signing_key(const std::filesystem::path &private_key);

/// Signs `<package>/manifest.json` with the PEM Ed25519 private key at `private_key`, writing
/// `<package>/manifest.sig` (htp.signature.v1 JSON: algorithm, the public key's sha256, the signature).
std::optional<Diagnostic> sign_package(const std::filesystem::path &package, const std::filesystem::path &private_key);

/// Checks `<package>/manifest.sig` against `<package>/manifest.json` with the PEM public key at
/// `public_key`: errors `package.signature` name a missing or malformed signature, another key, or a
/// manifest changed since it was signed.
DiagnosticList verify_package_signature(const std::filesystem::path &package, const std::filesystem::path &public_key);

}  // namespace htp
