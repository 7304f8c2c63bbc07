/* The DSP extension's form of pooling.c's cells4 (four channels' sums or maxima over an int8
 * pool window): a maximum takes four channels per SSUB8 + SEL, an average sums two channels
 * per SXTAB16 in 16-bit lanes (exact for windows of at most 255 cells). */
#ifndef MA_FAST_DSP_POOL_H
#define MA_FAST_DSP_POOL_H

#include "fast/fast_s8_core.h"
#include "fast/mve/fast_pool.h"

#if FAST_DSP
static inline uint32_t max4(uint32_t a, uint32_t b) { /* lane-wise signed maximum */
  uint32_t r;
  __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b));
  return r;
}

/* r[0..4) for channels c..c+3; false, having done nothing, for an average over more than 255
 * cells. */
static inline bool mak_dsp_cells4(const mak_pool_cells *pc, int32_t c, bool is_max,
                                  int32_t r[4]) {
  const int8_t *row = pc->first + c;
  if (is_max) {
    uint32_t m = 0x80808080u;
    for (int32_t y = 0; y < pc->rows; ++y, row += pc->row_step)
      for (int32_t x = 0; x < pc->cols; ++x) m = max4(load4(row + (size_t)x * pc->col_step), m);
    for (int k = 0; k < 4; ++k) r[k] = (int8_t)(uint8_t)(m >> (8 * k));
    return true;
  }
  if (pc->rows * pc->cols <= 255) {
    int16x2_t even = 0, odd = 0;
    for (int32_t y = 0; y < pc->rows; ++y, row += pc->row_step) {
      for (int32_t x = 0; x < pc->cols; ++x) {
        const uint32_t v = load4(row + (size_t)x * pc->col_step);
        even = __sxtab16(even, (int8x4_t)v);
        odd = sxtab16_ror8(odd, v);
      }
    }
    r[0] = (int16_t)(uint16_t)((uint32_t)even & 0xFFFFu);
    r[1] = (int16_t)(uint16_t)((uint32_t)odd & 0xFFFFu);
    r[2] = (int16_t)(uint16_t)((uint32_t)even >> 16);
    r[3] = (int16_t)(uint16_t)((uint32_t)odd >> 16);
    return true;
  }
  return false;
}
#else
static inline bool mak_dsp_cells4(const mak_pool_cells *pc, int32_t c, bool is_max,
                                  int32_t r[4]) {
  (void)pc, (void)c, (void)is_max, (void)r;
  return false;
}
#endif

#endif
