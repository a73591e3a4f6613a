// Overlapping views of one tensor passed to one AIE task as an input and an output: the task moves its
// inputs in before its outputs out, so a kernel that loads the input after storing the output sees the old
// values where Ascend (in program order) sees the new ones. Shared by the planner (aie.alias at compile time,
// where the views are known) and the host orchestrator (at run time, where their offsets are computed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace htp::aie {

/// Whether the boxes (offset, shape) a and b of one tensor share an element.
inline bool boxes_overlap(const std::vector<int64_t> &a_offset, const std::vector<int64_t> &a_shape,
                          const std::vector<int64_t> &b_offset, const std::vector<int64_t> &b_shape) {
  for (size_t d = 0; d < a_offset.size() && d < b_offset.size() && d < a_shape.size() && d < b_shape.size(); ++d)
    if (a_offset[d] + a_shape[d] <= b_offset[d] || b_offset[d] + b_shape[d] <= a_offset[d]) return false;
  return true;
}

/// The reason of aie.alias: `kernel` loads `in` ("In" or "InOut") after it stores `out` ("Out" or "InOut"),
/// overlapping views of `tensor`.
inline std::string aliasing_reason(const std::string &kernel, const std::string &tensor, const std::string &in,
                                   const std::string &in_dir, const std::string &out, const std::string &out_dir) {
  return "kernel '" + kernel + "' takes overlapping views of '" + tensor + "' as '" + in + "' (" + in_dir + ") and '" +
         out + "' (" + out_dir + "), and loads '" + in + "' after it stores '" + out +
         "'; an AIE task moves its inputs in before its outputs out, so the load would see the old values "
         "(Ascend's, in program order, the new ones): pass views that do not overlap";
}

}  // namespace htp::aie
