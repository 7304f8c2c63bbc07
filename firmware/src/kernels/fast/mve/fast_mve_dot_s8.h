/* The Helium forms of fast/fast_dot_s8.h's int8 dot products (it includes this in place of its
 * portable ones): 16 values per step, VMLADAVA for the products and VADDVA for the weights'
 * sum, the offset added once as offset x sum (fast_mve_core.h's with_offset: the same wrapping
 * int32 sum). */
#ifndef MA_FAST_MVE_DOT_S8_H
#define MA_FAST_MVE_DOT_S8_H

#include "fast/mve/fast_mve_core.h"

/* sum_k w[k] * (x[k] + x_off), wrapping as TFLM's int32 sums. */
static inline int32_t mak_dot_s8(const int8_t *w, const int8_t *x, int32_t n, int32_t x_off) {
  int32_t acc = 0, sum = 0;
  dot1(x, w, n, &acc, &sum);
  return with_offset(0, acc, sum, x_off);
}

/* mak_dot_s8 of two weight rows against the same x, each x vector loaded once. */
static inline void mve_dot2_s8(const int8_t *w0, const int8_t *w1, const int8_t *x, int32_t n,
                               int32_t x_off, int32_t *s0, int32_t *s1) {
  int32_t a0 = 0, a1 = 0, t0 = 0, t1 = 0;
  for (int32_t i = 0; i < n; i += 16) { /* zeroing loads: nothing read past the rows */
    const mve_pred16_t p = vctp8q((uint32_t)(n - i));
    const int8x16_t xv = vldrbq_z_s8(x + i, p);
    const int8x16_t v0 = vldrbq_z_s8(w0 + i, p), v1 = vldrbq_z_s8(w1 + i, p);
    a0 = vmladavaq_s8(a0, xv, v0);
    t0 = vaddvaq_s8(t0, v0);
    a1 = vmladavaq_s8(a1, xv, v1);
    t1 = vaddvaq_s8(t1, v1);
  }
  *s0 = with_offset(0, a0, t0, x_off);
  *s1 = with_offset(0, a1, t1, x_off);
}

/* mak_dot_s8 of four weight rows against the same x: two rows per pass (with four, GCC 12
 * spills the pointers and sums in the loop). */
static inline void mak_dot4_s8(const int8_t *const w[4], const int8_t *x, int32_t n,
                               int32_t x_off, int32_t s[4]) {
  mve_dot2_s8(w[0], w[1], x, n, x_off, &s[0], &s[1]);
  mve_dot2_s8(w[2], w[3], x, n, x_off, &s[2], &s[3]);
}

#endif
