/* The one choice of kernel_util.h's fixed-point steps by architecture: MAK_DHM_2A (mak_dhm_2a,
 * the doubling high multiply of an even value) and MAK_CLAMP_SAT (mak_clamp's saturating
 * instruction, where the core has one). kernel_util.h defines the portable form
 * (mak_dhm_2a_c) before including this. */
#ifndef MA_FAST_FIXED_STEPS_H
#define MA_FAST_FIXED_STEPS_H

#include "fast/arch.h"

#if FAST_DSP && defined(__GNUC__)
#include "fast/dsp/fast_dsp_fixed.h"
#define MAK_DHM_2A mak_dhm_2a_smmulr
#else
#define MAK_DHM_2A mak_dhm_2a_c
#endif

#if FAST_SAT
#include "fast/v7m/fast_v7m_fixed.h"
#else
#define MAK_CLAMP_SAT(v, lo, hi) (void)0 /* comparisons only */
#endif

#endif
