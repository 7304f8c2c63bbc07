/* The Helium primitives shared by the kernels that use MVE (fast_mve_s8.c: CONV_2D,
 * DEPTHWISE_CONV_2D, FULLY_CONNECTED; fast_dot_s8.h: SVDF, LSTM): requantization of four lanes
 * and dot products with their weight sums. Why they are bit-exact: fast_mve_s8.c's header
 * comment. Only for cores with MVE (FAST_MVE); not part of the kernel interface. */
#ifndef MA_FAST_MVE_CORE_H
#define MA_FAST_MVE_CORE_H

#include "fast/arch.h"

#if FAST_MVE
#include <arm_mve.h>

#include "fast/fast_s8_core.h"

/* ------------------------------------------------------------ requantization */

typedef struct {
  int32x4_t mult, left, right; /* right: -e, in [-31, 0] */
} rq4;

static inline rq4 rq_make(int32x4_t mult, int32x4_t shift) {
  const rq4 q = {mult, vmaxq_s32(shift, vdupq_n_s32(0)),
                 vmaxq_s32(vminq_s32(shift, vdupq_n_s32(0)), vdupq_n_s32(-31))};
  return q;
}

/* The multipliers of channels c..c+3 (per channel), or the one of the tensor. */
static inline rq4 rq_load(const int32_t *mult, const int8_t *shift, int32_t per_channel,
                          int32_t c) {
  if (!per_channel) return rq_make(vdupq_n_s32(mult[0]), vdupq_n_s32(shift[0]));
  return rq_make(vldrwq_s32(mult + c), vldrbq_s32(shift + c));
}

/* The same for the n < 4 channels c.. (lanes past n zero: nothing read past the arrays). */
static inline rq4 rq_load_tail(const int32_t *mult, const int8_t *shift, int32_t per_channel,
                               int32_t c, int32_t n) {
  if (!per_channel) return rq_load(mult, shift, 0, c);
  const mve_pred16_t p = vctp32q((uint32_t)n);
  return rq_make(vldrwq_z_s32(mult + c, p), vldrbq_z_s32(shift + c, p));
}

/* TFLite's MultiplyByQuantizedMultiplier of four lanes, unclamped. */
static inline int32x4_t mbqm4(int32x4_t acc, rq4 q) {
  int32x4_t v = vqrdmulhq_s32(vshlq_s32(acc, q.left), q.mult);
  v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, q.right), 31));
  return vrshlq_s32(v, q.right);
}

static inline int32x4_t requant4(int32x4_t acc, rq4 q, const out_range *r) {
  int32x4_t v = mbqm4(acc, q);
  v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(r->lo)), vdupq_n_s32(r->hi));
  return vaddq_n_s32(v, r->offset);
}

/* ------------------------------------------------------------- dot products */

/* Four weight rows (w, w + ws, ...) against one input row of n values: the dot products and
 * the sums of the weights added to a and s. */
typedef struct {
  int32_t a0, a1, a2, a3, s0, s1, s2, s3;
} dots4;

static inline dots4 add4(dots4 d, int8x16_t x, int8x16_t v0, int8x16_t v1, int8x16_t v2,
                         int8x16_t v3) {
  d.a0 = vmladavaq_s8(d.a0, x, v0);
  d.s0 = vaddvaq_s8(d.s0, v0);
  d.a1 = vmladavaq_s8(d.a1, x, v1);
  d.s1 = vaddvaq_s8(d.s1, v1);
  d.a2 = vmladavaq_s8(d.a2, x, v2);
  d.s2 = vaddvaq_s8(d.s2, v2);
  d.a3 = vmladavaq_s8(d.a3, x, v3);
  d.s3 = vaddvaq_s8(d.s3, v3);
  return d;
}

static inline dots4 dot4(dots4 d, const int8_t *x, const int8_t *w, size_t ws, int32_t n) {
  const int8_t *w1 = w + ws, *w2 = w1 + ws, *w3 = w2 + ws;
  int32_t i = 0;
  for (; i + 16 <= n; i += 16)
    d = add4(d, vldrbq_s8(x + i), vldrbq_s8(w + i), vldrbq_s8(w1 + i), vldrbq_s8(w2 + i),
             vldrbq_s8(w3 + i));
  if (i < n) { /* zeroing loads: nothing read past the rows */
    const mve_pred16_t p = vctp8q((uint32_t)(n - i));
    d = add4(d, vldrbq_z_s8(x + i, p), vldrbq_z_s8(w + i, p), vldrbq_z_s8(w1 + i, p),
             vldrbq_z_s8(w2 + i, p), vldrbq_z_s8(w3 + i, p));
  }
  return d;
}

/* One weight row: its dot product with x and its sum, added to *a and *s. */
static inline void dot1(const int8_t *x, const int8_t *w, int32_t n, int32_t *a, int32_t *s) {
  int32_t acc = *a, sum = *s;
  for (int32_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - i));
    const int8x16_t xv = vldrbq_z_s8(x + i, p), wv = vldrbq_z_s8(w + i, p);
    acc = vmladavaq_s8(acc, xv, wv);
    sum = vaddvaq_s8(sum, wv);
  }
  *a = acc;
  *s = sum;
}

/* The dot products of k <= MAK_ROW_CHUNK consecutive weight rows (from w, n values each) with
 * x into dots[0..k), the rows' sums into dots[MAK_ROW_CHUNK..MAK_ROW_CHUNK + k) (fast_mve_s8.c:
 * two rows per pass, each x vector loaded once for both). */
enum { MAK_ROW_CHUNK = 16 };
void mak_mve_row_dots(const int8_t *w, const int8_t *x, int32_t n, int32_t k, int32_t *dots);

/* bias + acc + offset * sum, wrapping as the reference's int32 sum does. */
static inline int32_t with_offset(int32_t bias, int32_t acc, int32_t sum, int32_t off) {
  return (int32_t)((uint32_t)bias + (uint32_t)acc + (uint32_t)off * (uint32_t)sum);
}

#endif
#endif
