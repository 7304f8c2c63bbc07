/* mak_dhm_2a on the DSP extension: floor((a2 b + 2^31) / 2^32), SaturatingRoundingDoublingHighMul
 * of a2 / 2 and b (kernel_util.h says why), is one SMMULR, the rounding most significant word
 * multiply. Chosen by fast/fast_fixed_steps.h. */
#ifndef MA_FAST_DSP_FIXED_H
#define MA_FAST_DSP_FIXED_H

static inline int32_t mak_dhm_2a_smmulr(int32_t a2, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a2), "r"(b));
  return r;
}

#endif
