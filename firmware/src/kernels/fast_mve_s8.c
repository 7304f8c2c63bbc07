/* Helium int8 paths (see fast_mve_s8.h), written with GCC's arm_mve.h intrinsics.
 *
 * Dot products (CONV_2D, FULLY_CONNECTED): VMLADAVA adds the 16 products of an int8 input
 * vector and an int8 weight vector to a scalar, and VADDVA the 16 weights to another, so a sum
 * with the input offset is acc + offset * sum(w) = sum(w * (x + offset)): the same wrapping
 * int32 sum as the reference loop, in another order. Four output channels share each input
 * load. Depthwise: sixteen channels per pass over the taps, in int16 lanes (see dw16).
 *
 * Requantization, four lanes at once, is the integer steps of fast_s8_core.h's requant:
 *   - left shift: VSHL by max(shift, 0), wrapping like requant's unsigned shift;
 *   - doubling high multiply: VQRDMULH gives sat((2ab + 2^31) >> 32) = (ab + 2^30) >> 31,
 *     requant's value; it saturates only for a = b = INT32_MIN, and the multiplier is never
 *     INT32_MIN (mak_quantize_multiplier gives 0 or [2^30, 2^31));
 *   - right shift by e = min(-shift, 31): TFLite's RoundingDivideByPOT rounds half away from
 *     zero, VRSHL half up. With v = q 2^e + r (0 <= r < 2^e), TFLite gives q + (r > 2^(e-1) - 1)
 *     for v >= 0 and q + (r > 2^(e-1)) for v < 0; VRSHL gives q + (r >= 2^(e-1)), the same for
 *     v >= 0, and on v - 1 for v < 0: q + (r - 1 >= 2^(e-1)) = q + (r > 2^(e-1)). So 1 is
 *     subtracted from negative v first (VQADD of (v AND -e) >> 31, which is -1 exactly when
 *     v < 0 and e > 0). For v = INT32_MIN VQADD saturates, r = 0 there, and VRSHL rounds
 *     INT32_MIN to q as TFLite does;
 *   - clamp to the activation range minus the offset, add the offset, store the low bytes. */
#include "fast_mve_s8.h"

#if MA_FAST_MVE /* elsewhere fast_mve_s8.h turns the entry points into `false` */
#include <arm_mve.h>

#include "fast_s8_core.h"

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

static inline int32x4_t requant4(int32x4_t acc, rq4 q, const out_range *r) {
  int32x4_t v = vqrdmulhq_s32(vshlq_s32(acc, q.left), q.mult);
  v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, q.right), 31));
  v = vrshlq_s32(v, q.right);
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

/* bias + acc + offset * sum, wrapping as the reference's int32 sum does. */
static inline int32_t with_offset(int32_t bias, int32_t acc, int32_t sum, int32_t off) {
  return (int32_t)((uint32_t)bias + (uint32_t)acc + (uint32_t)off * (uint32_t)sum);
}

/* ---------------------------------------------------------- weight matrices */

/* The rows of a weight matrix against the input of one output pixel (or batch): the input is
 * `nr` runs of contiguous values, each against the same span of every row. */
typedef struct {
  const int8_t *in;
  int32_t f, n; /* f: offset in each row */
} span;

typedef struct {
  const int8_t *w;
  const int32_t *bias, *mult;
  const int8_t *shift;
  size_t row; /* bytes per row */
  int32_t rows, per_channel, off;
  out_range r;
} matrix;

/* out[0..rows) = requantized (bias + rows . input) for the input given by the spans. */
static void rows_times_input(const matrix *m, const span *sp, int32_t nr, int8_t *out) {
  int32_t c = 0;
  for (; c < m->rows; c += 4) {
    const int32_t lanes = m->rows - c < 4 ? m->rows - c : 4;
    int32_t acc[4] = {0, 0, 0, 0};
    if (lanes == 4) {
      dots4 d = {0, 0, 0, 0, 0, 0, 0, 0};
      const int8_t *w = m->w + (size_t)c * m->row;
      for (int32_t i = 0; i < nr; ++i) d = dot4(d, sp[i].in, w + sp[i].f, m->row, sp[i].n);
      const int32_t *b = m->bias ? m->bias + c : acc;
      acc[0] = with_offset(b[0], d.a0, d.s0, m->off);
      acc[1] = with_offset(b[1], d.a1, d.s1, m->off);
      acc[2] = with_offset(b[2], d.a2, d.s2, m->off);
      acc[3] = with_offset(b[3], d.a3, d.s3, m->off);
    } else {
      for (int32_t k = 0; k < lanes; ++k) {
        const int8_t *w = m->w + (size_t)(c + k) * m->row;
        int32_t a = 0, s = 0;
        for (int32_t i = 0; i < nr; ++i) dot1(sp[i].in, w + sp[i].f, sp[i].n, &a, &s);
        acc[k] = with_offset(m->bias ? m->bias[c + k] : 0, a, s, m->off);
      }
    }
    const int32x4_t v = vldrwq_s32(acc);
    if (lanes == 4) {
      vstrbq_s32(out + c, requant4(v, rq_load(m->mult, m->shift, m->per_channel, c), &m->r));
    } else {
      const rq4 q = rq_load_tail(m->mult, m->shift, m->per_channel, c, lanes);
      vstrbq_p_s32(out + c, requant4(v, q, &m->r), vctp32q((uint32_t)lanes));
    }
  }
}

