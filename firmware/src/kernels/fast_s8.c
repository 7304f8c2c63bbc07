/* Fast int8 paths of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (see fast_s8.h).
 *
 * The inner loops take four int8 values per 32-bit load. With the Armv7E-M DSP extension
 * (Cortex-M4, M7, M33, M55) SXTAB16 widens an input word to two int16 pairs with the input
 * offset added, and SMLAD (SMLABB/SMLATT for depthwise) multiplies and accumulates them;
 * elsewhere (M0, M3, the host build) the same loops take the bytes apart in C. Both add the
 * same products into wrapping int32 sums, so the order of the additions does not matter and
 * every path equals the reference loops, which the host conformance suite checks on the
 * portable path and the QEMU tests (every intermediate tensor) on the DSP one.
 *
 * Blocking: a convolution computes four output channels per pass over the window (one input
 * load serves four weight rows), a depthwise convolution four channels per pass over the taps
 * with the sums in registers, FULLY_CONNECTED four units per pass over the input row. */
#include "fast_s8.h"

#include <string.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#include <arm_acle.h>
#define FAST_DSP 1
#else
#define FAST_DSP 0
#endif
/* Arm cores without the DSP extension (M0, M3) keep the reference loops: taking the bytes of a
 * word apart in C made person_detect 9% slower on mps2-an385 than they are. The host build
 * runs the portable form, so that the conformance suite checks these loops' logic there. */
#if FAST_DSP || !defined(__arm__)
#define FAST_ENABLED 1
#else
#define FAST_ENABLED 0
#endif

/* Offsets for which x + input_offset fits an int16 lane and the output clamp below is exact. */
static bool offsets_ok(int32_t input_offset, int32_t output_offset) {
  return input_offset >= -255 && input_offset <= 255 && output_offset >= -65536 &&
         output_offset <= 65536;
}

/* Input, weights and output int8 (other typed paths stay in the reference kernels), on a core
 * where these loops pay. */
static bool all_s8(const ma_node *node) {
  return FAST_ENABLED && node->inputs[0]->type == MA_INT8 && node->inputs[1]->type == MA_INT8 &&
         node->outputs[0]->type == MA_INT8;
}

static inline uint32_t load4(const int8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4); /* one unaligned LDR on Armv7-M */
  return v;
}

static inline int32_t wrap_mac(int32_t acc, int32_t w, int32_t x) {
  return (int32_t)((uint32_t)acc + (uint32_t)(w * x));
}

/* Four int32 sums, kept in registers (an array would live on the stack). */
typedef struct {
  int32_t v0, v1, v2, v3;
} acc4;

#if FAST_DSP
/* Four input values plus the offset: bytes 0 and 2 in `even`, bytes 1 and 3 in `odd`. */
typedef struct {
  int16x2_t even, odd;
} quad;

/* SXTB16 and SXTAB16 of the value rotated by 8 bits, in one instruction each (GCC 12 does not
 * fold the rotation into them). */
static inline int16x2_t sxtb16_ror8(uint32_t v) {
  int16x2_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}

static inline int16x2_t sxtab16_ror8(int16x2_t a, uint32_t v) {
  int16x2_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(v));
  return r;
}

static inline quad quad_in(uint32_t v, int32_t off) {
  const int16x2_t off2 = (int16x2_t)(((uint32_t)off & 0xFFFFu) * 0x10001u);
  const quad q = {__sxtab16(off2, (int8x4_t)v), sxtab16_ror8(off2, v)};
  return q;
}

/* acc + the dot product of the four inputs with four weights. */
static inline int32_t quad_dot(int32_t acc, quad x, uint32_t w) {
  acc = __smlad(__sxtb16((int8x4_t)w), x.even, acc);
  return __smlad(sxtb16_ror8(w), x.odd, acc);
}

