/* The one choice of fast_depthwise_s8.c's steps by architecture. Each header below defines
 * the same names:
 *   DW_TAPS_NOINLINE, DW_SUMS_NOINLINE  attributes of dw4 and dw4_shared, and of sums_quad,
 *                                       sums_bcast and sums_wide (empty or noinline)
 *   DW_TAP4(a, i, f, off)               one tap of dw4: a plus four channels' inputs times
 *                                       weights (DW_TAP4_WORDS, fast_dw_taps.h, or its own)
 *   DW_SHARED_ANY_WIDTH                 1 where dw4_shared takes windows of any width
 *   DW_RUNS                             1 where the header has DW_REQUANT_RUN (a pixel's
 *                                       per-channel requantization) and DW3X3_PIXEL (a whole
 *                                       3 x 3 pixel of multiplier 1), one call each
 * and defines its own form of these functions where it has one, saying so with DW_HAS_<STEP>
 * (as fast_s8_steps.h's S8_HAS_): dw4_shared (DW4_SHARED), sums_quad and sums_bcast (SUMS),
 * clamp_out_as (CLAMP); fast_depthwise_s8.c's portable forms stand in for the others.
 * docs/architecture.md, "Where to add". */
#ifndef MA_FAST_DW_STEPS_H
#define MA_FAST_DW_STEPS_H

#include "fast/arch.h"
#include "fast/fast_dw_taps.h"

#if FAST_DSP
#include "fast/dsp/fast_dsp_dw.h"
#elif FAST_V7M
#include "fast/v7m/fast_v7m_dw.h"
#elif FAST_V6M
#include "fast/v6m/fast_v6m_dw.h"
#else
#include "fast/fast_dw_portable.h"
#endif

#endif
