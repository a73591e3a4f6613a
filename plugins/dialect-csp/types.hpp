// Type annotations of the tile dialect read as contract types (docs/ir-contracts.md §1): the element
// types of channels and the parameters of programs and processes.
#pragma once

#include "csp_common.hpp"

namespace csp {

/// A parameter: its direction ("in", "out", "inout") and contract type.
struct ParamType {
  std::string dir = "in";
  Json type;
};

/// The contract type of `Tile[R, C, dt]`, `Tensor[d0, ..., dt]`, `Scalar[dt]`, a dtype name, `int`,
/// `float`, `bool` or `Constexpr[...]` (dotted spellings allowed); nullopt with `why` set otherwise.
/// Dimensions are integers or captured integer constants.
std::optional<Json> type_of(htp::NodeRef annotation, const Json &constants, std::string &why);

/// A parameter annotation: `In[T]`, `Out[T]`, `InOut[T]` or a bare type (direction "in").
std::optional<ParamType> param_type_of(htp::NodeRef annotation, const Json &constants, std::string &why);

/// The tile type a process receives a channel item of type `elem` as: the element itself when it is a tile; a
/// `Tensor[R, C, dt]` item as `Tile[R, C, dt]` (`Tensor[N, dt]` as `Tile[1, N, dt]`), the form a process body
/// computes on; anything else unchanged (the tile dialect refuses it at the receive).
Json received_type(const Json &elem);

} // namespace csp
