/* An int8 dot product with an offset on one side, for the kernels outside the convolutions that
 * multiply int8 vectors (SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM, TRANSPOSE_CONV): on Helium 16
 * values per step (fast/mve/fast_mve_dot_s8.h), elsewhere four values per step with
 * fast_s8_core.h's loads and multiply-accumulates where those pay (SMLAD on the DSP; the host
 * runs their portable form), the plain loop on other cores and for the tail. The one choice of
 * these forms by architecture (the Helium header, DOT4_ROWS). */
#ifndef MA_FAST_DOT_S8_H
#define MA_FAST_DOT_S8_H

#include "fast/mve/fast_mve_core.h"
#include "fast/fast_s8.h" /* mak_dot4_rows */
#include "fast/fast_s8_core.h"

#if FAST_MVE
#include "fast/mve/fast_mve_dot_s8.h" /* mak_dot_s8, mak_dot4_s8 */
#else
/* mak_dot4_s8 hands evenly spaced rows (SVDF's feature rows, TRANSPOSE_CONV's channels) to the
 * convolutions' assembly loop mak_dot4_rows on the cores where it is one: four MULS or MLA
 * per input value, where the plain loop below spills its eight pointers and sums on Armv6-M. */
#define DOT4_ROWS (FAST_V6M || FAST_V7M)

/* sum_k w[k] * (x[k] + x_off), wrapping as TFLM's int32 sums (the order does not change them). */
static inline int32_t mak_dot_s8(const int8_t *w, const int8_t *x, int32_t n, int32_t x_off) {
  int32_t k = 0, acc = 0;
  if (FAST_WORDS && offsets_ok(x_off, 0)) {
    for (; k + 4 <= n; k += 4) acc = quad_dot(acc, quad_in(load4(x + k), x_off), load4(w + k));
  }
  for (; k < n; ++k) acc = wrap_mac(acc, w[k], x[k] + x_off);
  return acc;
}

/* mak_dot_s8 of four weight rows against the same x: s[r] = sum_k w_r[k] * (x[k] + x_off),
 * each group of four x values widened once for the four rows. */
static inline void mak_dot4_s8(const int8_t *const w[4], const int8_t *x, int32_t n,
                               int32_t x_off, int32_t s[4]) {
  int32_t k = 0, a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#if DOT4_ROWS
  const ptrdiff_t ws = w[1] - w[0];
  if (ws > 0 && w[2] - w[1] == ws && w[3] - w[2] == ws) {
    s[0] = s[1] = s[2] = s[3] = 0;
    mak_dot4_rows(x, w[0], (size_t)ws, n, x_off, s);
    return;
  }
#endif
  if (FAST_WORDS && offsets_ok(x_off, 0)) {
    for (; k + 4 <= n; k += 4) {
      const quad q = quad_in(load4(x + k), x_off);
      a0 = quad_dot(a0, q, load4(w[0] + k));
      a1 = quad_dot(a1, q, load4(w[1] + k));
      a2 = quad_dot(a2, q, load4(w[2] + k));
      a3 = quad_dot(a3, q, load4(w[3] + k));
    }
  }
  for (; k < n; ++k) {
    const int32_t v = x[k] + x_off;
    a0 = wrap_mac(a0, w[0][k], v);
    a1 = wrap_mac(a1, w[1][k], v);
    a2 = wrap_mac(a2, w[2][k], v);
    a3 = wrap_mac(a3, w[3][k], v);
  }
  s[0] = a0;
  s[1] = a1;
  s[2] = a2;
  s[3] = a3;
}

#endif

#endif
