// The package backend-pto emits, as data: the kernels with their plans and func_ids, and the entries
// (workloads, CSP programs or standalone kernels) with their orchestration sources.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernel_ir.hpp"
#include "legality.hpp"
#include "memory_plan.hpp"

namespace ptobe {

/// A kernel to emit.
struct KernelUnit {
  Kernel kernel;
  KernelPlan plan;
  int func_id = 0;
  std::string path;  ///< relative to codegen/pto/
  /// The name pto-runtime knows the kernel by (kernel_config.py, the kernel's file): kernel.name, or within
  /// pto-runtime's 64 characters when that is longer (runtime_kernel_name).
  std::string runtime_name;
};

/// A parameter of an entry (htp.entrypoints params, docs/ir-contracts.md §8).
struct EntryParam {
  std::string name;
  std::string kind;  ///< tensor | scalar
  std::string dir = "in";
  json shape;        ///< dims: ints or symbol strings (tensors only)
  std::string dtype;
};

/// An entry point: one orchestration source.
struct EntryUnit {
  std::string name;
  std::string kind;  ///< workload | csp-program | kernel
  std::vector<EntryParam> params;
  std::string path;    ///< kernels/orchestration/<name>.cpp
  std::string source;  ///< the orchestration C++
  json sim;            ///< runtime_config.sim keys from the schedule (dispatch, task_window)
  /// Parameters global memory holds in a `mem` layout: name -> {"extents", "strides"} (Param::mem_extents),
  /// for the binding to stage the caller's arrays (kernel_registry.json entries.<e>.staging).
  json staging = json::object();
};

/// The kernels by name, for the orchestration emitters.
using KernelIndex = std::map<std::string, const KernelUnit *>;

/// Where the package's sources say they come from.
struct Origin {
  std::string target;
  std::string file;
};

}  // namespace ptobe
