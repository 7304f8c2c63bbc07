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
 * Blocking: a convolution computes two neighbouring output pixels x two output channels per
 * pass over the windows where it may (rows2), else four output channels of one pixel per pass
 * (one input load serves four weight rows); FULLY_CONNECTED four units per pass over the input
 * row. */
#include "fast_s8_core.h"
#include "fast_mve_s8.h"

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

/* ------------------------------------------------------------ 2 x 2 block */

/* The sums of two input rows (x0, x0 + xd) with two weight rows (w0, w0 + ws) over n values:
 * acc[0] += x0.w0, acc[1] += x0.w1, acc[2] += x1.w0, acc[3] += x1.w1. Each input word then
 * serves two weight rows and each weight word two input rows (1.5 instructions per
 * multiply-accumulate on the DSP form, against 1.6 for dot4), and a pixel pair shares the
 * requantization constants of its channels. */
typedef struct {
  const int8_t *x0, *x1, *w0, *w1;
  const int8_t *x_end; /* x0 + n rounded down to a multiple of 4 (the assembly's loop end) */
  uint32_t off2;       /* the input offset in both int16 lanes */
  int32_t acc[4];
} block2x2;

#if FAST_DSP
/* The 4-value loop in assembly: it needs all 14 free registers (four sums, two input words
 * as int16 pairs, two temporaries, four pointers), so the loop end and the offset stay on the
 * stack. Called with at least 4 values. */
_Static_assert(offsetof(block2x2, x_end) == 16 && offsetof(block2x2, off2) == 20 &&
                   offsetof(block2x2, acc) == 24,
               "mac2x2_dsp's offsets");
__attribute__((naked, noinline)) static void mac2x2_dsp(block2x2 *b __attribute__((unused))) {
  __asm__(
      "push {r0, r4-r11, lr}\n\t"
      "ldrd r12, lr, [r0, #16]\n\t" /* x_end, off2 */
      "push {r12, lr}\n\t"
      "add r12, r0, #24\n\t"
      "ldm r12, {r4-r7}\n\t"
      "ldm r0, {r0-r3}\n\t"
      "1:\n\t"
      "ldr lr, [sp, #4]\n\t"
      "ldr r12, [r0], #4\n\t"
      "sxtab16 r8, lr, r12\n\t"
      "sxtab16 r9, lr, r12, ror #8\n\t"
      "ldr r12, [r1], #4\n\t"
      "sxtab16 r10, lr, r12\n\t"
      "sxtab16 r11, lr, r12, ror #8\n\t"
      "ldr r12, [r2], #4\n\t"
      "sxtb16 lr, r12\n\t"
      "smlad r4, lr, r8, r4\n\t"
      "smlad r6, lr, r10, r6\n\t"
      "sxtb16 r12, r12, ror #8\n\t"
      "smlad r4, r12, r9, r4\n\t"
      "smlad r6, r12, r11, r6\n\t"
      "ldr r12, [r3], #4\n\t"
      "sxtb16 lr, r12\n\t"
      "smlad r5, lr, r8, r5\n\t"
      "smlad r7, lr, r10, r7\n\t"
      "sxtb16 r12, r12, ror #8\n\t"
      "smlad r5, r12, r9, r5\n\t"
      "smlad r7, r12, r11, r7\n\t"
      "ldr lr, [sp]\n\t"
      "cmp r0, lr\n\t"
      "bne 1b\n\t"
      "ldr r0, [sp, #8]\n\t"
      "add r0, r0, #24\n\t"
      "stm r0, {r4-r7}\n\t"
      "add sp, sp, #12\n\t"
      "pop {r4-r11, pc}");
}
#endif

static void mac2x2(block2x2 *b, int32_t n, int32_t off) {
  int32_t i = n & ~3;
#if FAST_DSP
  if (i > 0) mac2x2_dsp(b);
#else
  for (int32_t k = 0; k < i; k += 4) {
    const quad q0 = quad_in(load4(b->x0 + k), off), q1 = quad_in(load4(b->x1 + k), off);
    const uint32_t w0 = load4(b->w0 + k), w1 = load4(b->w1 + k);
    b->acc[0] = quad_dot(b->acc[0], q0, w0);
    b->acc[1] = quad_dot(b->acc[1], q0, w1);
    b->acc[2] = quad_dot(b->acc[2], q1, w0);
    b->acc[3] = quad_dot(b->acc[3], q1, w1);
  }
#endif
  for (; i < n; ++i) {
    const int32_t x0 = b->x0[i] + off, x1 = b->x1[i] + off, w0 = b->w0[i], w1 = b->w1[i];
    b->acc[0] = wrap_mac(b->acc[0], w0, x0);
    b->acc[1] = wrap_mac(b->acc[1], w1, x0);
    b->acc[2] = wrap_mac(b->acc[2], w0, x1);
    b->acc[3] = wrap_mac(b->acc[3], w1, x1);
  }
}

