/* The fast int8 path of DEPTHWISE_CONV_2D (see fast_s8.h; the shared primitives and why they
 * are bit-exact: fast_s8_core.h, fast_s8.c): the loops every core builds and the portable forms
 * of their steps; each architecture's forms come from fast/fast_dw_steps.h. */
#include "fast/fast_dw_steps.h"
#include "fast/fast_s8.h"
#include "fast/fast_s8_core.h"
#include "overlap.h"

/* The taps of output row (b, oy), columns left to the pixel: rows, steps, and the input and
 * filter at tap row fy0, column 0. */
static taps row_taps(const int8_t *in, const int8_t *f, const mak_window_geom *g, int32_t b,
                     int32_t oy, int32_t cin, int32_t cout) {
  const int32_t iy0 = oy * g->stride_h - g->pad_h;
  int32_t fy0, fy1;
  mak_tap_range(iy0, g->dil_h, g->kh, g->in_h, &fy0, &fy1);
  const size_t row = (size_t)b * g->in_h + iy0 + g->dil_h * fy0;
  const taps t = {in + row * g->in_w * cin,
                  f + (size_t)fy0 * g->kw * cout,
                  fy1 - fy0,
                  0,
                  (size_t)g->dil_h * g->in_w * cin,
                  (size_t)g->dil_w * cin,
                  (size_t)g->kw * cout};
  return t;
}

/* Row r's taps at output column ox: the columns of the filter inside the input (all of them
 * for the pixels away from the edges, found without mak_tap_range's divisions). */
static inline taps pixel_taps(const taps *r, const mak_window_geom *g, int32_t ox, int32_t cin,
                              int32_t cout) {
  const int32_t ix0 = ox * g->stride_w - g->pad_w;
  int32_t fx0 = 0, fx1 = g->kw;
  if (ix0 < 0 || ix0 + g->dil_w * (g->kw - 1) >= g->in_w)
    mak_tap_range(ix0, g->dil_w, g->kw, g->in_w, &fx0, &fx1);
  taps t = *r;
  t.in += (ix0 + g->dil_w * fx0) * (ptrdiff_t)cin;
  t.f += (size_t)fx0 * cout;
  t.cols = fx1 - fx0;
  return t;
}

/* a + sums over the taps of filter * (input + off), channels c..c+3, depth multiplier 1. */
DW_TAPS_NOINLINE static acc4 dw4(const taps *tp, int32_t c, int32_t ch, int32_t off, acc4 a) {
  const taps t = *tp;
  const int8_t *ip = t.in + c, *fp = t.f + c;
  for (int32_t y = 0; y < t.rows; ++y, ip += t.in_row, fp += t.f_row) {
    const int8_t *i = ip, *f = fp;
    for (int32_t x = 0; x < t.cols; ++x, i += t.in_col, f += ch) DW_TAP4(a, i, f, off);
  }
  return a;
}

/* The same for depth multipliers that are multiples of 4: channels c..c+3 all read input
 * channel c / mult. */
#ifndef DW_HAS_DW4_SHARED
DW_TAPS_NOINLINE static acc4 dw4_shared(const taps *tp, int32_t c, int32_t mult, int32_t cout,
                                        int32_t off, acc4 a) {
  const taps t = *tp;
  const int8_t *ip = t.in + c / mult, *fp = t.f + c;
  for (int32_t y = 0; y < t.rows; ++y, ip += t.in_row, fp += t.f_row) {
    const int8_t *i = ip, *f = fp;
    for (int32_t x = 0; x < t.cols; ++x, i += t.in_col, f += cout) {
      a = bcast_mac(a, *i + off, load4(f));
    }
  }
  return a;
}
#endif

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

/* acc[0..n-1] = b[0..n-1] (or zeros) plus the sums of channels c0.. (n a multiple of 4) of a
 * window one to three taps wide: for multiplier 1 without dilation (input and filter both step
 * ch bytes per tap) four inputs per load, for multipliers that are multiples of 4 (channels
 * c..c+3 all read input channel c / mult) one input for four weights. Here through dw4 and
 * dw4_shared; an architecture may unroll each row's taps in assembly (DW_HAS_SUMS). */
#ifndef DW_HAS_SUMS
/* Multiplier 1 without dilation (ch: the channels, each tap's step in input and filter). */
static void sums_quad(const taps *t, const int32_t *b, int32_t c0, int32_t n, int32_t ch,
                      int32_t off, int32_t *acc) {
  for (int32_t k = 0; k < n; k += 4) store_quad(acc + k, dw4(t, c0 + k, ch, off, bias_quad(b, k)));
}

