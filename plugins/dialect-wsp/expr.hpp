// Scalar expressions (docs/ir-contracts.md §2): Python expressions of a workload lowered to the
// symbolic Expr JSON that task graphs carry — extents, predicates, offsets, scalar arguments.
#pragma once

#include "program.hpp"

#include <htp/interval.hpp>

#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace wsp {

/// A tensor a workload can pass to kernels: a parameter or an intermediate.
struct TensorDecl {
  std::string name;
  std::string dir; ///< in | out | inout (intermediates are inout)
  std::string dtype;
  json shape; ///< array of ints and dimension symbols (strings)
  bool intermediate = false;
};

/// What the names of a workload stand for at one point of its body.
struct Env {
  json constants = json::object();            ///< captured constants (literals)
  std::map<std::string, json> values;         ///< loop variables, scalar parameters, lets -> Expr
  std::map<std::string, TensorDecl> tensors;  ///< tensor parameters and intermediates
  std::map<std::string, htp::NodeRef> sparse; ///< locals bound to Sparse(...) (their defining call)
  std::map<std::string, json> channels;       ///< Channel[Tensor[...]] declarations -> element type
  std::map<std::string, std::string> items;   ///< names bound to the items of a consume loop -> channel
  std::map<std::string, htp::Interval> ranges; ///< loop variables whose values are known at compile time
  std::set<std::string> float_params;          ///< scalar parameters of a floating dtype (`a: float`)
  std::map<std::string, json> dims; ///< an inlined workload's dimension symbols -> the caller's dims (number or symbol)
};

/// The channel a name or a `recv(ch)` call stands for (a channel item passed to a kernel), or empty.
std::string channel_item(htp::NodeRef n, const Env &env);

/// Lowers a Python expression to an Expr; throws WspError (code `wsp.expr`) naming what is not allowed.
json lower_expr(htp::NodeRef e, const Env &env);

/// An operation node `{"op": name, "args": [...]}`, folded when its operands are literals.
json make_op(const std::string &name, std::vector<json> args);

/// A tensor dimension as an Expr: an int stays, a symbol "S" becomes `{"param": "S"}`.
json dim_expr(const json &dim);

/// The value of an integer expression of literals and captured int constants (`2 * R`, `M // TM`, `-1`),
/// folded with Python's semantics; nullopt when it is anything else or does not fold (overflow, / 0).
std::optional<int64_t> constant_int(htp::NodeRef e, const json &constants);

/// The integer a literal Expr holds.
std::optional<int64_t> int_of(const json &e);

/// `a - b` when it is a constant after affine normalisation (`(i+1)*32 - i*32` is 32).
std::optional<int64_t> constant_difference(const json &a, const json &b);

/// Whether a dtype is an integer type (tensors read in expressions must be).
bool is_integer_dtype(const std::string &dtype);

/// The tensor named by a Name node, or nullptr.
const TensorDecl *tensor_of(htp::NodeRef n, const Env &env);

} // namespace wsp
