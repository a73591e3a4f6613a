// Conversions between layout kinds and the canonical Axe form. A kind registers a pair of functions
// (to Axe, from Axe); converting between two kinds goes through Axe, so n kinds need n pairs, not n².
// This registry serves the kinds built into this plugin and the tests; a kind from another plugin
// converts at the IR level instead (node attribute `layout.axe`, see docs/dialects/layout-axe.md).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "axe_layout.hpp"
#include "layout_builder.hpp"

namespace htp::axe {

class ConversionRegistry {
public:
  /// A foreign layout document (`{"kind": K, ...}`) for a tensor on a mesh, as a canonical layout.
  using ToAxe = std::function<Result<AxeLayout>(const nlohmann::json &, const TensorInfo &, const Mesh &)>;
  /// A canonical layout in kind K, or an error when K cannot express it.
  using FromAxe = std::function<Result<nlohmann::json>(const AxeLayout &, const Mesh &)>;

  /// The registry with the built-in kinds: "axe" (the canonical object itself) and "dist" ({"text":
  /// "S(0)R"}).
  static ConversionRegistry with_builtin_kinds();

  /// Registers (or replaces) kind `kind`.
  void add(const std::string &kind, ToAxe to_axe, FromAxe from_axe);
  /// Registered kinds, sorted.
  std::vector<std::string> kinds() const;
  /// Converts a document of any registered kind to Axe (code layout.kind for an unknown kind).
  Result<AxeLayout> to_axe(const nlohmann::json &doc, const TensorInfo &t, const Mesh &mesh) const;
  /// Converts a canonical layout to kind `kind`.
  Result<nlohmann::json> from_axe(const AxeLayout &l, const std::string &kind, const Mesh &mesh) const;
  /// Converts a document to kind `kind` through Axe.
  Result<nlohmann::json> convert(const nlohmann::json &doc, const std::string &kind, const TensorInfo &t,
                                 const Mesh &mesh) const;

private:
  struct Entry {
    ToAxe to_axe;
    FromAxe from_axe;
  };
  const Entry *find(const std::string &kind) const;
  std::map<std::string, Entry> kinds_;
};

} // namespace htp::axe
