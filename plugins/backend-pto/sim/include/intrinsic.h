// HTP PTO CPU simulator: the SPMD execution context of a kernel (pto-runtime 6ebaf7715
// tensormap_and_ringbuffer common/intrinsic.h names). args[48] and args[49] point at these contexts.
#pragma once

#include <cstdint>

#include "pto_task_id.h"

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif

static constexpr int32_t PTO2_EXT_PARAMS_COUNT = 2;
static constexpr int32_t SPMD_LOCAL_CONTEXT_INDEX = 48;
static constexpr int32_t SPMD_GLOBAL_CONTEXT_INDEX = 49;
/// Slots in a kernel's argument array (tensors, scalars, then the two context slots).
static constexpr int32_t HTP_PTOSIM_KERNEL_ARG_SLOTS = 50;

/// Per core.
struct GlobalContext {
  int32_t sub_block_id;
  uint64_t dma_workspace[4];
};

/// Per dispatch.
struct LocalContext {
  int32_t block_idx;
  int32_t block_num;
};

static __aicore__ inline int32_t get_block_idx(__gm__ int64_t *args) {
  return reinterpret_cast<LocalContext *>(static_cast<uintptr_t>(args[SPMD_LOCAL_CONTEXT_INDEX]))->block_idx;
}
static __aicore__ inline int32_t get_block_num(__gm__ int64_t *args) {
  return reinterpret_cast<LocalContext *>(static_cast<uintptr_t>(args[SPMD_LOCAL_CONTEXT_INDEX]))->block_num;
}
static __aicore__ inline int32_t get_sub_block_id(__gm__ int64_t *args) {
  return reinterpret_cast<GlobalContext *>(static_cast<uintptr_t>(args[SPMD_GLOBAL_CONTEXT_INDEX]))
      ->sub_block_id;
}
