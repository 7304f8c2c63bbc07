/* The one choice of fast_s8_core.h's steps by architecture: each header below provides the
 * same names, so the loops of fast/ and of the kernels that share them call one name.
 *   quad, quad_in, quad_dot, quad_mac, bcast_mac  four int8 lanes' multiply-accumulates
 *   mak_qadd                                        a + b saturated to int32
 *   mul_add_wide                                    where FAST_HALVES: a * b + a 64-bit addend
 *   REQUANT_RIGHT, REQUANT_Q_RIGHT                  requant_right's form for the convolutions
 *                                                   and for requant_q (SVDF, LSTM)
 * Included by fast_s8_core.h (which defines what they use first); docs/architecture.md, "Where
 * to add". */
#ifndef MA_FAST_CORE_STEPS_H
#define MA_FAST_CORE_STEPS_H

#include "fast/arch.h"

/* requant_right and requant_left build the 64-bit product from 16-bit halves (mul_add_wide):
 * Armv6-M has no 32 x 32 -> 64 multiply, and the host takes the same C form so that the
 * conformance suite checks its logic there. */
#define FAST_HALVES (FAST_V6M || FAST_HOST)

#if FAST_DSP
#include "fast/dsp/fast_dsp_core.h"
#elif FAST_V7M
#include "fast/v7m/fast_v7m_core.h"
#elif FAST_V6M
#include "fast/v6m/fast_v6m_core.h"
#else
#include "fast/fast_core_portable.h"
#include "fast/fast_wide.h"
#define REQUANT_RIGHT requant_right
#define REQUANT_Q_RIGHT requant_right
#endif

#endif