/* a.v[k] + input k * weight k, for the four lanes k. */
static inline acc4 quad_mac(acc4 a, quad x, uint32_t w) {
  const int16x2_t we = __sxtb16((int8x4_t)w), wo = sxtb16_ror8(w);
  a.v0 = __smlabb(x.even, we, a.v0);
  a.v2 = __smlatt(x.even, we, a.v2);
  a.v1 = __smlabb(x.odd, wo, a.v1);
  a.v3 = __smlatt(x.odd, wo, a.v3);
  return a;
}
/* a.v[k] + x * weight k: four output channels reading one input value (x: input + offset). */
static inline acc4 bcast_mac(acc4 a, int32_t x, uint32_t w) {
  const int16x2_t we = __sxtb16((int8x4_t)w), wo = sxtb16_ror8(w);
  a.v0 = __smlabb(x, we, a.v0);
  a.v2 = __smlabt(x, we, a.v2);
  a.v1 = __smlabb(x, wo, a.v1);
  a.v3 = __smlabt(x, wo, a.v3);
  return a;
}
#else
typedef struct {
  int32_t v[4];
} quad;

static inline int32_t lane(uint32_t v, int k) { return (int8_t)(uint8_t)(v >> (8 * k)); }

static inline quad quad_in(uint32_t v, int32_t off) {
  const quad q = {{lane(v, 0) + off, lane(v, 1) + off, lane(v, 2) + off, lane(v, 3) + off}};
  return q;
}

static inline int32_t quad_dot(int32_t acc, quad x, uint32_t w) {
  for (int k = 0; k < 4; ++k) acc = wrap_mac(acc, lane(w, k), x.v[k]);
  return acc;
}

static inline acc4 quad_mac(acc4 a, quad x, uint32_t w) {
  a.v0 = wrap_mac(a.v0, lane(w, 0), x.v[0]);
  a.v1 = wrap_mac(a.v1, lane(w, 1), x.v[1]);
  a.v2 = wrap_mac(a.v2, lane(w, 2), x.v[2]);
  a.v3 = wrap_mac(a.v3, lane(w, 3), x.v[3]);
  return a;
}

static inline acc4 bcast_mac(acc4 a, int32_t x, uint32_t w) {
  const quad q = {{x, x, x, x}};
  return quad_mac(a, q, w);
}
#endif

/* acc[r] += sum_i w[r * ws + i] * (x[i] + off) for the four weight rows r. Not inlined on
 * DSP builds: its assembly loop needs 13 registers, more than a caller leaves free. */
