/* The one choice of svdf.c's int8 steps by architecture. Each header below defines its own
 * form of push_dot_s8 and PUSH_DOT_OK (a memory row pushed one step and multiplied with its time
 * weights) and of svdf_row_rank1_s8 where it has one, saying so with SVDF_HAS_PUSH_DOT and
 * SVDF_HAS_RANK1 (as fast_s8_steps.h's S8_HAS_); svdf.c's portable forms stand in for the
 * others. docs/architecture.md, "Where to add". */
#ifndef MA_FAST_SVDF_STEPS_H
#define MA_FAST_SVDF_STEPS_H

#include "fast/arch.h"

#if FAST_MVE
#include "fast/mve/fast_mve_svdf.h"
#elif FAST_V6M || FAST_V7M
#include "fast/v6m/fast_v6m_svdf.h"
#endif

/* Whether push_dot_s8 pays: with the DSP (word loads taken apart by SXTB16), Helium and the
 * byte form of the cores without DSP; the host runs the word form. */
#define SVDF_FUSED (FAST_WORDS || FAST_V6M || FAST_V7M)

#endif
