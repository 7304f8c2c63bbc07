/* mak_clamp where the core has SSAT (Armv7-M and later, with GCC's __ssat: FAST_SAT): to the
 * int8 or int16 range, with bounds known at compile time, one instruction, which GCC does not
 * find by itself. MAK_CLAMP_SAT returns from mak_clamp (kernel_util.h) with it; other bounds
 * go on to mak_clamp's comparisons. Chosen by fast/fast_fixed_steps.h. */
#ifndef MA_FAST_V7M_FIXED_H
#define MA_FAST_V7M_FIXED_H

#include <arm_acle.h>

#define MAK_CLAMP_SAT(v, lo, hi)                                        \
  do {                                                                  \
    if (__builtin_constant_p(lo) && __builtin_constant_p(hi)) {         \
      if ((lo) == INT8_MIN && (hi) == INT8_MAX) return __ssat((v), 8);   \
      if ((lo) == INT16_MIN && (hi) == INT16_MAX) return __ssat((v), 16); \
    }                                                                   \
  } while (0)

#endif
