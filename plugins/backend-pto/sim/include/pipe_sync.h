// HTP PTO CPU simulator: pipe_sync(), the end-of-kernel pipe drain (pto-runtime simpler_setup/incore
// pipe_sync.h name). On the CPU every instruction has completed when it returns.
#pragma once

#include <pto/pto-inst.hpp>

#if !defined(__DAV_VEC__) && !defined(__DAV_CUBE__)
#error "pipe_sync.h requires __DAV_VEC__ or __DAV_CUBE__ to be defined"
#endif

static __aicore__ inline void pipe_sync() {
#if defined(__DAV_VEC__)
  set_flag(PIPE_MTE3, PIPE_S, EVENT_ID7);
  wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID7);
#else
  set_flag(PIPE_FIX, PIPE_S, EVENT_ID7);
  wait_flag(PIPE_FIX, PIPE_S, EVENT_ID7);
#endif
}
