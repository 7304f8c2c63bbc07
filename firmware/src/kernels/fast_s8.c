/* Fast int8 paths of CONV_2D and FULLY_CONNECTED (see fast_s8.h; DEPTHWISE_CONV_2D is in
 * fast_depthwise_s8.c, the primitives they share in fast_s8_core.h).
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
#include "fast_s8_core.h"

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
