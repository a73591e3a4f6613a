// The `pto` intrinsic set: one typed contract per operation (operand/result shapes and dtypes, memory
// spaces, core type) and the check the legality pass applies to every IR statement. Portable tile
// intrinsics of the same name share the contract and the emitter.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_ir.hpp"

namespace ptobe {

/// The shape rule of an operation family.
enum class OpKind {
  Load,             ///< dst tile <- tensor param at offset
  Store,            ///< tensor param at offset <- value tile
  Alloc,            ///< declares dst (no code)
  Full,             ///< dst <- scalar constant
  Copy,             ///< dst <- src, same shape
  Binary,           ///< dst <- a . b, all one shape and dtype
  ScalarBinary,     ///< dst <- a . scalar
  Unary,            ///< dst <- f(a)
  RowReduce,        ///< [R,C] -> [R,1]
  ColReduce,        ///< [R,C] -> [1,C]
  RowExpand,        ///< [R,1] -> [R,C]
  ColExpand,        ///< [1,C] -> [R,C]
  RowExpandBinary,  ///< [R,C] . rowexpand([R,1]) -> [R,C]
  ColExpandBinary,  ///< [R,C] . colexpand([1,C]) -> [R,C]
  Matmul,           ///< [M,K] x [K,N] -> [M,N] accumulator
  Cast,             ///< same shape, dst dtype
  Transpose,        ///< [R,C] -> [C,R] (TTRANS, with a scratch tile)
};

/// Where an operation runs.
enum class CoreType { Aiv, Aic, Any };

/// "aiv" / "aic" / "any".
std::string_view core_type_name(CoreType c);

/// One operation's contract.
struct IntrinsicContract {
  std::string_view op;       ///< IR / surface name: "add", "rowexpand_sub"
  OpKind kind;
  CoreType core;
  std::string_view isa;      ///< PTO-ISA instruction(s) it lowers to, for docs and messages
  bool float_only = false;   ///< element type must be f16, bf16 or f32
  std::string_view summary;
};

/// Every operation of the set, in documentation order.
const std::vector<IntrinsicContract> &intrinsic_contracts();

/// The contract of `op` (normalised name), or nullptr.
const IntrinsicContract *find_intrinsic(std::string_view op);

/// The names of every operation (the intrinsic set's `ops`).
std::vector<std::string> intrinsic_op_names();

/// The first violation of `c` by statement `s` of kernel `k` (mis-shaped operand, wrong dtype, unknown
/// register), or nullopt when the statement satisfies its contract.
std::optional<std::string> check_contract(const Kernel &k, const Op &s, const IntrinsicContract &c);

/// The memory spaces an operation's tile operands (`in`) and result (`out`) may live in, derived from its
/// kind; the memory plan places tiles accordingly and legality checks the plan against them. GM stands for
/// a tensor parameter (load's source, store's destination).
struct MemorySpaces {
  std::vector<std::string_view> in, out;
};
MemorySpaces memory_spaces(const IntrinsicContract &c);
/// "GM -> UB | L1" for docs and messages.
std::string memory_spaces_text(const MemorySpaces &m);

/// The tile dialect's contract class of a kind ("elementwise", "row_reduce", ... docs/intrinsics.md §3).
std::string_view contract_class(OpKind k);

/// The set's contract table as the tile dialect reads it (htp.tile.intrinsic-set.v1, module attribute
/// tile.intrinsics.pto): per op its contract class, float_only, core type, memory spaces, instructions.
json intrinsic_set_table();

/// "[32, 128] f32" for messages.
std::string describe_tile(const std::vector<int64_t> &shape, const std::string &dtype);

}  // namespace ptobe
