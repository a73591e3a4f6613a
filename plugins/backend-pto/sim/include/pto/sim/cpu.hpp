// HTP PTO CPU simulator: what PTO-ISA's CPU stub provides outside `pto`: address-space and core qualifiers
// (empty on the CPU), pipes, events and their synchronisation (no-ops: one simulated core executes its
// instructions in program order), and the 16-bit float types.
#pragma once

#include <cstdint>

#ifndef __CPU_SIM
#define __CPU_SIM 1
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __global__
#define __global__
#endif
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __tf__
#ifndef AICORE
#define AICORE
#endif
#ifndef PTO_INST
#define PTO_INST inline
#endif
#ifndef PTO_INTERNAL
#define PTO_INTERNAL inline
#endif

typedef int pipe_t;
using event_t = int;
const pipe_t PIPE_S = 0;
const pipe_t PIPE_V = 1;
const pipe_t PIPE_MTE1 = 2;
const pipe_t PIPE_MTE2 = 3;
const pipe_t PIPE_MTE3 = 4;
const pipe_t PIPE_M = 5;
const pipe_t PIPE_ALL = 6;
const pipe_t PIPE_FIX = 7;
#define EVENT_ID0 0
#define EVENT_ID1 1
#define EVENT_ID2 2
#define EVENT_ID3 3
#define EVENT_ID4 4
#define EVENT_ID5 5
#define EVENT_ID6 6
#define EVENT_ID7 7

inline void set_flag(pipe_t, pipe_t, event_t) {}
inline void wait_flag(pipe_t, pipe_t, event_t) {}
inline void pipe_barrier(pipe_t) {}

typedef _Float16 half;
typedef _Float16 float16_t;
typedef float float32_t;
#if defined(__STDCPP_BFLOAT16_T__) && __cplusplus >= 202302L
#include <stdfloat>
typedef std::bfloat16_t bfloat16_t;
#else
#include <cstring>
// Toolchains without std::bfloat16_t (g++ 12): bfloat16 as its 16-bit pattern (the top half of an IEEE
// float, so tensors exchanged with torch or NumPy keep their bits), computed in float and rounded to
// nearest even on the way back; NaN stays NaN.
struct bfloat16_t {
  uint16_t bits;
  bfloat16_t() = default;
  bfloat16_t(float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    bits = (u & 0x7fffffffu) > 0x7f800000u ? uint16_t((u >> 16) | 0x40u) : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
  template <typename T, typename = decltype(float(T()))> bfloat16_t(T v) : bfloat16_t(float(v)) {}
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
};
#define HTP_PTOSIM_SOFT_BFLOAT16 1
#endif
