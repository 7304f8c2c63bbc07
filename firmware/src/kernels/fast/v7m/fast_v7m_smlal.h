/* requant_right with its multiply-add as one SMLAL, Armv7-M's 32 x 32 + 64 -> 64 multiply
 * (GCC 12 makes three multiplies of the C form): for the M3 (fast_v7m_core.h) and the DSP
 * cores (fast/dsp/fast_dsp_core.h), which have it too. Its name is the DSP's, where it came
 * first. */
#ifndef MA_FAST_V7M_SMLAL_H
#define MA_FAST_V7M_SMLAL_H

static inline int32_t requant_right_dsp(int32_t acc, int32_t mult, int32_t e_minus_1,
                                        int32_t half) {
  const int32_t k = half + (acc >> 31);
  uint32_t lo = (uint32_t)k << 31 | UINT32_C(1) << 30;
  int32_t hi = k >> 1;
  __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(acc), "r"(mult));
  return hi >> e_minus_1;
}

#endif
