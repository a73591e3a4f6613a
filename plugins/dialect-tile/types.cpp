#include "types.hpp"

namespace tile {

namespace {

std::string dims_str(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s;
}

} // namespace

std::string shape_str(const std::vector<int64_t> &shape) {
  return "[" + dims_str(shape) + "]";
}

nlohmann::ordered_json Type::to_json() const {
  nlohmann::ordered_json j;
  switch (kind) {
  case Kind::Tensor:
  case Kind::Tile:
    j["kind"] = kind == Kind::Tensor ? "tensor" : "tile";
    j["shape"] = shape;
    j["dtype"] = dtype;
    break;
  case Kind::Scalar:
    j["kind"] = "scalar";
    j["dtype"] = dtype;
    break;
  case Kind::Constexpr:
    j["kind"] = "constexpr";
    j["value"] = value;
    break;
  case Kind::None: return nullptr;
  }
  return j;
}

std::string Type::str() const {
  switch (kind) {
  case Kind::Tensor: return "Tensor[" + dims_str(shape) + (shape.empty() ? "" : ", ") + dtype + "]";
  case Kind::Tile: return "Tile[" + dims_str(shape) + ", " + dtype + "]";
  case Kind::Scalar: return "Scalar[" + dtype + "]";
  case Kind::Constexpr: return value.is_null() ? "Constexpr" : "Constexpr(" + value.dump() + ")";
  case Kind::None: break;
  }
  return "None";
}

} // namespace tile
