/* UNIDIRECTIONAL_SEQUENCE_LSTM's int8 steps on Helium, which lstm.c takes first where
 * FAST_MVE is 1: the gates' requantizations for four lanes, built once per invocation, and a
 * step with symmetric weights, every gate's sums for MAK_ROW_CHUNK units by mak_mve_row_dots,
 * then the cells four units at a time in int32 lanes. */
#ifndef MA_FAST_MVE_LSTM_H
#define MA_FAST_MVE_LSTM_H

#include "lstm.h"

#if FAST_MVE
static rq4 rq_of(int32_t mult, int8_t shift) {
  return rq_make(vdupq_n_s32(mult), vdupq_n_s32(shift));
}

/* gr's requantizations for four lanes (the rq4 fields), from d. */
static inline void mak_mve_lstm_lanes(gate_rows *gr, const lstm_data *d) {
  for (int32_t g = 0; g < 4; ++g) {
    gr->in_v[g] = rq_of(d->in_mult[g], d->in_shift[g]);
    gr->rec_v[g] = rq_of(d->rec_mult[g], d->rec_shift[g]);
  }
  gr->fc_v = rq_of(d->fc_mult, d->fc_shift);
  gr->ig_v = rq_of(d->ig_mult, d->ig_shift);
  gr->out_v = rq_of(d->out_mult, d->out_shift);
}

/* The element-wise steps of unit_q on four units at once (int32 lanes), for Helium: the same
 * integer steps lane by lane. Requantization is fast_mve_core.h's mbqm4 (equal to
 * MultiplyByQuantizedMultiplier, see fast_mve_s8.c); the table lookups gather both
 * neighbours (the index clamped to 254, the saturated lanes selected afterwards). */
static inline int32x4_t sat16_4(int32x4_t v) {
  return vmaxq_s32(vminq_s32(v, vdupq_n_s32(INT16_MAX)), vdupq_n_s32(INT16_MIN));
}

/* The low 16 bits of each lane, sign-extended: the scalar code's (int16_t) cast. */
static inline int32x4_t low16(int32x4_t v) {
  return vmovlbq_s16(vreinterpretq_s16_s32(v));
}

/* The interpolation sigmoid_q15 and tanh_q15 share, in k-bit steps of a = |v|: entry i = a >> k
 * of mak_sigmoid_table times 2^k plus the remainder times the step to entry i + 1, the index
 * clamped to 254 (*sat: the lanes where i >= 255, which the callers replace). The callers
 * shift by an immediate. */
static inline uint32x4_t interp4(uint32x4_t a, uint32x4_t i, uint32_t k, mve_pred16_t *sat) {
  *sat = vcmphiq_n_u32(i, 254);
  const uint32x4_t at = vminq_u32(i, vdupq_n_u32(254));
  const uint32x4_t ua = vldrhq_gather_shifted_offset_u32(mak_sigmoid_table, at);
  const uint32x4_t ub = vldrhq_gather_shifted_offset_u32(mak_sigmoid_table + 1, at);
  const uint32x4_t frac = vandq_u32(a, vdupq_n_u32((1u << k) - 1));
  return vmlaq_n_u32(vmulq_u32(frac, vsubq_u32(ub, ua)), ua, 1u << k);
}

/* sigmoid_q15 of v (already multiplied) in each lane. */
static inline int32x4_t sigmoid4(int32x4_t v) {
  mve_pred16_t sat;
  const uint32x4_t a = vreinterpretq_u32_s32(vabsq_s32(v));
  uint32x4_t r = interp4(a, vshrq_n_u32(a, 9), 9, &sat);
  r = vpselq_u32(vdupq_n_u32(0x7FFFu << 10), r, sat);
  const uint32x4_t neg = vsubq_u32(vdupq_n_u32((1u << 25) + (1u << 9) - 1), r);
  r = vpselq_u32(vaddq_n_u32(r, 1u << 9), neg, vcmpgeq_n_s32(v, 0));
  return low16(vreinterpretq_s32_u32(vshrq_n_u32(r, 10)));
}

/* tanh_q15 of v (already multiplied) in each lane. */
static inline int32x4_t tanh4(int32x4_t v) {
  mve_pred16_t sat;
  const uint32x4_t a = vreinterpretq_u32_s32(vabsq_s32(v));
  const uint32x4_t ru = interp4(a, vshrq_n_u32(a, 8), 8, &sat);
  int32x4_t r = vpselq_s32(vdupq_n_s32(0xFFFF << 8), vreinterpretq_s32_u32(ru), sat);
  const int32x4_t pos = vaddq_n_s32(r, -(1 << 23) + (1 << 7));
  const int32x4_t neg = vsubq_s32(vdupq_n_s32((1 << 23) + (1 << 7) - 1), r);
  r = vpselq_s32(pos, neg, vcmpgeq_n_s32(v, 0));
  return low16(vshrq_n_s32(r, 8));
}

/* One gate's sums for units j..j+k-1 (k <= MAK_ROW_CHUNK) from rows of n values against v:
 * (bias +) dot + off x sum of each row, wrapping as the scalar sums (mak_mve_row_dots: two rows
 * per pass, each v vector loaded once for both). */