#if FAST_DSP
__attribute__((noinline))
#endif
static void dot4(const int8_t *x, const int8_t *w, size_t ws, int32_t n, int32_t off,
                        int32_t acc[4]) {
  const int8_t *w0 = w, *w1 = w + ws, *w2 = w1 + ws, *w3 = w2 + ws;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t i = 0;
#if FAST_DSP
  if (n >= 4) { /* the loop below, in assembly: GCC 12 spills it to the stack */
    const int8_t *xq = x, *x_end = x + (n & ~3), *wa = w0, *wb = w2;
    const int16x2_t off2 = (int16x2_t)(((uint32_t)off & 0xFFFFu) * 0x10001u);
    int32_t t, u, xe, xo;
    __asm__(
        "1:\n\t"
        "ldr %[t], [%[x]], #4\n\t"
        "sxtab16 %[xe], %[off2], %[t]\n\t"
        "sxtab16 %[xo], %[off2], %[t], ror #8\n\t"
        "ldr %[t], [%[wa], %[ws]]\n\t"
        "sxtb16 %[u], %[t]\n\t"
        "smlad %[a1], %[u], %[xe], %[a1]\n\t"
        "sxtb16 %[t], %[t], ror #8\n\t"
        "smlad %[a1], %[t], %[xo], %[a1]\n\t"
        "ldr %[t], [%[wa]], #4\n\t"
        "sxtb16 %[u], %[t]\n\t"
        "smlad %[a0], %[u], %[xe], %[a0]\n\t"
        "sxtb16 %[t], %[t], ror #8\n\t"
        "smlad %[a0], %[t], %[xo], %[a0]\n\t"
        "ldr %[t], [%[wb], %[ws]]\n\t"
        "sxtb16 %[u], %[t]\n\t"
        "smlad %[a3], %[u], %[xe], %[a3]\n\t"
        "sxtb16 %[t], %[t], ror #8\n\t"
        "smlad %[a3], %[t], %[xo], %[a3]\n\t"
        "ldr %[t], [%[wb]], #4\n\t"
        "sxtb16 %[u], %[t]\n\t"
        "smlad %[a2], %[u], %[xe], %[a2]\n\t"
        "sxtb16 %[t], %[t], ror #8\n\t"
        "smlad %[a2], %[t], %[xo], %[a2]\n\t"
        "ldr %[u], %[end]\n\t"
        "cmp %[x], %[u]\n\t"
        "bne 1b"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(xq),
          [wa] "+r"(wa), [wb] "+r"(wb), [t] "=&r"(t), [u] "=&r"(u), [xe] "=&r"(xe),
          [xo] "=&r"(xo)
        : [ws] "r"(ws), [off2] "r"(off2), [end] "m"(x_end)
        : "cc", "memory");
    i = n & ~3;
  }
#else
  for (; i + 4 <= n; i += 4) {
    const quad q = quad_in(load4(x + i), off);
    a0 = quad_dot(a0, q, load4(w0 + i));
    a1 = quad_dot(a1, q, load4(w1 + i));
    a2 = quad_dot(a2, q, load4(w2 + i));
    a3 = quad_dot(a3, q, load4(w3 + i));
  }
#endif
  for (; i < n; ++i) {
    const int32_t xi = x[i] + off;
    a0 = wrap_mac(a0, w0[i], xi);
    a1 = wrap_mac(a1, w1[i], xi);
    a2 = wrap_mac(a2, w2[i], xi);
    a3 = wrap_mac(a3, w3[i], xi);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

static inline int32_t dot1(const int8_t *x, const int8_t *w, int32_t n, int32_t off, int32_t a) {
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) a = quad_dot(a, quad_in(load4(x + i), off), load4(w + i));
  for (; i < n; ++i) a = wrap_mac(a, w[i], x[i] + off);
  return a;
}

/* The requantization of mak_requantize with the same integer steps, inlined: the doubling
 * high multiply as one rounding shift ((a * b + 2^30) >> 31 equals TFLite's nudge-and-truncate
 * for every product; its one saturating case needs a multiplier of INT32_MIN, which
 * mak_quantize_multiplier never gives), and the output offset added after the clamp, which is
 * exact for the offsets offsets_ok admits. */
typedef struct {
  int32_t offset, lo, hi; /* lo, hi: the activation range minus the offset */
} out_range;

static out_range make_range(int32_t offset, int32_t act_min, int32_t act_max) {
  const out_range r = {offset, act_min - offset, act_max - offset};
  return r;
}

static inline int8_t requant(int32_t acc, int32_t mult, int shift, const out_range *r) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int32_t x = (int32_t)((uint32_t)acc << left);
  int32_t v = (int32_t)(((int64_t)x * mult + (INT64_C(1) << 30)) >> 31);
  if (right > 0) {
    const int e = right > 31 ? 31 : right;
    const int32_t mask = (int32_t)((UINT32_C(1) << e) - 1u);
    const int32_t threshold = (mask >> 1) + (v < 0 ? 1 : 0);
    v = (v >> e) + ((v & mask) > threshold ? 1 : 0);
  }
  v = v < r->lo ? r->lo : (v > r->hi ? r->hi : v);
  return (int8_t)(v + r->offset);
}

/* ------------------------------------------------------------------ CONV_2D */

/* A run of a window: input and filter bytes that are contiguous in both (a filter row's taps
 * inside the input without dilation, else one tap). Found once per output pixel, then used
 * by every block of output channels. */
typedef struct {
  const int8_t *in;
  int32_t f; /* offset in each output channel's filter */
  int32_t n;
} run;

enum { MAX_RUNS = 32 }; /* windows with more (tall or dilated filters) take the reference loop */

static int32_t max_runs(const mak_window_geom *g) {
  return g->dil_w == 1 ? g->kh : g->kh * g->kw;
}

static int32_t window_runs(const int8_t *in, const mak_window_geom *g, const mak_window *w,
                           int32_t cin, run *runs) {
  const int32_t span = g->dil_w == 1 ? w->fx1 - w->fx0 : 1;
  int32_t n = 0;
  for (int32_t fy = w->fy0; fy < w->fy1; ++fy) {
    const size_t row = ((size_t)w->b * g->in_h + w->iy0 + g->dil_h * fy) * g->in_w;
    for (int32_t fx = w->fx0; fx < w->fx1; fx += span) {
      const run r = {in + (row + w->ix0 + g->dil_w * fx) * cin, (fy * g->kw + fx) * cin,
                     span * cin};
      runs[n++] = r;
    }
  }
  return n;
}

