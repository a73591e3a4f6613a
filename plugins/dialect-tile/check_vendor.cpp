// Vendor intrinsics in tile bodies: `pto.exp(x)`, `aie.add(a, b)`, `pto.colexpand(s, 16)`.
//
// A vendor op with a portable namesake is typed by the portable contract (one table: surface.cpp); a
// vendor-only op by the contract class its set's plugin publishes in the module attribute
// `tile.intrinsics.<set>` (htp.tile.intrinsic-set.v1, docs/intrinsics.md §3) — plugins never link each
// other, so the set's owner hands its table over as data, before tile.typecheck runs. The lowered op
// records the set (`"set": "pto"`); the obligation Uses.Intrinsic(set=pto,op=exp) was raised by the scanner.
#include "kernel_checker.hpp"

namespace tile {

namespace {

std::string join(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &i : items)
    out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::vector<std::string> op_names(const nlohmann::json &table) {
  std::vector<std::string> out;
  for (const auto &[name, entry] : table["ops"].items())
    out.push_back(name);
  return out;
}

/// The first structural problem of a published table, or "".
std::string table_problem(const nlohmann::json &t) {
  if (!t.is_object()) return "it is not a JSON object";
  if (t.value("schema", "") != "htp.tile.intrinsic-set.v1") return "its schema is not htp.tile.intrinsic-set.v1";
  if (!t.contains("ops") || !t["ops"].is_object()) return "it has no \"ops\" object";
  for (const auto &[name, entry] : t["ops"].items()) {
    if (!entry.is_object() || !entry.contains("contract") || !entry["contract"].is_string())
      return "op '" + name + "' has no \"contract\" string";
    if (!class_named(entry["contract"].get<std::string>()))
      return "op '" + name + "' names the unknown contract class '" + entry["contract"].get<std::string>() +
             "' (known: " + join(class_names()) + ")";
  }
  return "";
}

} // namespace

const nlohmann::json *KernelChecker::published_set(const std::string &set, htp::NodeRef at) {
  auto it = published_.find(set);
  if (it == published_.end()) {
    nlohmann::json table;
    if (auto text = ctx_.module().attr("tile.intrinsics." + set)) {
      table = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
      std::string problem = table.is_discarded() ? "it is not valid JSON" : table_problem(table);
      if (!problem.empty()) {
        error(at, "tile.intrinsic-contract",
              "the contract table of intrinsic set '" + set + "' (module attribute tile.intrinsics." + set +
                  ") is malformed: " + problem);
        table = nlohmann::json();
      }
    }
    it = published_.emplace(set, std::move(table)).first;
  }
  return it->second.is_null() ? nullptr : &it->second;
}

std::optional<Intrinsic> KernelChecker::vendor_contract(const IntrinsicCall &c, htp::NodeRef call) {
  const Intrinsic *portable = find_intrinsic(c.op);
  const nlohmann::json *table = published_set(c.set, call);
  const nlohmann::json *entry = table && (*table)["ops"].contains(c.op) ? &(*table)["ops"][c.op] : nullptr;
  std::string owner = table ? " (plugin '" + table->value("plugin", std::string("?")) + "')" : "";
  if (table && !entry) {
    auto near = closest_name(c.op, op_names(*table));
    error(call, "tile.unknown-intrinsic",
          "'" + c.qualified() + "' is not an op of intrinsic set '" + c.set + "'" + owner + ", which has: " +
              join(op_names(*table)) + (near ? "; did you mean '" + c.set + "." + *near + "'?" : ""));
    return std::nullopt;
  }
  if (!entry) {
    if (portable) return *portable; // a set that publishes nothing: typed like its portable namesake
    error(call, "tile.intrinsic-contract",
          "'" + c.qualified() + "' has no portable namesake and intrinsic set '" + c.set +
              "' publishes no contract for it (module attribute tile.intrinsics." + c.set +
              ", written by the set's plugin; docs/intrinsics.md)");
    return std::nullopt;
  }
  OpClass cls = *class_named((*entry)["contract"].get<std::string>());
  if (portable && portable->cls != cls) {
    error(call, "tile.intrinsic-contract",
          "intrinsic set '" + c.set + "'" + owner + " declares '" + c.qualified() + "' with contract '" +
              std::string(class_name(cls)) + "', but the portable " + c.op + " is '" +
              std::string(class_name(portable->cls)) + "'");
    return std::nullopt;
  }
  Intrinsic out = portable ? *portable : Intrinsic{*vendor_op_names_.insert(c.op).first, cls};
  out.float_only = out.float_only || entry->value("float_only", false);
  return out;
}

Value KernelChecker::vendor_intrinsic(const IntrinsicCall &c, htp::NodeRef call, const std::string *hint) {
  auto contract = vendor_contract(c, call);
  if (!contract) return {};
  vendor_calls_.emplace_back(call, c.set);
  Value v = intrinsic(*contract, call, hint);
  vendor_calls_.pop_back();
  return v;
}

} // namespace tile