/* Multipliers that are multiples of 4. */
static void sums_bcast(const taps *t, const int32_t *b, int32_t c0, int32_t n, int32_t mult,
                       int32_t cout, int32_t off, int32_t *acc) {
  for (int32_t k = 0; k < n; k += 4)
    store_quad(acc + k, dw4_shared(t, c0 + k, mult, cout, off, bias_quad(b, k)));
}
#endif

static inline void sums_rows(const taps *t, const int32_t *b, int32_t c0, int32_t n,
                             int32_t mult, int32_t cout, int32_t off, int32_t *acc) {
  if (mult == 1)
    sums_quad(t, b, c0, n, cout, off, acc);
  else
    sums_bcast(t, b, c0, n, mult, cout, off, acc);
}

/* sums_rows for windows more than three taps wide: three columns at a time, each part adding
 * to the sums so far. Not inlined: the common narrow windows keep their caller's registers. */
DW_SUMS_NOINLINE static void sums_wide(const taps *t, const int32_t *b, int32_t c0, int32_t n,
                                       int32_t mult, int32_t cout, int32_t off, int32_t *acc) {
  taps part = *t;
  for (int32_t j = 0; j < t->cols; j += 3, b = acc) {
    part.in = t->in + j * t->in_col;
    part.f = t->f + (size_t)j * cout;
    part.cols = t->cols - j < 3 ? t->cols - j : 3;
    sums_rows(&part, b, c0, n, mult, cout, off, acc);
  }
}

/* The sums of output channels c0..c0+n-1 of one pixel into acc[0..n-1], from their biases. */
static void block_sums(const taps *t, const int32_t *bias, int32_t c0, int32_t n, int32_t mult,
                       int32_t cout, int32_t off, int32_t *acc) {
  int32_t k = 0;
  if (t->rows > 0 && t->cols > 0 &&
      ((mult == 1 && t->in_col == (size_t)cout) || mult % 4 == 0)) {
    k = n & ~3;
    const int32_t *start = bias ? bias + c0 : NULL;
    if (t->cols <= 3 || (DW_SHARED_ANY_WIDTH && mult != 1))
      sums_rows(t, start, c0, k, mult, cout, off, acc);
    else
      sums_wide(t, start, c0, k, mult, cout, off, acc);
  }
  for (; k < n; k += 4) {
    const int32_t lanes = n - k < 4 ? n - k : 4, c = c0 + k;
    acc4 a = bias4(bias, c, lanes);
    if (lanes == 4 && mult == 1)
      a = dw4(t, c, cout, off, a);
    else if (lanes == 4 && mult % 4 == 0)
      a = dw4_shared(t, c, mult, cout, off, a);
    else
      a = dw_lanes(t, c, lanes, mult, cout, off, a);
    acc[k] = a.v0;
    if (lanes > 1) acc[k + 1] = a.v1;
    if (lanes > 2) acc[k + 2] = a.v2;
    if (lanes > 3) acc[k + 3] = a.v3;
  }
}

/* clamp_out; full (the activation range is all of int8: ReLU and ReLU6 outputs of zero point
 * -128 too) lets an architecture take a shorter form (DW_HAS_CLAMP). */
#ifndef DW_HAS_CLAMP
static inline int8_t clamp_out_as(int32_t y, const out_range *r, bool full) {
  (void)full;
  return clamp_out(y, r);
}
#endif

/* requant_right or requant_left as requant_block picks them: the tests' entry (fast_s8.h). */
int32_t mak_fast_dw_requant(int32_t acc, int32_t mult, int32_t shift) {
  return shift < 0 ? requant_right(acc, mult, -shift - 1, (int32_t)1 << (-shift - 1))
                   : requant_left(acc, mult, shift);
}

/* o[k] = acc[k] requantized (as requant), for the n output channels c0.. of a pixel; full as
 * clamp_out_as's (a constant where inlined). */
