#include "surface.hpp"

#include <algorithm>
#include <utility>

namespace tile {

const std::vector<Intrinsic> &intrinsics() {
  static const std::vector<Intrinsic> table = {
      {"add", OpClass::Elementwise, false, "adds"},
      {"sub", OpClass::Elementwise, false, "subs"},
      {"mul", OpClass::Elementwise, false, "muls"},
      {"div", OpClass::Elementwise, false, "divs"},
      {"max", OpClass::Elementwise, false, "maxs"},
      {"min", OpClass::Elementwise, false, "mins"},
      {"adds", OpClass::ScalarForm},
      {"subs", OpClass::ScalarForm},
      {"muls", OpClass::ScalarForm},
      {"divs", OpClass::ScalarForm},
      {"maxs", OpClass::ScalarForm},
      {"mins", OpClass::ScalarForm},
      {"exp", OpClass::Unary, true},
      {"log", OpClass::Unary, true},
      {"sqrt", OpClass::Unary, true},
      {"rsqrt", OpClass::Unary, true},
      {"abs", OpClass::Unary},
      {"neg", OpClass::Unary},
      {"relu", OpClass::Unary},
      {"sigmoid", OpClass::Unary, true},
      {"tanh", OpClass::Unary, true},
      {"rowsum", OpClass::RowReduce},
      {"rowmax", OpClass::RowReduce},
      {"rowmin", OpClass::RowReduce},
      {"colsum", OpClass::ColReduce},
      {"colmax", OpClass::ColReduce},
      {"rowexpand", OpClass::RowExpand},
      {"rowexpand_add", OpClass::RowExpandBinary},
      {"rowexpand_sub", OpClass::RowExpandBinary},
      {"rowexpand_mul", OpClass::RowExpandBinary},
      {"rowexpand_div", OpClass::RowExpandBinary},
      {"rowexpand_max", OpClass::RowExpandBinary},
      {"colexpand", OpClass::ColExpand},
      {"colexpand_add", OpClass::ColExpandBinary},
      {"colexpand_sub", OpClass::ColExpandBinary},
      {"colexpand_mul", OpClass::ColExpandBinary},
      {"colexpand_div", OpClass::ColExpandBinary},
      {"colexpand_max", OpClass::ColExpandBinary},
      {"transpose", OpClass::Transpose},
      {"matmul", OpClass::Matmul},
      {"cast", OpClass::Cast},
      {"load", OpClass::Load},
      {"store", OpClass::Store},
      {"full", OpClass::Full},
  };
  return table;
}

namespace {

constexpr std::pair<OpClass, std::string_view> kClassNames[] = {
    {OpClass::Elementwise, "elementwise"},
    {OpClass::ScalarForm, "scalar_form"},
    {OpClass::Unary, "unary"},
    {OpClass::RowReduce, "row_reduce"},
    {OpClass::ColReduce, "col_reduce"},
    {OpClass::RowExpand, "row_expand"},
    {OpClass::RowExpandBinary, "row_expand_binary"},
    {OpClass::Matmul, "matmul"},
    {OpClass::Cast, "cast"},
    {OpClass::Load, "load"},
    {OpClass::Store, "store"},
    {OpClass::Full, "full"},
    {OpClass::ColExpand, "col_expand"},
    {OpClass::ColExpandBinary, "col_expand_binary"},
    {OpClass::Copy, "copy"},
    {OpClass::Alloc, "alloc"},
    {OpClass::Transpose, "transpose"},
};

} // namespace

std::string_view class_name(OpClass c) {
  for (const auto &[cls, name] : kClassNames)
    if (cls == c) return name;
  return "?";
}

std::optional<OpClass> class_named(std::string_view name) {
  for (const auto &[cls, n] : kClassNames)
    if (n == name) return cls;
  return std::nullopt;
}

std::vector<std::string> class_names() {
  std::vector<std::string> out;
  for (const auto &[cls, name] : kClassNames)
    out.emplace_back(name);
  return out;
}

const Intrinsic *find_intrinsic(std::string_view name) {
  for (const auto &i : intrinsics())
    if (i.name == name) return &i;
  return nullptr;
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

} // namespace

std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string> &candidates) {
  std::optional<std::string> best;
  size_t best_d = std::min<size_t>(3, name.size());
  for (const auto &c : candidates) {
    size_t d = edit_distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::optional<std::string> closest_intrinsic(std::string_view name) {
  return closest_name(name, intrinsic_names());
}

std::vector<std::string> intrinsic_names() {
  std::vector<std::string> out;
  for (const auto &i : intrinsics())
    out.emplace_back(i.name);
  return out;
}

const std::vector<std::string> &dtypes() {
  static const std::vector<std::string> list = {"f16", "bf16", "f32", "i8", "i16", "i32", "i64", "u8"};
  return list;
}

bool is_dtype(std::string_view name) {
  const auto &d = dtypes();
  return std::find(d.begin(), d.end(), name) != d.end();
}

bool is_float_dtype(std::string_view dtype) {
  return dtype == "f16" || dtype == "bf16" || dtype == "f32";
}

std::vector<std::string> dialect_names() {
  std::vector<std::string> out = {"kernel", "Tile", "Tensor", "Scalar", "In", "Out", "InOut", "Constexpr"};
  for (const auto &d : dtypes())
    out.push_back(d);
  return out;
}

std::string_view last_component(std::string_view dotted) {
  auto dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

} // namespace tile
