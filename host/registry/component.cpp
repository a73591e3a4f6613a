#include "registry/component.hpp"

#include <array>

namespace htp {

namespace {
constexpr std::array<const char *, 7> kKindNames = {"dialect", "intrinsic-set", "layout", "pass",
                                                    "pipeline", "backend", "binding"};
constexpr std::array<const char *, 7> kStageNames = {"canonicalize", "analyze", "typecheck", "schedule",
                                                     "lower", "emit", "package"};
}  // namespace

const char *component_kind_name(ComponentKind k) { return kKindNames[static_cast<size_t>(k)]; }

bool parse_component_kind(std::string_view name, ComponentKind &out) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (name == kKindNames[i]) {
      out = static_cast<ComponentKind>(i);
      return true;
    }
  return false;
}

const char *pass_stage_name(PassStage s) { return kStageNames[static_cast<size_t>(s)]; }

bool parse_pass_stage(std::string_view name, PassStage &out) {
  for (size_t i = 0; i < kStageNames.size(); ++i)
    if (name == kStageNames[i]) {
      out = static_cast<PassStage>(i);
      return true;
    }
  return false;
}

}  // namespace htp
