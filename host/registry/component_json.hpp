// JSON form of a component, shared by plugin manifests, `plugins inspect --json` and plans.
#pragma once

#include <nlohmann/json.hpp>

#include "json/json_reader.hpp"
#include "registry/component.hpp"

namespace htp {

/// The component's declaration as JSON (kind-specific fields only for its kind; no plugin identity).
nlohmann::json component_to_json(const Component &c);

/// Reads a component declaration written by component_to_json; throws JsonSchemaError with the path.
Component component_from_json(const JsonReader &r);

}  // namespace htp
