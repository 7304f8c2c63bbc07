/* The DSP extension's step of quantize.c's equal-scale requantization: four int8 values of a
 * word plus an offset each, saturated per byte by one QADD8. */
#ifndef MA_FAST_DSP_QUANTIZE_H
#define MA_FAST_DSP_QUANTIZE_H

#include "fast/fast_s8_core.h"

#if FAST_DSP
static inline uint32_t mak_dsp_qadd8(uint32_t w, int32_t off) { /* INT8_MIN <= off <= INT8_MAX */
  return (uint32_t)__qadd8((int8x4_t)w, (int8x4_t)((uint8_t)off * 0x01010101u));
}
#else
/* The same value byte by byte (quantize.c asks it only where FAST_DSP is 1). */
static inline uint32_t mak_dsp_qadd8(uint32_t w, int32_t off) {
  uint32_t r = 0;
  for (int k = 0; k < 32; k += 8)
    r |= (uint32_t)(uint8_t)mak_clamp((int8_t)(uint8_t)(w >> k) + off, INT8_MIN, INT8_MAX) << k;
  return r;
}
#endif

#endif