static void gate_sums(const int8_t *rows, const int8_t *v, int32_t n, int32_t off,
                      const int32_t *bias, int32_t k, int32_t *out) {
  int32_t dots[2 * MAK_ROW_CHUNK];
  mak_mve_row_dots(rows, v, n, k, dots);
  for (int32_t i = 0; i < k; i += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)(k - i));
    const int32x4_t b = bias ? vldrwq_z_s32(bias + i, p) : vdupq_n_s32(0);
    vstrwq_s32(out + i, vmlaq_n_s32(vaddq_s32(b, vldrwq_s32(dots + i)),
                                    vldrwq_s32(dots + MAK_ROW_CHUNK + i), off));
  }
}

/* Units j..j+n-1 (n from 1 to 4) of one step from their gate sums (acc[g * MAK_ROW_CHUNK],
 * racc likewise: input and recurrent sums of gate g, four lanes; lanes past n unused): unit_q's
 * element-wise steps on the four lanes; the cell state and the output written for the n units
 * only. */
static void units_q4(const lstm_data *d, const gate_rows *gr, const int32_t *acc,
                     const int32_t *racc, int16_t *c, int32_t j, int32_t n, int8_t *out) {
  int32x4_t pre[4];
  for (int32_t g = 0; g < 4; ++g) {
    const int32x4_t a = vldrwq_s32(acc + g * MAK_ROW_CHUNK);
    const int32x4_t ra = vldrwq_s32(racc + g * MAK_ROW_CHUNK);
    const int32x4_t in_part = sat16_4(mbqm4(a, gr->in_v[g]));
    const int32x4_t rec_part = sat16_4(mbqm4(ra, gr->rec_v[g]));
    pre[g] = vmulq_n_s32(sat16_4(vaddq_s32(in_part, rec_part)), 3);
  }
  const int32x4_t ig = sigmoid4(pre[GATE_I]), fg = sigmoid4(pre[GATE_F]);
  const int32x4_t gg = d->act == ACT_SIGMOID ? sigmoid4(pre[GATE_G]) : tanh4(pre[GATE_G]);
  const int32x4_t og = sigmoid4(pre[GATE_O]);
  const mve_pred16_t p = vctp32q((uint32_t)n);
  const int32x4_t c0 = vldrhq_z_s32(c + j, p);
  const int32x4_t kept = sat16_4(mbqm4(vmulq_s32(fg, c0), gr->fc_v));
  const int32x4_t added = sat16_4(mbqm4(vmulq_s32(ig, gg), gr->ig_v));
  int32x4_t cj = sat16_4(vaddq_s32(kept, added));
  if (d->cell_clip > 0.0f)
    cj = vmaxq_s32(vminq_s32(cj, vdupq_n_s32(d->qclip)), vdupq_n_s32(-d->qclip));
  vstrhq_p_s32(c + j, cj, p);
  const int32_t s = -d->tanh_shift;
  const int32x4_t t =
      s > 0 ? tanh4(vshlq_s32(vaddq_n_s32(vmulq_n_s32(cj, 3), 1 << (s - 1)), vdupq_n_s32(-s)))
            : tanh4(vmulq_n_s32(cj, 3 << d->tanh_shift));
  int32x4_t v = vqaddq_s32(mbqm4(vmulq_s32(t, og), gr->out_v), vdupq_n_s32(d->h_zp));
  v = vmaxq_s32(vminq_s32(v, vdupq_n_s32(INT8_MAX)), vdupq_n_s32(INT8_MIN));
  vstrbq_p_s32(out + j, v, p);
}

/* Every unit of one step with symmetric weights (gr->symmetric), int8: out[j] for the n_cell
 * units, MAK_ROW_CHUNK units at a time (every gate's sums, then the cells). */
static inline void mak_mve_lstm_step_q(const lstm_data *d, const gate_rows *gr, const int8_t *x,
                                       const int8_t *h, int16_t *c, int8_t *out) {
  for (int32_t j0 = 0; j0 < gr->n_cell; j0 += MAK_ROW_CHUNK) {
    const int32_t k = gr->n_cell - j0 < MAK_ROW_CHUNK ? gr->n_cell - j0 : MAK_ROW_CHUNK;
    int32_t acc[4 * MAK_ROW_CHUNK], racc[4 * MAK_ROW_CHUNK]; /* [gate][unit] */
    for (int32_t g = 0; g < 4; ++g) {
      gate_sums(gr->w[g] + (size_t)j0 * gr->n_in, x, gr->n_in, d->x_off, gr->bias[g] + j0, k,
                acc + g * MAK_ROW_CHUNK);
      gate_sums(gr->r[g] + (size_t)j0 * gr->n_cell, h, gr->n_cell, d->h_off, NULL, k,
                racc + g * MAK_ROW_CHUNK);
    }
    for (int32_t i = 0; i < k; i += 4)
      units_q4(d, gr, acc + i, racc + i, c, j0 + i, k - i < 4 ? k - i : 4, out);
  }
}
#else
/* Not called where FAST_MVE is 0 (lstm.c asks it first). */
static inline void mak_mve_lstm_lanes(gate_rows *gr, const lstm_data *d) { (void)gr, (void)d; }
static inline void mak_mve_lstm_step_q(const lstm_data *d, const gate_rows *gr, const int8_t *x,
                                       const int8_t *h, int16_t *c, int8_t *out) {
  (void)d, (void)gr, (void)x, (void)h, (void)c, (void)out;
}
#endif

#endif
