/* TRANSPOSE_CONV's int8 block steps on Helium (transpose_conv.c includes this in place of its
 * portable ones): four output channels' dot products per pass over an input pixel
 * (fast_mve_core.h's dot4), and the block's bias and requantization four lanes at a time
 * (requant4: the same integer steps as mak_requantize). */
#ifndef MA_FAST_MVE_TRANSPOSE_CONV_H
#define MA_FAST_MVE_TRANSPOSE_CONV_H

#include "fast/mve/fast_mve_core.h"
#include "kernel_util.h"

/* acc[k] += sum_i w_k[i] * (x[i] + off) for rows w_k = w + k * ws, k < 4, wrapping. */
static inline void add_dot4(int32_t acc[4], const int8_t *x, const int8_t *w, size_t ws,
                            int32_t n, int32_t off) {
  const dots4 zero = {0, 0, 0, 0, 0, 0, 0, 0};
  const dots4 d = dot4(zero, x, w, ws, n);
  acc[0] = with_offset(acc[0], d.a0, d.s0, off);
  acc[1] = with_offset(acc[1], d.a1, d.s1, off);
  acc[2] = with_offset(acc[2], d.a2, d.s2, off);
  acc[3] = with_offset(acc[3], d.a3, d.s3, off);
}

/* Requantizes the n sums of channels oc.. into dst. */
static void requant_block(const mak_conv_data *d, int32_t oc, int32_t n, const int32_t *acc,
                          int8_t *dst) {
  const int32_t per_channel = d->n_mult > 1;
  const int8_t *shifts = mak_conv_shifts(d);
  const out_range r = make_range(d->output_offset, d->act_min, d->act_max);
  for (int32_t k = 0; k < n; k += 4) {
    const int32_t left = n - k;
    const rq4 q = left >= 4 ? rq_load(d->mult, shifts, per_channel, oc + k)
                            : rq_load_tail(d->mult, shifts, per_channel, oc + k, left);
    const mve_pred16_t p = vctp32q((uint32_t)left);
    vstrbq_p_s32(dst + k, requant4(vldrwq_z_s32(acc + k, p), q, &r), p);
  }
}

/* acc[0..n) = the n biases, or 0 (bias NULL), four lanes per store (acc's length is a
 * multiple of 4). */
static inline void init_block(int32_t *acc, const int32_t *bias, int32_t n) {
  for (int32_t k = 0; k < n; k += 4)
    vstrwq_s32(acc + k, bias != NULL ? vldrwq_z_s32(bias + k, vctp32q((uint32_t)(n - k)))
                                     : vdupq_n_s32(0));
}

#endif