/* ------------------------------------------------------------------ CONV_2D */

enum { MAX_SPANS = 32 }; /* windows with more (tall or dilated filters): the other paths */

/* The window of one output pixel as spans: a filter row's taps inside the input (one tap
 * each with dilation). */
static int32_t window_spans(const int8_t *in, const mak_window_geom *g, const mak_window *w,
                            int32_t cin, span *sp) {
  const int32_t step = g->dil_w == 1 ? w->fx1 - w->fx0 : 1;
  int32_t n = 0;
  for (int32_t fy = w->fy0; fy < w->fy1; ++fy) {
    const size_t y = (size_t)w->b * g->in_h + w->iy0 + g->dil_h * fy;
    for (int32_t fx = w->fx0; fx < w->fx1; fx += step) {
      const size_t x = y * g->in_w + w->ix0 + g->dil_w * fx;
      sp[n++] = (span){in + x * cin, (fy * g->kw + fx) * cin, step * cin};
    }
  }
  return n;
}

bool mak_mve_conv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *f_t = node->inputs[1], *bias_t = mak_input(node, 2);
  const int32_t most = g->dil_w == 1 ? g->kh : g->kh * g->kw;
  if (!all_s8(node) || f_t->dims[3] != in_t->dims[3] || most > MAX_SPANS ||
      !offsets_ok(d->input_offset, d->output_offset))
    return false; /* grouped convolutions run the reference loop */
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3];
  const matrix m = {f_t->data,
                    bias_t ? bias_t->data : NULL,
                    d->mult,
                    mak_conv_shifts(d),
                    (size_t)g->kh * g->kw * cin,
                    cout,
                    d->n_mult > 1,
                    d->input_offset,
                    make_range(d->output_offset, d->act_min, d->act_max)};
  const int8_t *in = in_t->data;
  int8_t *out = node->outputs[0]->data;
  span sp[MAX_SPANS];
  mak_window w;
  mak_window_start(g, &w);
  while (mak_window_next(g, &w))
    rows_times_input(&m, sp, window_spans(in, g, &w, cin, sp), out + w.pixel * (size_t)cout);
  return true;
}

/* ---------------------------------------------------------- FULLY_CONNECTED */

bool mak_mve_fc_s8(const ma_node *node, int32_t input_offset, int32_t filter_offset,
                   int32_t output_offset, int32_t act_min, int32_t act_max, int32_t n_mult,
                   const int32_t *mult, const int8_t *shift) {
  const ma_tensor *in_t = node->inputs[0], *w_t = node->inputs[1], *bias_t = mak_input(node, 2);
  if (!all_s8(node) || filter_offset != 0 || !offsets_ok(input_offset, output_offset))
    return false;
  const int32_t units = w_t->dims[0], depth = w_t->dims[1];
  const int32_t batches = ma_num_elements(in_t) / depth;
  const matrix m = {w_t->data,     bias_t ? bias_t->data : NULL,
                    mult,          shift,
                    (size_t)depth, units,
                    n_mult > 1,    input_offset,
                    make_range(output_offset, act_min, act_max)};
  const int8_t *in = in_t->data;
  int8_t *out = node->outputs[0]->data;
  for (int32_t b = 0; b < batches; ++b) {
    const span sp = {in + (size_t)b * depth, 0, depth};
    rows_times_input(&m, &sp, 1, out + (size_t)b * units);
  }
  return true;
}

/* -------------------------------------------------------- DEPTHWISE_CONV_2D */

