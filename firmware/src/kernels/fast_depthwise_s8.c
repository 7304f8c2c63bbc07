/* The fast int8 path of DEPTHWISE_CONV_2D (see fast_s8.h; the shared primitives and why they
 * are bit-exact: fast_s8_core.h, fast_s8.c). */
#include "fast_s8_core.h"
#include "fast_mve_s8.h"

/* The taps of one output pixel: `rows` x `cols` taps from input `in` (channel 0) and filter
 * `f`, input steps between rows and columns in bytes. */
typedef struct {
  const int8_t *in, *f;
  int32_t rows, cols;
  size_t in_row, in_col, f_row;
} taps;

static taps window_taps(const int8_t *in, const int8_t *f, const mak_window_geom *g,
                        const mak_window *w, int32_t cin, int32_t cout) {
  const size_t row = (size_t)w->b * g->in_h + w->iy0 + g->dil_h * w->fy0;
  const taps t = {in + (row * g->in_w + w->ix0 + g->dil_w * w->fx0) * cin,
                  f + ((size_t)w->fy0 * g->kw + w->fx0) * cout,
                  w->fy1 - w->fy0,
                  w->fx1 - w->fx0,
                  (size_t)g->dil_h * g->in_w * cin,
                  (size_t)g->dil_w * cin,
                  (size_t)g->kw * cout};
  return t;
}

/* a + sums over the taps of filter * (input + off), channels c..c+3, depth multiplier 1. */
#if FAST_DSP
__attribute__((noinline)) /* its own registers for the sums and steps */
#endif
static acc4 dw4(const taps *tp, int32_t c, int32_t ch, int32_t off, acc4 a) {
  const taps t = *tp;
  const int8_t *ip = t.in + c, *fp = t.f + c;
  for (int32_t y = 0; y < t.rows; ++y, ip += t.in_row, fp += t.f_row) {
    const int8_t *i = ip, *f = fp;
    for (int32_t x = 0; x < t.cols; ++x, i += t.in_col, f += ch)
      a = quad_mac(a, quad_in(load4(i), off), load4(f));
  }
  return a;
}

/* The same for depth multipliers that are multiples of 4: channels c..c+3 all read input
 * channel c / mult. */
#if FAST_DSP
__attribute__((noinline))
#endif
static acc4 dw4_shared(const taps *tp, int32_t c, int32_t mult, int32_t cout, int32_t off,
                       acc4 a) {
  const taps t = *tp;
  const int8_t *ip = t.in + c / mult, *fp = t.f + c;
  for (int32_t y = 0; y < t.rows; ++y, ip += t.in_row, fp += t.f_row) {
    const int8_t *i = ip, *f = fp;
    for (int32_t x = 0; x < t.cols; ++x, i += t.in_col, f += cout)
      a = bcast_mac(a, *i + off, load4(f));
  }
  return a;
}

/* The same for `lanes` (1 to 4) output channels c.. of depth multiplier mult (each reads input
 * channel (c + k) / mult). Lanes past `lanes` repeat the last one (no read past the tensors);
 * the caller keeps the first `lanes` sums. */
static acc4 dw_lanes(const taps *tp, int32_t c, int32_t lanes, int32_t mult, int32_t cout,
                     int32_t off, acc4 a) {
  const taps t = *tp;
  const int32_t k1 = lanes > 1 ? 1 : 0, k2 = lanes > 2 ? 2 : k1, k3 = lanes > 3 ? 3 : k2;
  const int32_t i0 = c / mult, i1 = (c + k1) / mult, i2 = (c + k2) / mult, i3 = (c + k3) / mult;
  const int8_t *ip = t.in, *fp = t.f + c;
  for (int32_t y = 0; y < t.rows; ++y, ip += t.in_row, fp += t.f_row) {
    const int8_t *i = ip, *f = fp;
    for (int32_t x = 0; x < t.cols; ++x, i += t.in_col, f += cout) {
      a.v0 = wrap_mac(a.v0, f[0], i[i0] + off);
      a.v1 = wrap_mac(a.v1, f[k1], i[i1] + off);
      a.v2 = wrap_mac(a.v2, f[k2], i[i2] + off);
      a.v3 = wrap_mac(a.v3, f[k3], i[i3] + off);
    }
  }
  return a;
}

/* The biases of channels c.. (lanes past `lanes` repeat the last), or zeros. */
static acc4 bias4(const int32_t *bias, int32_t c, int32_t lanes) {
  if (bias == NULL) return (acc4){0, 0, 0, 0};
  const int32_t *b = bias + c;
  return (acc4){b[0], b[lanes > 1 ? 1 : 0], b[lanes > 2 ? 2 : 0], b[lanes > 3 ? 3 : 0]};
}

bool mak_fast_dwconv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  if (mak_mve_dwconv_s8(node, d, g)) return true;
  const ma_tensor *in_t = node->inputs[0], *bias_t = mak_input(node, 2);
  if (!all_s8(node) || !offsets_ok(d->input_offset, d->output_offset)) return false;
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3], mult = cout / cin;
  const int8_t *in = in_t->data, *f = node->inputs[1]->data;
  const int32_t *bias = bias_t ? bias_t->data : NULL;
  int8_t *out = node->outputs[0]->data;
  const int8_t *shift = mak_conv_shifts(d);
  const out_range r = make_range(d->output_offset, d->act_min, d->act_max);
  const int32_t per_channel = d->n_mult > 1, off = d->input_offset;
  int32_t acc[MAK_DW_BLOCK];
  mak_window w;
  mak_window_start(g, &w);
  while (mak_window_next(g, &w)) {
    const taps t = window_taps(in, f, g, &w, cin, cout);
    int8_t *o = out + w.pixel * (size_t)cout;
    /* A block's channels are all read before any is written (overlap.c's rule). */
    for (int32_t c0 = 0; c0 < cout; c0 += MAK_DW_BLOCK) {
      const int32_t n = cout - c0 < MAK_DW_BLOCK ? cout - c0 : MAK_DW_BLOCK;
      for (int32_t k = 0; k < n; k += 4) {
        const int32_t lanes = n - k < 4 ? n - k : 4, c = c0 + k;
        acc4 a = bias4(bias, c, lanes);
        if (lanes == 4 && mult == 1)
          a = dw4(&t, c, cout, off, a);
        else if (lanes == 4 && mult % 4 == 0)
          a = dw4_shared(&t, c, mult, cout, off, a);
        else
          a = dw_lanes(&t, c, lanes, mult, cout, off, a);
        const int32_t v[4] = {a.v0, a.v1, a.v2, a.v3};
        for (int32_t j = 0; j < lanes; ++j) acc[k + j] = v[j];
      }
      for (int32_t k = 0; k < n; ++k) {
        const int32_t mi = per_channel ? c0 + k : 0;
        o[c0 + k] = requant(acc[k], d->mult[mi], shift[mi], &r);
      }
    }
  }
  return true;
}
