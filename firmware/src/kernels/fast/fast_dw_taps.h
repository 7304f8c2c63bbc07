/* What fast_depthwise_s8.c's loops share with the architectures' depthwise steps
 * (fast/fast_dw_steps.h): the taps of one output pixel, and four channels' biases in and sums
 * out. */
#ifndef MA_FAST_DW_TAPS_H
#define MA_FAST_DW_TAPS_H

#include "fast/fast_s8_core.h"

/* The taps of one output pixel: `rows` x `cols` taps from input `in` (channel 0) and filter
 * `f`, input steps between rows and columns in bytes. */
typedef struct {
  const int8_t *in, *f;
  int32_t rows, cols;
  size_t in_row, in_col, f_row;
} taps;

/* One tap of four channels, multiplier 1, four inputs per load: a (an acc4) plus weights f[k]
 * times inputs i[k] plus off (DW_TAP4's form but on Armv6-M). A macro: an inline function
 * changed GCC 12's register allocation of the M3's dw_pixels. */
#define DW_TAP4_WORDS(a, i, f, off) ((a) = quad_mac((a), quad_in(load4(i), (off)), load4(f)))

/* The biases of channels k..k+3 of b, or zeros. */
static inline acc4 bias_quad(const int32_t *b, int32_t k) {
  return b ? (acc4){b[k], b[k + 1], b[k + 2], b[k + 3]} : (acc4){0, 0, 0, 0};
}

static inline void store_quad(int32_t *acc, acc4 a) {
  acc[0] = a.v0;
  acc[1] = a.v1;
  acc[2] = a.v2;
  acc[3] = a.v3;
}

#endif