/* Sixteen (or, at the end of a block, `n` < 16) channels c.. of one output pixel, depth
 * multiplier 1: bias + sum over the taps of w * (x + off), requantized and stored. Inputs
 * plus offset and weights as int16 lanes, VMULLB/VMULLT their even and odd lanes' int32
 * products; VST2 puts the channels back in order. */
static void dw16(const int8_t *in, const int8_t *f, const mak_window_geom *g, const mak_window *w,
                 int32_t ch, int32_t c, int32_t n, const int32_t *bias, const mak_conv_data *d,
                 const out_range *r, int8_t *o) {
  const mve_pred16_t p0 = vctp16q((uint32_t)n), p1 = vctp16q((uint32_t)(n > 8 ? n - 8 : 0));
  const int16_t off = (int16_t)d->input_offset; /* offsets_ok: x + off fits an int16 */
  int32x4_t e0 = vdupq_n_s32(0), o0 = e0, e1 = e0, o1 = e0;
  const size_t in_row = (size_t)g->dil_h * g->in_w * ch, in_col = (size_t)g->dil_w * ch;
  const size_t row0 = (size_t)w->b * g->in_h + w->iy0 + g->dil_h * w->fy0;
  const int8_t *ip = in + (row0 * g->in_w + w->ix0 + g->dil_w * w->fx0) * ch + c;
  const int8_t *fp = f + ((size_t)w->fy0 * g->kw + w->fx0) * ch + c;
  for (int32_t y = w->fy0; y < w->fy1; ++y, ip += in_row, fp += (size_t)g->kw * ch) {
    const int8_t *i = ip, *k = fp;
    for (int32_t x = w->fx0; x < w->fx1; ++x, i += in_col, k += ch) {
      /* Zeroing loads: lanes past n read nothing and add (0 + off) * 0 = 0. */
      const int16x8_t x0 = vaddq_n_s16(vldrbq_z_s16(i, p0), off), w0 = vldrbq_z_s16(k, p0);
      const int16x8_t x1 = vaddq_n_s16(vldrbq_z_s16(i + 8, p1), off);
      const int16x8_t w1 = vldrbq_z_s16(k + 8, p1);
      e0 = vaddq_s32(e0, vmullbq_int_s16(x0, w0));
      o0 = vaddq_s32(o0, vmulltq_int_s16(x0, w0));
      e1 = vaddq_s32(e1, vmullbq_int_s16(x1, w1));
      o1 = vaddq_s32(o1, vmulltq_int_s16(x1, w1));
    }
  }
  int32_t acc[16];
  const int32x4x2_t lo = {{e0, o0}}, hi = {{e1, o1}};
  vst2q_s32(acc, lo);
  vst2q_s32(acc + 8, hi);
  const int32_t pc = d->n_mult > 1;
  const int8_t *shift = mak_conv_shifts(d);
  for (int32_t j = 0; j < n; j += 4) {
    const int32_t lanes = n - j < 4 ? n - j : 4;
    const mve_pred16_t p = vctp32q((uint32_t)lanes);
    int32x4_t v = vldrwq_s32(acc + j);
    if (bias) v = vaddq_s32(v, vldrwq_z_s32(bias + c + j, p));
    vstrbq_p_s32(o + c + j, requant4(v, rq_load_tail(d->mult, shift, pc, c + j, lanes), r), p);
  }
}

bool mak_mve_dwconv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *bias_t = mak_input(node, 2);
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3];
  if (!all_s8(node) || cout != cin || !offsets_ok(d->input_offset, d->output_offset))
    return false; /* depth multipliers > 1: the other paths */
  const int8_t *in = in_t->data, *f = node->inputs[1]->data;
  const int32_t *bias = bias_t ? bias_t->data : NULL;
  int8_t *out = node->outputs[0]->data;
  const out_range r = make_range(d->output_offset, d->act_min, d->act_max);
  mak_window w;
  mak_window_start(g, &w);
  while (mak_window_next(g, &w)) {
    int8_t *o = out + w.pixel * (size_t)cout;
    /* Sixteen channels are read, then written: within overlap.c's MAK_DW_BLOCK rule. */
    for (int32_t c = 0; c < cout; c += 16)
      dw16(in, f, g, &w, cout, c, cout - c < 16 ? cout - c : 16, bias, d, &r, o);
  }
  return true;
}

#else
typedef int mak_no_mve; /* ISO C: a translation unit declares something */
#endif
