/* The DSP extension's form of pooling.c's cells4 (four channels' sums or maxima over an int8
 * pool window): a maximum takes four channels per SSUB8 + SEL, an average sums two channels
 * per SXTAB16 in 16-bit lanes (exact for windows of at most 255 cells); and a MAX_POOL_2D
 * pixel whose four channels stay in one word to the store (mak_dsp_max_pixel). */
#ifndef MA_FAST_DSP_POOL_H
#define MA_FAST_DSP_POOL_H

#include "fast/fast_s8_core.h"
#include "pooling.h"

#if FAST_DSP
static inline uint32_t max4(uint32_t a, uint32_t b) { /* lane-wise signed maximum */
  uint32_t r;
  __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b));
  return r;
}

static inline uint32_t min4(uint32_t a, uint32_t b) { /* lane-wise signed minimum */
  uint32_t r;
  __asm__("ssub8 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(r) : "r"(a), "r"(b));
  return r;
}

/* One output pixel of an int8 MAX_POOL_2D: four channels' maxima per word, clamped to [lo, hi]
 * in the word too and written with one store (after the four channels' reads, as the reference
 * order wants); the last depth % 4 channels one at a time. */
static inline void mak_dsp_max_pixel(const mak_pool_cells *pc, int32_t depth, int32_t lo,
                                     int32_t hi, int8_t *out) {
  const uint32_t lo4 = (uint8_t)lo * 0x01010101u, hi4 = (uint8_t)hi * 0x01010101u;
  int32_t c = 0;
  for (; c + 4 <= depth; c += 4) {
    uint32_t m = 0x80808080u;
    const int8_t *row = pc->first + c;
    for (int32_t y = 0; y < pc->rows; ++y, row += pc->row_step)
      for (int32_t x = 0; x < pc->cols; ++x) m = max4(load4(row + (size_t)x * pc->col_step), m);
    m = min4(max4(m, lo4), hi4);
    memcpy(out + c, &m, 4); /* one unaligned STR */
  }
  for (; c < depth; ++c) {
    int32_t v = INT8_MIN;
    const int8_t *row = pc->first + c;
    for (int32_t y = 0; y < pc->rows; ++y, row += pc->row_step)
      for (int32_t x = 0; x < pc->cols; ++x) {
        const int32_t e = row[(size_t)x * pc->col_step];
        v = e > v ? e : v;
      }
    out[c] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
  }
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
static inline void mak_dsp_max_pixel(const mak_pool_cells *pc, int32_t depth, int32_t lo,
                                     int32_t hi, int8_t *out) {
  (void)pc, (void)depth, (void)lo, (void)hi, (void)out;
}

static inline bool mak_dsp_cells4(const mak_pool_cells *pc, int32_t c, bool is_max,
                                  int32_t r[4]) {
  (void)pc, (void)c, (void)is_max, (void)r;
  return false;
}
#endif

#endif
