/* SVDF's int8 steps on Helium (fast/fast_svdf_steps.h chooses this in place of svdf.c's own
 * push_dot_s8 and svdf_row_rank1_s8): a memory row pushed one step and multiplied with its
 * time weights, 16 steps per predicated vector, and the rank-1 row with four filters'
 * requantizations per vector. */
#ifndef MA_FAST_MVE_SVDF_H
#define MA_FAST_MVE_SVDF_H

#include "fast/mve/fast_mve_core.h"
#include "svdf.h"

#define SVDF_HAS_PUSH_DOT
#define SVDF_HAS_RANK1

/* push_row of an int8 row and the row's product with the time weights wt (state values plus
 * state_off), on Helium, for any row length: each vector of the row's steps 1.. is loaded,
 * stored one step down and multiplied (VMLADAVA, and VADDVA's weight sum for the offset, as
 * fast_mve_core.h's dot products); a store reaches only bytes its own load has read, and the
 * next load starts past them. The new value goes in last, its product added on its own. */
static inline int32_t push_dot_s8(uint8_t *row, const uint8_t *wt, int32_t n, uint32_t v,
                                  int32_t state_off) {
  int32_t acc = 0, sum = 0;
  for (int32_t i = 0; i < n - 1; i += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - 1 - i));
    const int8x16_t sv = vldrbq_z_s8((const int8_t *)row + 1 + i, p);
    const int8x16_t wv = vldrbq_z_s8((const int8_t *)wt + i, p);
    vstrbq_p_s8((int8_t *)row + i, sv, p);
    acc = vmladavaq_s8(acc, sv, wv);
    sum = vaddvaq_s8(sum, wv);
  }
  row[n - 1] = (uint8_t)v;
  const int32_t newest = ((const int8_t *)wt)[n - 1] * ((int8_t)(uint8_t)v + state_off);
  return with_offset(newest, acc, sum, state_off);
}
#define PUSH_DOT_OK(n, state_off) 1

/* push_dot_s8 of four consecutive rows of 8 steps (32 bytes: two vectors, two rows each), the
 * new values in v's lanes: each vector of the rows' steps 1.. is loaded (the second stops at
 * the fourth row's end), the new values set in its lanes 7 and 15 (each row's newest step) and
 * the vector stored one step down; each row's product is a predicated VMLADAV over its half.
 * The first load reads byte 16, the third row's first step, before the store that moves it. */
static inline int32x4_t push_dot4_m8(uint8_t *rows, const uint8_t *wt, int32x4_t v,
                                     int32_t state_off) {
  const mve_pred16_t lo = 0x00FF, hi = 0xFF00;
  int8x16_t a = vldrbq_s8((const int8_t *)rows + 1);
  int8x16_t b = vldrbq_z_s8((const int8_t *)rows + 17, vctp8q(15));
  a = vsetq_lane_s8((int8_t)vgetq_lane_s32(v, 0), a, 7);
  a = vsetq_lane_s8((int8_t)vgetq_lane_s32(v, 1), a, 15);
  b = vsetq_lane_s8((int8_t)vgetq_lane_s32(v, 2), b, 7);
  b = vsetq_lane_s8((int8_t)vgetq_lane_s32(v, 3), b, 15);
  vstrbq_s8((int8_t *)rows, a);
  vstrbq_s8((int8_t *)rows + 16, b);
  const int8x16_t wa = vldrbq_s8((const int8_t *)wt), wb = vldrbq_s8((const int8_t *)wt + 16);
  int32x4_t acc = vdupq_n_s32(vmladavq_p_s8(a, wa, lo));
  acc = vsetq_lane_s32(vmladavq_p_s8(a, wa, hi), acc, 1);
  acc = vsetq_lane_s32(vmladavq_p_s8(b, wb, lo), acc, 2);
  acc = vsetq_lane_s32(vmladavq_p_s8(b, wb, hi), acc, 3);
  if (state_off == 0) return acc;
  int32x4_t sum = vdupq_n_s32(vaddvq_p_s8(wa, lo));
  sum = vsetq_lane_s32(vaddvq_p_s8(wa, hi), sum, 1);
  sum = vsetq_lane_s32(vaddvq_p_s8(wb, lo), sum, 2);
  sum = vsetq_lane_s32(vaddvq_p_s8(wb, hi), sum, 3);
  return vmlaq_n_s32(acc, sum, state_off); /* with_offset's wrapping sum, per lane */
}

/* svdf.c's svdf_row_q for rank 1 and an int8 state, on Helium (rows of any length); each
 * filter is its unit. */
static void svdf_row_rank1_s8(const svdf_run *c, const int8_t *xb, uint8_t *state_b,
                              int8_t *out_b) {
  const int32_t n_mem = c->n_memory, state_off = -c->state_zp;
  /* Four filters' requantizations at a time in int32 lanes (fast_mve_core.h's mbqm4, equal to
   * requant_q), their memory rows one by one. */
  const rq4 qf = rq_make(vdupq_n_s32(c->q_feature_mult), vdupq_n_s32(c->q_feature_shift));
  const rq4 qo = rq_make(vdupq_n_s32(c->q_out_mult), vdupq_n_s32(c->q_out_shift));
  for (int32_t r = 0; r < c->n_filter; r += 4) {
    int32_t sums[4] = {0, 0, 0, 0}, acc[4] = {0, 0, 0, 0};
    const int32_t n = feature_sums(c, xb, r, sums);
    const mve_pred16_t p = vctp32q((uint32_t)n);
    int32x4_t v = vmaxq_s32(vminq_s32(mbqm4(vldrwq_s32(sums), qf), vdupq_n_s32(INT8_MAX)),
                            vdupq_n_s32(INT8_MIN));
    v = vaddq_n_s32(v, c->state_zp);
    int32x4_t a;
    if (n_mem == 8 && n == 4) {
      a = push_dot4_m8(state_b + (size_t)r * 8, c->wt + (size_t)r * 8, v, state_off);
    } else {
      int32_t vals[4];
      vst1q_s32(vals, v);
      for (int32_t k = 0; k < n; ++k) {
        const size_t f = (size_t)(r + k);
        acc[k] = push_dot_s8(state_b + f * n_mem, c->wt + f * n_mem, n_mem, (uint32_t)vals[k],
                             state_off);
      }
      a = vldrwq_s32(acc);
    }
    if (c->bias) a = vaddq_s32(a, vldrwq_z_s32(c->bias + r, p));
    int32x4_t y = vqaddq_s32(mbqm4(a, qo), vdupq_n_s32(c->output_zp));
    y = vmaxq_s32(vminq_s32(y, vdupq_n_s32(INT8_MAX)), vdupq_n_s32(INT8_MIN));
    vstrbq_p_s32(out_b + r, y, p);
  }
}

#endif