/* One output channel's requantization constants (requant's steps, without its branches). */
typedef struct {
  int32_t mult, left, right, mask;
} chan_q;

static inline chan_q chan_consts(int32_t mult, int shift) {
  const int32_t right = shift > 0 ? 0 : (-shift > 31 ? 31 : -shift);
  const chan_q c = {mult, shift > 0 ? shift : 0, right, (int32_t)((UINT32_C(1) << right) - 1u)};
  return c;
}

/* requant with the constants of chan_consts: a right shift of 0 has mask 0, so its rounding
 * step adds nothing and every channel takes the same instructions. */
static inline int8_t requant_c(int32_t acc, const chan_q *c, const out_range *r) {
  const int32_t x = (int32_t)((uint32_t)acc << c->left);
  int32_t v = (int32_t)(((int64_t)x * c->mult + (INT64_C(1) << 30)) >> 31);
  const int32_t threshold = (c->mask >> 1) + (v < 0 ? 1 : 0);
  v = (v >> c->right) + ((v & c->mask) > threshold ? 1 : 0);
  v = v < r->lo ? r->lo : (v > r->hi ? r->hi : v);
  return (int8_t)(v + r->offset);
}

/* Two rows of outputs (o0, o1), channels [0, cout), from input rows whose runs are `runs`
 * (first row) and the same runs xd bytes further (second row). Channel pairs, then the odd
 * channel; requantization constants shared by the two rows. */
typedef struct {
  const int8_t *f; /* filters, one per output channel, fstride bytes apart */
  size_t fstride;
  const int32_t *bias;
  const int32_t *mult;
  const int8_t *shift;
  bool per_channel;
  int32_t cout, off;
  out_range r;
} rows_job;

typedef struct {
  const int8_t *in;
  int32_t f; /* offset in each output channel's filter */
  int32_t n;
} run;

static void rows2(const rows_job *j, const run *runs, int32_t nr, ptrdiff_t xd, int8_t *o0,
                  int8_t *o1) {
  const uint32_t off2 = ((uint32_t)j->off & 0xFFFFu) * 0x10001u;
  chan_q c = chan_consts(j->mult[0], j->shift[0]);
  int32_t oc = 0;
  for (; oc + 2 <= j->cout; oc += 2) {
    const int8_t *fo = j->f + oc * j->fstride;
    block2x2 b;
    b.acc[0] = b.acc[2] = j->bias ? j->bias[oc] : 0;
    b.acc[1] = b.acc[3] = j->bias ? j->bias[oc + 1] : 0;
    b.off2 = off2;
    for (int32_t i = 0; i < nr; ++i) {
      b.x0 = runs[i].in;
      b.x1 = runs[i].in + xd;
      b.w0 = fo + runs[i].f;
      b.w1 = b.w0 + j->fstride;
      b.x_end = b.x0 + (runs[i].n & ~3);
      mac2x2(&b, runs[i].n, j->off);
    }
    if (j->per_channel) c = chan_consts(j->mult[oc], j->shift[oc]);
    o0[oc] = requant_c(b.acc[0], &c, &j->r);
    o1[oc] = requant_c(b.acc[2], &c, &j->r);
    if (j->per_channel) c = chan_consts(j->mult[oc + 1], j->shift[oc + 1]);
    o0[oc + 1] = requant_c(b.acc[1], &c, &j->r);
    o1[oc + 1] = requant_c(b.acc[3], &c, &j->r);
  }
  if (oc < j->cout) {
    const int8_t *fo = j->f + oc * j->fstride;
    int32_t a0 = j->bias ? j->bias[oc] : 0, a1 = a0;
    for (int32_t i = 0; i < nr; ++i) {
      a0 = dot1(runs[i].in, fo + runs[i].f, runs[i].n, j->off, a0);
      a1 = dot1(runs[i].in + xd, fo + runs[i].f, runs[i].n, j->off, a1);
    }
    if (j->per_channel) c = chan_consts(j->mult[oc], j->shift[oc]);
    o0[oc] = requant_c(a0, &c, &j->r);
    o1[oc] = requant_c(a1, &c, &j->r);
  }
}

/* ------------------------------------------------------------------ CONV_2D */

