// `htp-host inspect PKG`, `htp-host verify PKG [--key PUB]`, `htp-host sign PKG --key KEY`, `htp-host keygen KEY`.
#include <iomanip>
#include <iostream>

#include "cli/cli_session.hpp"
#include "package/package_manifest.hpp"
#include "package/package_signature.hpp"

namespace htp::cli {

namespace {

int inspect_package(const std::string &dir, bool json) {
  auto m = read_package_manifest(absolute_cli_path(dir));
  if (!m) {
    Session::print(m.error());
    return kExitError;
  }
  uint64_t total = 0;
  for (const auto &f : m->files) total += f.size;
  if (json) {
    nlohmann::ordered_json out;
    out["target"] = m->target;
    out["htp_version"] = m->htp_version;
    out["plugins"] = nlohmann::ordered_json::array();
    for (const auto &p : m->plugins)
      out["plugins"].push_back({{"name", p.name}, {"version", p.version}, {"sha256", p.sha256}});
    out["passes"] = m->passes;
    out["entrypoints"] = m->entrypoints;
    out["files"] = nlohmann::ordered_json::array();
    for (const auto &f : m->files)
      out["files"].push_back({{"path", f.path}, {"role", f.role}, {"size", f.size}, {"volatile", f.volatile_content}});
    out["total_bytes"] = total;
    std::cout << out.dump(2) << '\n';
    return kExitOk;
  }
  std::cout << "package " << absolute_cli_path(dir) << "\n  target  " << m->target << "\n  htp     " << m->htp_version
            << "\n  plugins";
  for (const auto &p : m->plugins) std::cout << ' ' << p.name << '@' << p.version;
  std::cout << "\n  passes  " << m->passes.size() << '\n';
  for (size_t i = 0; i < m->passes.size(); ++i) std::cout << "    " << std::setw(2) << i + 1 << ". " << m->passes[i] << '\n';
  std::cout << "  entrypoints " << m->entrypoints.dump() << "\n  files   " << m->files.size() << " (" << total
            << " bytes)\n";
  for (const auto &f : m->files)
    std::cout << "    " << std::left << std::setw(48) << f.path << std::right << std::setw(10)
              << (f.volatile_content ? std::string("volatile") : std::to_string(f.size)) << "  " << f.role << '\n';
  return kExitOk;
}

int verify_package_cmd(Session &session, const std::string &dir, const std::string &key) {
  PluginHost &host = session.plugins();
  std::vector<PluginRef> loaded;
  for (const auto &p : host.plugins()) loaded.push_back(p->ref());
  DiagnosticList diags = verify_package(absolute_cli_path(dir), &loaded);
  if (!key.empty()) diags.append(verify_package_signature(absolute_cli_path(dir), absolute_cli_path(key)));
  if (!diags.empty()) Session::print(diags);
  if (diags.has_errors()) return kExitError;
  std::cout << "ok: " << absolute_cli_path(dir) << ": manifest, file hashes"
            << (key.empty() ? "" : ", signature") << " and plugin set verified\n";
  return kExitOk;
}

int sign_package_cmd(const std::string &dir, const std::string &key) {
  if (auto e = sign_package(absolute_cli_path(dir), absolute_cli_path(key))) {
    Session::print(*e);
    return kExitError;
  }
  std::cout << "signed: " << absolute_cli_path(dir) << "/" << kSignatureFile << '\n';
  return kExitOk;
}

int keygen_cmd(const std::string &key) {
  if (auto e = generate_signing_key(absolute_cli_path(key))) {
    Session::print(*e);
    return kExitError;
  }
  std::cout << "wrote " << absolute_cli_path(key) << " (private) and " << absolute_cli_path(key)
            << ".pub (public)\n";
  return kExitOk;
}

}  // namespace

void register_package_commands(CLI::App &app, Session &session) {
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto *inspect = app.add_subcommand("inspect", "Summarise a package: target, plan, files and sizes");
  inspect->add_option("PACKAGE", *dir, "Package directory")->required();
  inspect->add_flag("--json", *json, "Machine-readable output");
  inspect->callback([&session, dir, json] { session.action = [dir, json] { return inspect_package(*dir, *json); }; });

  auto vdir = std::make_shared<std::string>();
  auto vkey = std::make_shared<std::string>();
  auto *verify = app.add_subcommand("verify", "Check a package's manifest, file hashes and recorded plugin set");
  verify->add_option("PACKAGE", *vdir, "Package directory")->required();
  verify->add_option("--key", *vkey, "Also check manifest.sig against this PEM Ed25519 public key");
  verify->callback([&session, vdir, vkey] {
    session.action = [&session, vdir, vkey] { return verify_package_cmd(session, *vdir, *vkey); };
  });

  auto sdir = std::make_shared<std::string>();
  auto skey = std::make_shared<std::string>();
  auto *sign = app.add_subcommand("sign", "Sign a package's manifest.json with an Ed25519 key (writes manifest.sig)");
  sign->add_option("PACKAGE", *sdir, "Package directory")->required();
  sign->add_option("--key", *skey, "PEM Ed25519 private key (htp-host keygen)")->required();
  sign->callback([&session, sdir, skey] { session.action = [sdir, skey] { return sign_package_cmd(*sdir, *skey); }; });

  auto gkey = std::make_shared<std::string>();
  auto *keygen = app.add_subcommand("keygen", "Write a new Ed25519 key pair for signing packages (KEY and KEY.pub)");
  keygen->add_option("KEY", *gkey, "Path of the private key to create")->required();
  keygen->callback([&session, gkey] { session.action = [gkey] { return keygen_cmd(*gkey); }; });
}

}  // namespace htp::cli