static inline __attribute__((always_inline)) void requant_as(const int32_t *acc, int32_t n,
                                                             const mak_conv_data *d, int32_t c0,
                                                             const out_range *r, int8_t *o,
                                                             bool full) {
  const int8_t *shift = mak_conv_shifts(d);
  if (d->n_mult > 1) {
    const int32_t *m = d->mult + c0;
    const int8_t *s = shift + c0;
    for (int32_t k = 0; k < n; ++k) {
      const int32_t sk = s[k];
      const int32_t y = sk < 0 ? requant_right(acc[k], m[k], -sk - 1, (int32_t)1 << (-sk - 1))
                               : requant_left(acc[k], m[k], sk);
      o[k] = clamp_out_as(y, r, full);
    }
  } else if (shift[0] < 0) {
    const int32_t m = d->mult[0], e_minus_1 = -shift[0] - 1, half = (int32_t)1 << e_minus_1;
    for (int32_t k = 0; k < n; ++k)
      o[k] = clamp_out_as(requant_right(acc[k], m, e_minus_1, half), r, full);
  } else {
    const int32_t m = d->mult[0], left = shift[0];
    for (int32_t k = 0; k < n; ++k) o[k] = clamp_out_as(requant_left(acc[k], m, left), r, full);
  }
}

/* Which of DW_REQUANT_RUN's two forms serves the node (1: any right shift, 2: every shift -2
 * or less), or neither (0): per-channel, every shift a right shift (from -31), the full int8
 * range, where the architecture has the runs (DW_RUNS). */
static int requant_run_fits(const mak_conv_data *d, const out_range *r) {
  if (!DW_RUNS || d->n_mult <= 1 || r->lo + r->offset != INT8_MIN || r->hi + r->offset != INT8_MAX)
    return 0;
  const int8_t *shift = mak_conv_shifts(d);
  int form = 2;
  for (int32_t c = 0; c < d->n_mult; ++c) {
    if (shift[c] > -1 || shift[c] < -31) return 0;
    if (shift[c] == -1) form = 1;
  }
  return form;
}

static void requant_block(const int32_t *acc, int32_t n, const mak_conv_data *d, int32_t c0,
                          const out_range *r, int8_t *o, int run) {
#if DW_RUNS
  if (run) {
    DW_REQUANT_RUN(acc, n, d, c0, r, o, run);
    return;
  }
#else
  (void)run;
#endif
  if (r->lo + r->offset == INT8_MIN && r->hi + r->offset == INT8_MAX)
    requant_as(acc, n, d, c0, r, o, true);
  else
    requant_as(acc, n, d, c0, r, o, false);
}

/* The depthwise convolution pixel by pixel, in blocks of channels. Not inlined: its sums stay
 * off the stack of mak_fast_dw1_s8's path. */
__attribute__((noinline)) static void dw_pixels(const ma_node *node, const mak_conv_data *d,
                                                const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *bias_t = mak_input(node, 2);
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3], mult = cout / cin;
  const int8_t *in = in_t->data, *f = node->inputs[1]->data;
  const int32_t *bias = bias_t ? bias_t->data : NULL;
  int8_t *out = node->outputs[0]->data;
  const out_range r = make_range(d->output_offset, d->act_min, d->act_max);
  const int run = requant_run_fits(d, &r);
#if DW_RUNS
  /* DW3X3_PIXEL: whole pixels in order, each four channels read over the window, then
   * written: blocks of four. */
  const bool whole = run && bias && mult == 1 && cout % 4 == 0 && g->kh == 3 && g->kw == 3 &&
                     g->dil_w == 1 && mak_dw_blocks_fit(in_t, node->outputs[0]);
  const uint32_t off2 = ((uint32_t)d->input_offset & 0xFFFFu) * 0x10001u;
#endif
  int32_t acc[MAK_DW_BLOCK];
  int8_t *o = out;
  /* Output pixels in order; a block's channels are all read before any is written (overlap.c's
   * rule). */
  for (int32_t b = 0; b < g->batches; ++b) {
    for (int32_t oy = 0; oy < g->out_h; ++oy) {
      const taps row = row_taps(in, f, g, b, oy, cin, cout);
      for (int32_t ox = 0; ox < g->out_w; ++ox, o += cout) {
        const taps t = pixel_taps(&row, g, ox, cin, cout);
#if DW_RUNS
        if (whole && t.rows == 3 && t.cols == 3) {
          DW3X3_PIXEL(t, cout, bias, d, o, off2, r.offset);
          continue;
        }
#endif
        for (int32_t c0 = 0; c0 < cout; c0 += MAK_DW_BLOCK) {
          const int32_t n = cout - c0 < MAK_DW_BLOCK ? cout - c0 : MAK_DW_BLOCK;
          block_sums(&t, bias, c0, n, mult, cout, d->input_offset, acc);
          requant_block(acc, n, d, c0, &r, o + c0, run);
        }
      }
    }
  }
}

bool mak_fast_dwconv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  if (mak_fast_dw1_s8(node, d, g)) return true;
  if (!all_s8(node) || !offsets_ok(d->input_offset, d->output_offset)) return false;
  dw_pixels(node, d, g);
  return true;
}