/* A run of a window: input and filter bytes that are contiguous in both (a filter row's taps
 * inside the input without dilation, else one tap). Found once per output pixel (pair), then
 * used by every block of output channels. */
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

/* One output pixel, all channels, in order: four channels per pass over the window. */
static void conv_pixel(const rows_job *j, const run *runs, int32_t nr, int8_t *o) {
  int32_t oc = 0;
  for (; oc + 4 <= j->cout; oc += 4) {
    const int8_t *fo = j->f + oc * j->fstride;
    int32_t acc[4];
    for (int k = 0; k < 4; ++k) acc[k] = j->bias ? j->bias[oc + k] : 0;
    for (int32_t i = 0; i < nr; ++i)
      dot4(runs[i].in, fo + runs[i].f, j->fstride, runs[i].n, j->off, acc);
    for (int k = 0; k < 4; ++k) {
      const int32_t mi = j->per_channel ? oc + k : 0;
      o[oc + k] = requant(acc[k], j->mult[mi], j->shift[mi], &j->r);
    }
  }
  for (; oc < j->cout; ++oc) {
    const int8_t *fo = j->f + oc * j->fstride;
    int32_t acc = j->bias ? j->bias[oc] : 0;
    for (int32_t i = 0; i < nr; ++i)
      acc = dot1(runs[i].in, fo + runs[i].f, runs[i].n, j->off, acc);
    const int32_t mi = j->per_channel ? oc : 0;
    o[oc] = requant(acc, j->mult[mi], j->shift[mi], &j->r);
  }
}

/* Whether two windows take the same taps (so the same runs, a constant distance apart). */
static bool same_taps(const mak_window *a, const mak_window *b) {
  return a->fy0 == b->fy0 && a->fy1 == b->fy1 && a->fx0 == b->fx0 && a->fx1 == b->fx1;
}

static bool disjoint(const ma_tensor *a, const ma_tensor *b) {
  const uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
  return a0 + (uintptr_t)ma_num_elements(a) <= b0 || b0 + (uintptr_t)ma_num_elements(b) <= a0;
}

bool mak_fast_conv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  if (mak_mve_conv_s8(node, d, g)) return true;
  const ma_tensor *in_t = node->inputs[0], *f_t = node->inputs[1], *bias_t = mak_input(node, 2);
  if (!all_s8(node) || f_t->dims[3] != in_t->dims[3] || max_runs(g) > MAX_RUNS ||
      !offsets_ok(d->input_offset, d->output_offset))
    return false; /* grouped convolutions run the reference loop */
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3];
  const rows_job j = {f_t->data,
                      (size_t)g->kh * g->kw * cin,
                      bias_t ? bias_t->data : NULL,
                      d->mult,
                      mak_conv_shifts(d),
                      d->n_mult > 1,
                      cout,
                      d->input_offset,
                      make_range(d->output_offset, d->act_min, d->act_max)};
  const int8_t *in = in_t->data;
  int8_t *out = node->outputs[0]->data;
  /* Pixel pairs write the second pixel's first channels before the first pixel's window is
   * read for the last ones: outside overlap.c's rule, so only where no byte is shared. */
  const bool pairs = disjoint(in_t, node->outputs[0]);
  run runs[MAX_RUNS];
  mak_window cur, next;
  mak_window_start(g, &cur);
  bool more = mak_window_next(g, &cur);
  while (more) {
    const int32_t nr = window_runs(in, g, &cur, cin, runs);
    next = cur;
    more = mak_window_next(g, &next);
    if (pairs && more && same_taps(&cur, &next)) {
      const int64_t pix = ((int64_t)next.b - cur.b) * g->in_h * g->in_w +
                          (int64_t)(next.iy0 - cur.iy0) * g->in_w + (next.ix0 - cur.ix0);
      rows2(&j, runs, nr, (ptrdiff_t)(pix * cin), out + cur.pixel * (size_t)cout,
            out + next.pixel * (size_t)cout);
      more = mak_window_next(g, &next);
    } else {
      conv_pixel(&j, runs, nr, out + cur.pixel * (size_t)cout);
    }
    cur = next;
  }
  return true;
}

/* ---------------------------------------------------------- FULLY_CONNECTED */

bool mak_fast_fc_s8(const ma_node *node, int32_t input_offset, int32_t filter_offset,
                    int32_t output_offset, int32_t act_min, int32_t act_max, int32_t n_mult,
                    const int32_t *mult, const int8_t *shift) {
  if (mak_mve_fc_s8(node, input_offset, filter_offset, output_offset, act_min, act_max, n_mult,
                    mult, shift))
    return true;
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