bool mak_fast_conv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *f_t = node->inputs[1], *bias_t = mak_input(node, 2);
  if (!all_s8(node) || f_t->dims[3] != in_t->dims[3] || max_runs(g) > MAX_RUNS ||
      !offsets_ok(d->input_offset, d->output_offset))
    return false; /* grouped convolutions run the reference loop */
  const int8_t *in = in_t->data, *f = f_t->data;
  const int32_t *bias = bias_t ? bias_t->data : NULL;
  int8_t *out = node->outputs[0]->data;
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3];
  const size_t fstride = (size_t)g->kh * g->kw * cin;
  const int8_t *shift = mak_conv_shifts(d);
  const out_range r = make_range(d->output_offset, d->act_min, d->act_max);
  const int32_t per_channel = d->n_mult > 1, off = d->input_offset;
  run runs[MAX_RUNS];
  mak_window w;
  mak_window_start(g, &w);
  while (mak_window_next(g, &w)) {
    const int32_t nr = window_runs(in, g, &w, cin, runs);
    int8_t *o = out + w.pixel * (size_t)cout;
    int32_t oc = 0;
    for (; oc + 4 <= cout; oc += 4) {
      const int8_t *fo = f + oc * fstride;
      int32_t acc[4];
      for (int k = 0; k < 4; ++k) acc[k] = bias ? bias[oc + k] : 0;
      for (int32_t i = 0; i < nr; ++i) dot4(runs[i].in, fo + runs[i].f, fstride, runs[i].n, off, acc);
      for (int k = 0; k < 4; ++k) {
        const int32_t mi = per_channel ? oc + k : 0;
        o[oc + k] = requant(acc[k], d->mult[mi], shift[mi], &r);
      }
    }
    for (; oc < cout; ++oc) {
      const int8_t *fo = f + oc * fstride;
      int32_t acc = bias ? bias[oc] : 0;
      for (int32_t i = 0; i < nr; ++i) acc = dot1(runs[i].in, fo + runs[i].f, runs[i].n, off, acc);
      const int32_t mi = per_channel ? oc : 0;
      o[oc] = requant(acc, d->mult[mi], shift[mi], &r);
    }
  }
  return true;
}

/* -------------------------------------------------------- DEPTHWISE_CONV_2D */

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

/* ---------------------------------------------------------- FULLY_CONNECTED */

bool mak_fast_fc_s8(const ma_node *node, int32_t input_offset, int32_t filter_offset,
                    int32_t output_offset, int32_t act_min, int32_t act_max, int32_t n_mult,
                    const int32_t *mult, const int8_t *shift) {
  const ma_tensor *in_t = node->inputs[0], *w_t = node->inputs[1], *bias_t = mak_input(node, 2);
  if (!all_s8(node) || filter_offset != 0 || !offsets_ok(input_offset, output_offset))
    return false;
  const int32_t units = w_t->dims[0], depth = w_t->dims[1];
  const int32_t batches = ma_num_elements(in_t) / depth;
  const int8_t *in = in_t->data, *wt = w_t->data;
  const int32_t *bias = bias_t ? bias_t->data : NULL;
  int8_t *out = node->outputs[0]->data;
  const out_range r = make_range(output_offset, act_min, act_max);
  for (int32_t b = 0; b < batches; ++b) {
    const int8_t *x = in + (size_t)b * depth;
    int8_t *o = out + (size_t)b * units;
    int32_t u = 0;
    for (; u + 4 <= units; u += 4) {
      int32_t acc[4];
      for (int k = 0; k < 4; ++k) acc[k] = bias ? bias[u + k] : 0;
      dot4(x, wt + (size_t)u * depth, (size_t)depth, depth, input_offset, acc);
      for (int k = 0; k < 4; ++k) {
        const int32_t mi = n_mult > 1 ? u + k : 0;
        o[u + k] = requant(acc[k], mult[mi], shift[mi], &r);
      }
    }
    for (; u < units; ++u) {
      const int32_t acc = dot1(x, wt + (size_t)u * depth, depth, input_offset, bias ? bias[u] : 0);
      const int32_t mi = n_mult > 1 ? u : 0;
      o[u] = requant(acc, mult[mi], shift[mi], &r);
    }
  }
  return true;
}
