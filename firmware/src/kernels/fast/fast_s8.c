/* Fast int8 paths of CONV_2D and FULLY_CONNECTED (see fast_s8.h; DEPTHWISE_CONV_2D is in
 * fast_depthwise_s8.c, the primitives they share in fast_s8_core.h).
 *
 * The inner loops take four int8 values per 32-bit load. With the Armv7E-M DSP extension
 * (Cortex-M4, M7, M33, M55) SXTAB16 widens an input word to two int16 pairs with the input
 * offset added, and SMLAD (SMLABB/SMLATT for depthwise) multiplies and accumulates them; on
 * Armv7-M without DSP (M3) the assembly loops load one byte per LDRSB and multiply with MLA
 * (each input plus offset serving two or four weights); elsewhere (the host build) the same
 * loops take the bytes apart in C. Both add the
 * same products into wrapping int32 sums, so the order of the additions does not matter and
 * every path equals the reference loops, which the host conformance suite checks on the
 * portable path and the QEMU tests (every intermediate tensor) on the DSP one.
 *
 * Blocking: a convolution computes two neighbouring output pixels x two output channels per
 * pass over the windows where it may (rows2), else four output channels of one pixel per pass
 * (conv_pixel: one input load serves four weight rows). FULLY_CONNECTED runs the same code, a
 * batch being a pixel of one run. Windows of one run of 4k bytes (1x1 convolutions,
 * FULLY_CONNECTED) keep the channel loop in assembly too and requantize afterwards.
 *
 * This file holds that loop structure and the portable C forms of its steps (what the host
 * and a CPU without a folder build). Each architecture's forms of the steps (its assembly
 * loops and intrinsics) are in its folder, fast/dsp/, fast/v7m/ and fast/v6m/, whose header
 * fast_s8_steps.h includes, with the blocking choices that follow (FAST_PAIRS, FAST_WIDE,
 * ...): this file asks those, never the architecture. */
#include "fast/fast_s8_core.h"
#include "fast/mve/fast_mve_s8.h"
#include "overlap.h"

/* What a convolution's (or FULLY_CONNECTED's) rows of outputs need. */
typedef struct {
  const int8_t *f; /* filters, one per output channel, fstride bytes apart */
  size_t fstride;
  const int32_t *bias;
  const int32_t *mult;
  const int8_t *shift;
  bool per_channel;
  int32_t cout, off;
  out_range r;
  /* Per-channel, every shift below 0, a bias, the activation range all of int8: rows2_wide
   * requantizes in its assembly loop (set by the convolution; zero elsewhere). */
  bool fused_q;
} rows_job;

typedef struct {
  const int8_t *in;
  int32_t f; /* offset in each output channel's filter */
  int32_t n;
} run;

enum { COL_MAX = 128 }; /* bytes of a window gathered into one run (two on the stack) */

/* requant, with the constants of chan_consts. */
static inline int8_t requant_c(int32_t acc, const chan_q *c, const out_range *r) {
  return clamp_out(c->half ? REQUANT_RIGHT(acc, c->mult, c->amount, c->half)
                           : requant_left(acc, c->mult, c->amount),
                   r);
}

/* The sums of two input rows (x0, x0 + xd) with two weight rows (w0, w0 + ws) over n values:
 * acc[0] += x0.w0, acc[1] += x1.w0, acc[2] += x0.w1, acc[3] += x1.w1. Each input word then
 * serves two weight rows and each weight word two input rows (1.5 instructions per
 * multiply-accumulate on the DSP form, against 1.6 for dot4), and a pixel pair shares the
 * requantization constants of its channels. */
typedef struct {
  const int8_t *x0, *x1, *w0, *w1;
  const int8_t *x_end; /* x0 + n rounded down to a multiple of 4 (the assembly's loop end) */
  uint32_t off2;       /* the input offset in both int16 lanes */
  int32_t acc[4];
} block2x2;

/* The sums of nruns runs of n bytes each (n a multiple of 4), `row` bytes apart in two input
 * rows (x0, x1), with the weights of `pairs` channel pairs, contiguous in each weight row:
 * pair q's weight rows start at w0 and w1 plus q * (wstep + nruns * n). Written to out as
 * four sums per pair: its first channel with x0 and x1, its second with x0 and x1.
 * Field order: the assembly's. */
typedef struct {
  const int8_t *x_end; /* x0 + n */
  uint32_t off2;       /* the input offset in both int16 lanes */
  const int8_t *x0, *x1;
  int32_t wstep; /* from the end of a pair's weight rows to the next pair's */
  int32_t *out;
  int32_t pairs;
  const int8_t *w0, *w1;
  int32_t xstep; /* row - n: from a run's end to the next run */
  int32_t nruns, n, row;
  int32_t runs_left; /* the assembly's counter */
} pairs_job;

/* The sums of one input row (x) with `blocks` blocks of four weight rows (w, ws bytes apart,
 * a block 4 ws after the previous one) over the row's first n values (n a multiple of 4, at
 * least 4; x_end = x + n): out[4 b + r] for row r of block b. Field order: the assembly's. */
typedef struct {
  const int8_t *x, *x_end, *w;
  int32_t ws;
  int32_t *out;
  int32_t blocks;
  uint32_t off2; /* the input offset in both int16 lanes */
  int32_t step;  /* 4 ws - n: from the end of a block's rows to the next block */
} quads_job;

/* The sums of the widened rows (wb to wb_end) with `pairs` channel pairs' weight rows (w0 and
 * w0 + ws, the next pair 2 ws further), written to out as pairs_sums does. Field order: the
 * assembly's. */
typedef struct {
  const uint32_t *wb, *wb_end;
  const int8_t *w0;
  int32_t ws;
  int32_t *out;
  int32_t pairs;
  int32_t wstep; /* 2 ws - n: from the end of a pair's first weight row to the next pair's */
} wide_job;

/* Channel pairs per pairs_sums call: 32 sums (128 bytes) on the stack. overlap.h's pair rules
 * follow it. */
enum { PAIRS = MAK_PAIR_CHUNK / 2 };

static inline int32_t wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* Defined below; fast/v7m/'s rows2_v7m_in calls them too. */
static inline int32_t dot1(const int8_t *x, const int8_t *w, int32_t n, int32_t off, int32_t a);
static int32_t odd_bias(const rows_job *j);
static void odd_store(const rows_job *j, int32_t a0, int32_t a1, int8_t *o0, int8_t *o1);
__attribute__((noinline)) static void requant_rows(const rows_job *j, int32_t ch0, int32_t n,
                                                   const int32_t *s, int32_t rows, int8_t *o0,
                                                   int8_t *o1);

#include "fast/fast_s8_steps.h"

#ifndef S8_HAS_DOT4
/* acc[r] += sum_i w[r * ws + i] * (x[i] + off) for the four weight rows r. */
static void dot4(const int8_t *x, const int8_t *w, size_t ws, int32_t n, int32_t off,
                 int32_t acc[4]) {
  const int8_t *w0 = w, *w1 = w + ws, *w2 = w1 + ws, *w3 = w2 + ws;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const quad q = quad_in(load4(x + i), off);
    a0 = quad_dot(a0, q, load4(w0 + i));
    a1 = quad_dot(a1, q, load4(w1 + i));
    a2 = quad_dot(a2, q, load4(w2 + i));
    a3 = quad_dot(a3, q, load4(w3 + i));
  }
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
#endif

void mak_dot4_rows(const int8_t *x, const int8_t *w, size_t ws, int32_t n, int32_t off,
                   int32_t acc[4]) {
  dot4(x, w, ws, n, off, acc);
}

#ifndef S8_HAS_DOT1
static inline int32_t dot1(const int8_t *x, const int8_t *w, int32_t n, int32_t off, int32_t a) {
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) a = quad_dot(a, quad_in(load4(x + i), off), load4(w + i));
  for (; i < n; ++i) a = wrap_mac(a, w[i], x[i] + off);
  return a;
}
#endif

/* ------------------------------------------------------------ 2 x 2 block */

#ifndef S8_HAS_MAC2X2
static void mac2x2(block2x2 *b, int32_t n, int32_t off) {
  int32_t i = n & ~3;
  for (int32_t k = 0; k < i; k += 4) {
    const quad q0 = quad_in(load4(b->x0 + k), off), q1 = quad_in(load4(b->x1 + k), off);
    const uint32_t w0 = load4(b->w0 + k), w1 = load4(b->w1 + k);
    b->acc[0] = quad_dot(b->acc[0], q0, w0);
    b->acc[1] = quad_dot(b->acc[1], q1, w0);
    b->acc[2] = quad_dot(b->acc[2], q0, w1);
    b->acc[3] = quad_dot(b->acc[3], q1, w1);
  }
  for (; i < n; ++i) {
    const int32_t x0 = b->x0[i] + off, x1 = b->x1[i] + off, w0 = b->w0[i], w1 = b->w1[i];
    b->acc[0] = wrap_mac(b->acc[0], w0, x0);
    b->acc[1] = wrap_mac(b->acc[1], w0, x1);
    b->acc[2] = wrap_mac(b->acc[2], w1, x0);
    b->acc[3] = wrap_mac(b->acc[3], w1, x1);
  }
}
#endif

#ifndef S8_HAS_PAIRS_SUMS
static void pairs_sums(pairs_job *p) {
  const int32_t step = p->wstep + p->nruns * p->n;
  const int32_t off = (int16_t)(p->off2 & 0xFFFFu);
  for (int32_t q = 0; q < p->pairs; ++q) {
    block2x2 b = {NULL, NULL, p->w0 + q * step, p->w1 + q * step, NULL, p->off2, {0}};
    for (int32_t i = 0; i < p->nruns; ++i, b.w0 += p->n, b.w1 += p->n) {
      b.x0 = p->x0 + i * p->row;
      b.x1 = p->x1 + i * p->row;
      mac2x2(&b, p->n, off);
    }
    memcpy(p->out + 4 * q, b.acc, sizeof b.acc);
  }
}
#endif

/* Whether the window's runs are nr > 1 runs of equal length, a multiple of 4, at a constant
 * distance in the input (*row) and back to back in the filter: pairs_sums' form. */
static bool uniform_runs(const run *runs, int32_t nr, ptrdiff_t *row) {
  if (nr < 2 || (runs[0].n & 3) != 0) return false;
  *row = runs[1].in - runs[0].in;
  for (int32_t i = 1; i < nr; ++i)
    if (runs[i].n != runs[0].n || runs[i].f != runs[0].f + i * runs[0].n ||
        runs[i].in != runs[0].in + i * *row)
      return false;
  return true;
}

#ifndef S8_HAS_REQUANT_CF
/* requant_c where the activation range is all of int8 (`full`, a constant where inlined): the
 * same clamp here; the DSP's form takes SSAT. */
static inline int8_t requant_cf(int32_t acc, const chan_q *c, const out_range *r, bool full) {
  (void)full;
  return requant_c(acc, c, r);
}
#endif

enum { ROW_CHUNK = 32 }; /* output channels one_row sums before requantizing: 128 stack bytes */

#if FAST_EVEN_ROW && !defined(S8_HAS_EVEN_ROW)
/* requant_right for an even half (e >= 2, quarter = half / 2) in one instruction fewer: k =
 * half + (acc >> 31) has the sign's low bit, so requant_right's low word is acc's sign bit
 * and 2^30, its high word k >> 1 = quarter + (acc >> 31). */
static inline int32_t requant_right_even(int32_t acc, int32_t mult, int32_t e_minus_1,
                                         int32_t quarter) {
  uint32_t lo = ((uint32_t)acc & UINT32_C(0x80000000)) | UINT32_C(0x40000000);
  int32_t hi = quarter + (acc >> 31);
  return (int32_t)mul_add_wide(acc, mult, lo, (uint32_t)hi).hi >> e_minus_1;
}

/* requant_as's loop for one row, per-tensor constants of an even half: no test of the
 * shift's sign per output (GCC kept it in the loop). */
static inline __attribute__((always_inline)) void requant_even_row(
    const chan_q *c, const out_range *r, int32_t n, const int32_t *s, const int32_t *bias,
    int8_t *o, bool full) {
  const int32_t quarter = c->half >> 1;
  for (int32_t k = 0; k < n; ++k) {
    const int32_t y = requant_right_even(wrap_add(s[k], bias[k]), c->mult, c->amount, quarter);
    (void)full;
    o[k] = clamp_out(y, r);
  }
}
#endif

static inline __attribute__((always_inline)) void requant_as(
    const rows_job *j, int32_t ch0, int32_t n, const int32_t *s, int32_t rows,
    const int32_t *bias, int8_t *o0, int8_t *o1, bool full, bool per_channel) {
  const out_range r = j->r;
  const int32_t *m = j->mult + (per_channel ? ch0 : 0);
  const int8_t *sh = j->shift + (per_channel ? ch0 : 0);
  chan_q c = chan_consts(m[0], sh[0]);
#if FAST_EVEN_ROW
  if (rows == 1 && !per_channel && c.half > 1) {
    requant_even_row(&c, &r, n, s, bias, o0, full);
    return;
  }
#endif
  for (int32_t k = 0; k < n; ++k) {
    if (per_channel) c = chan_consts(m[k], sh[k]);
    o0[k] = requant_cf(wrap_add(s[rows * k], bias[k]), &c, &r, full);
    if (rows == 2) o1[k] = requant_cf(wrap_add(s[2 * k + 1], bias[k]), &c, &r, full);
  }
}

/* o0[ch] (and o1[ch] for two rows) for the n channels ch from ch0: s holds their sums without
 * the bias, channel k's at k (one row) or at 2k and 2k + 1 (two rows: pairs_sums' order). Not
 * inlined, and one loop per form of the clamp and of the multipliers, so that the loop keeps
 * its constants in registers. */
__attribute__((noinline)) static void requant_rows(const rows_job *j, int32_t ch0, int32_t n,
                                                   const int32_t *s, int32_t rows, int8_t *o0,
                                                   int8_t *o1) {
  static const int32_t no_bias[ROW_CHUNK];
  _Static_assert(2 * PAIRS <= ROW_CHUNK, "no_bias covers a chunk of pairs");
  const int32_t *bias = j->bias ? j->bias + ch0 : no_bias;
  const bool full = j->r.lo + j->r.offset == INT8_MIN && j->r.hi + j->r.offset == INT8_MAX;
  o0 += ch0;
  o1 += ch0;
  if (rows == 1) {
    if (full && j->per_channel)
      requant_as(j, ch0, n, s, 1, bias, o0, o1, true, true);
    else if (full)
      requant_as(j, ch0, n, s, 1, bias, o0, o1, true, false);
    else if (j->per_channel)
      requant_as(j, ch0, n, s, 1, bias, o0, o1, false, true);
    else
      requant_as(j, ch0, n, s, 1, bias, o0, o1, false, false);
  } else if (full && j->per_channel) {
    requant_as(j, ch0, n, s, 2, bias, o0, o1, true, true);
  } else if (full) {
    requant_as(j, ch0, n, s, 2, bias, o0, o1, true, false);
  } else if (j->per_channel) {
    requant_as(j, ch0, n, s, 2, bias, o0, o1, false, true);
  } else {
    requant_as(j, ch0, n, s, 2, bias, o0, o1, false, false);
  }
}

/* pairs_sums for windows of several runs (or one run of a length not a multiple of 4): the
 * sums of channel pairs [oc, oc + 2 * np), run by run. */
static void runs_sums(const rows_job *j, const run *runs, int32_t nr, ptrdiff_t xd, int32_t oc,
                      int32_t np, int32_t *s) {
  block2x2 b;
  b.off2 = ((uint32_t)j->off & 0xFFFFu) * 0x10001u;
  for (int32_t q = 0; q < np; ++q) {
    const int8_t *fo = j->f + (oc + 2 * q) * j->fstride;
    memset(b.acc, 0, sizeof b.acc);
    for (int32_t i = 0; i < nr; ++i) {
      b.x0 = runs[i].in;
      b.x1 = runs[i].in + xd;
      b.w0 = fo + runs[i].f;
      b.w1 = b.w0 + j->fstride;
      b.x_end = b.x0 + (runs[i].n & ~3);
      mac2x2(&b, runs[i].n, j->off);
    }
    memcpy(s + 4 * q, b.acc, sizeof b.acc);
  }
}

/* ----------------------------------------------- pairs over widened input rows */

/* With the DSP, rows2 first widens both input rows (their window, run after run, in filter
 * order) once into int16 pairs on the stack, as quad_in does, interleaved four values at a
 * time: x0's bytes 0 and 2 plus the offset, x0's 1 and 3, then x1's the same (four words per
 * four values). Every channel pair then loads the four words with one LDM instead of two
 * loads and four SXTAB16s: 15 instructions per 16 multiply-accumulates against 21. The host
 * build runs the same layout in C, so the conformance suite checks it. The buffer holds
 * WIDE_MAX values (1,152 bytes of stack: resnet8's 3x3x32 windows, every 1x1 convolution of
 * the models measured but MobileNetV2's 336 channels); longer windows are widened in parts of
 * that many (rows2_parts), which costs the widening again per chunk of channel pairs. At 576
 * (2,304 bytes) the DSP cores' deepest stack was 1,152 bytes more (docs/boards.md). */
enum { WIDE_MAX = 288 };

#if FAST_WIDE && !defined(S8_HAS_WIDE)
/* The two int16 lanes of a word: even (bytes 0 and 2) or odd (1 and 3) bytes plus the offset. */
static inline uint32_t widen_lanes(uint32_t v, int k, uint32_t off2) {
  const int32_t off = (int16_t)(off2 & 0xFFFFu);
  return ((uint32_t)(lane(v, k) + off) & 0xFFFFu) | (uint32_t)(lane(v, k + 2) + off) << 16;
}
static inline uint32_t widen_even(uint32_t v, uint32_t off2) { return widen_lanes(v, 0, off2); }
static inline uint32_t widen_odd(uint32_t v, uint32_t off2) { return widen_lanes(v, 1, off2); }

/* acc plus the products of the int16 lanes of w and x (SMLAD, wrapping). */
static inline int32_t lanes_mac(int32_t acc, uint32_t w, uint32_t x) {
  acc = wrap_mac(acc, (int16_t)(w & 0xFFFFu), (int16_t)(x & 0xFFFFu));
  return wrap_mac(acc, (int16_t)(w >> 16), (int16_t)(x >> 16));
}

/* n values (a multiple of 4) of x0 and of x0 + xd into wb, widened and interleaved; returns
 * the end of what it wrote. */
static uint32_t *widen_rows(const int8_t *x0, ptrdiff_t xd, int32_t n, uint32_t off2,
                            uint32_t *wb) {
  for (int32_t i = 0; i < n; i += 4, wb += 4) {
    const uint32_t a = load4(x0 + i), b = load4(x0 + xd + i);
    wb[0] = widen_even(a, off2);
    wb[1] = widen_odd(a, off2);
    wb[2] = widen_even(b, off2);
    wb[3] = widen_odd(b, off2);
  }
  return wb;
}

/* wide_job's sums, from zero or (acc) added to those in out. */
static void wide_sums(const wide_job *p, bool acc) {
  const int32_t n = (int32_t)(p->wb_end - p->wb); /* values: four words per four */
  const int8_t *w0 = p->w0;
  for (int32_t q = 0; q < p->pairs; ++q, w0 += 2 * p->ws) {
    int32_t a[4] = {0, 0, 0, 0};
    if (acc) memcpy(a, p->out + 4 * q, sizeof a);
    for (int32_t i = 0; i < n; i += 4) {
      const uint32_t *x = p->wb + i;
      for (int32_t r = 0; r < 2; ++r) {
        const uint32_t w = load4(w0 + r * p->ws + i);
        const uint32_t we = widen_even(w, 0), wo = widen_odd(w, 0);
        for (int32_t k = 0; k < 2; ++k) {
          a[2 * r + k] = lanes_mac(lanes_mac(a[2 * r + k], we, x[2 * k]), wo, x[2 * k + 1]);
        }
      }
    }
    memcpy(p->out + 4 * q, a, sizeof a);
  }
}
#endif

/* The last channel of an odd count: its bias (the sums' start) and its outputs from the sums
 * of both rows. */
static int32_t odd_bias(const rows_job *j) { return j->bias ? j->bias[j->cout & ~1] : 0; }

static void odd_store(const rows_job *j, int32_t a0, int32_t a1, int8_t *o0, int8_t *o1) {
  const int32_t even = j->cout & ~1;
  const chan_q c =
      chan_consts(j->mult[j->per_channel ? even : 0], j->shift[j->per_channel ? even : 0]);
  o0[even] = requant_c(a0, &c, &j->r);
  o1[even] = requant_c(a1, &c, &j->r);
}

/* rows2's last channel of an odd count, from the input rows. */
static void rows2_odd(const rows_job *j, const run *runs, int32_t nr, ptrdiff_t xd, int8_t *o0,
                      int8_t *o1) {
  const int8_t *fo = j->f + (j->cout & ~1) * j->fstride;
  int32_t a0 = odd_bias(j), a1 = a0;
  for (int32_t i = 0; i < nr; ++i) {
    a0 = dot1(runs[i].in, fo + runs[i].f, runs[i].n, j->off, a0);
    a1 = dot1(runs[i].in + xd, fo + runs[i].f, runs[i].n, j->off, a1);
  }
  odd_store(j, a0, a1, o0, o1);
}

#if FAST_WIDE
/* rows2_odd from the widened rows (rows2_widened's arguments): the input is not read again. */
static void odd_widened(const rows_job *j, const uint32_t *wb, const uint32_t *end, int32_t f0,
                        int8_t *o0, int8_t *o1) {
  const int8_t *w = j->f + (j->cout & ~1) * j->fstride + f0;
  int32_t a0 = odd_bias(j), a1 = a0;
  for (; wb < end; wb += 4, w += 4) {
    const uint32_t v = load4(w), we = widen_even(v, 0), wo = widen_odd(v, 0);
    a0 = lanes_mac(lanes_mac(a0, we, wb[0]), wo, wb[1]);
    a1 = lanes_mac(lanes_mac(a1, we, wb[2]), wo, wb[3]);
  }
  odd_store(j, a0, a1, o0, o1);
}

/* rows2 from its rows widened into wb (to end: the window's values from filter offset f0):
 * wide_sums per chunk of channel pairs, or wide_q_dsp for them all; an odd count's last
 * channel from the same rows. */
static void rows2_widened(const rows_job *j, const uint32_t *wb, const uint32_t *end, int32_t f0,
                          int8_t *o0, int8_t *o1) {
  const int32_t even = j->cout & ~1, wstep = (int32_t)(2 * j->fstride) - (int32_t)(end - wb);
#if FAST_WIDE_Q
  if (j->fused_q && even > 0) {
    wide_q(j, wb, end, f0, even, wstep, o0, o1);
    if (even < j->cout) odd_widened(j, wb, end, f0, o0, o1);
    return;
  }
#endif
  int32_t s[4 * PAIRS];
  for (int32_t oc = 0; oc < even; oc += 2 * PAIRS) {
    const int32_t np = (even - oc) / 2 < PAIRS ? (even - oc) / 2 : PAIRS;
    const wide_job p = {wb, end, j->f + oc * j->fstride + f0, (int32_t)j->fstride,
                        s,  np,  wstep};
    wide_sums(&p, false);
    requant_rows(j, oc, 2 * np, s, 2, o0, o1);
  }
  if (even < j->cout) odd_widened(j, wb, end, f0, o0, o1);
}

/* Window values [v0, v1) (multiples of 4) of both rows of rows2_wide's window into wb, widened;
 * returns the end of what it wrote. */
static uint32_t *widen_part(const run *first, ptrdiff_t row, ptrdiff_t xd, int32_t v0,
                            int32_t v1, uint32_t off2, uint32_t *wb) {
  const int32_t n = first->n;
  for (int32_t v = v0; v < v1;) {
    const int32_t i = v / n, k = v - i * n, cnt = n - k < v1 - v ? n - k : v1 - v;
    wb = widen_rows(first->in + i * row + k, xd, cnt, off2, wb);
    v += cnt;
  }
  return wb;
}

/* rows2_wide for windows of more than WIDE_MAX values: for each chunk of channel pairs the
 * window is widened WIDE_MAX values at a time into wb and the sums of the parts added up (the
 * rows are read again for each chunk, as rows2_runs reads them; overlap.h's pair rules hold),
 * then requantized; an odd count's last channel from the input. Not inlined: its sums stay off
 * rows2_widened's stack. */
__attribute__((noinline)) static void rows2_parts(const rows_job *j, const run *first, int32_t nr,
                                                  ptrdiff_t row, ptrdiff_t xd, int8_t *o0,
                                                  int8_t *o1, uint32_t *wb) {
  int32_t s[4 * PAIRS];
  const uint32_t off2 = ((uint32_t)j->off & 0xFFFFu) * 0x10001u;
  const int32_t n = first->n, total = nr * n, even = j->cout & ~1;
  for (int32_t oc = 0; oc < even; oc += 2 * PAIRS) {
    const int32_t np = (even - oc) / 2 < PAIRS ? (even - oc) / 2 : PAIRS;
    for (int32_t v0 = 0; v0 < total; v0 += WIDE_MAX) {
      const int32_t v1 = total - v0 < WIDE_MAX ? total : v0 + WIDE_MAX;
      const uint32_t *end = widen_part(first, row, xd, v0, v1, off2, wb);
      const wide_job p = {wb, end, j->f + oc * j->fstride + first->f + v0, (int32_t)j->fstride,
                          s,  np,  (int32_t)(2 * j->fstride) - (v1 - v0)};
      wide_sums(&p, v0 > 0);
    }
    requant_rows(j, oc, 2 * np, s, 2, o0, o1);
  }
  if (even < j->cout) {
    const int8_t *fo = j->f + even * j->fstride + first->f;
    int32_t a0 = odd_bias(j), a1 = a0;
    for (int32_t i = 0; i < nr; ++i) {
      a0 = dot1(first->in + i * row, fo + i * n, n, j->off, a0);
      a1 = dot1(first->in + i * row + xd, fo + i * n, n, j->off, a1);
    }
    odd_store(j, a0, a1, o0, o1);
  }
}

/* rows2 for windows in nr runs like `first` (row bytes apart in the input, back to back in the
 * filter): both rows widened once where the window has at most WIDE_MAX values, else
 * rows2_parts. Not inlined: the buffer stays off the other paths' stack. */
__attribute__((noinline)) static void rows2_wide(const rows_job *j, const run *first, int32_t nr,
                                                 ptrdiff_t row, ptrdiff_t xd, int8_t *o0,
                                                 int8_t *o1) {
  uint32_t wb[WIDE_MAX];
  if (nr * first->n > WIDE_MAX) {
    rows2_parts(j, first, nr, row, xd, o0, o1, wb);
    return;
  }
  const uint32_t off2 = ((uint32_t)j->off & 0xFFFFu) * 0x10001u;
  uint32_t *end = wb;
  for (int32_t i = 0; i < nr; ++i) end = widen_rows(first->in + i * row, xd, first->n, off2, end);
  rows2_widened(j, wb, end, first->f, o0, o1);
}
#endif

/* rows2 from the input rows, without widening them: the sums of a chunk of channel pairs (in
 * assembly for the whole chunk where the runs are asm_form), then their requantization. Not
 * inlined: its sums stay off rows2_wide's stack. */
__attribute__((noinline)) static void rows2_runs(const rows_job *j, const run *runs, int32_t nr,
                                                 bool asm_form, ptrdiff_t row, ptrdiff_t xd,
                                                 int8_t *o0, int8_t *o1) {
  int32_t s[4 * PAIRS];
  const int32_t even = j->cout & ~1;
  for (int32_t oc = 0; oc < even; oc += 2 * PAIRS) {
    const int32_t np = (even - oc) / 2 < PAIRS ? (even - oc) / 2 : PAIRS;
    if (asm_form) {
      const int32_t n = runs->n;
      const int8_t *w0 = j->f + oc * j->fstride + runs->f;
      pairs_job p = {runs->in + n,
                     ((uint32_t)j->off & 0xFFFFu) * 0x10001u,
                     runs->in,
                     runs->in + xd,
                     (int32_t)(2 * j->fstride) - nr * n,
                     s,
                     np,
                     w0,
                     w0 + j->fstride,
                     (int32_t)row - n,
                     nr,
                     n,
                     (int32_t)row,
                     0};
      pairs_sums(&p);
    } else {
      runs_sums(j, runs, nr, xd, oc, np, s);
    }
    requant_rows(j, oc, 2 * np, s, 2, o0, o1);
  }
  if (even < j->cout) rows2_odd(j, runs, nr, xd, o0, o1);
}

/* Two rows of outputs (o0, o1), channels [0, cout), from input rows whose runs are `runs`
 * (first row) and the same runs xd bytes further (second row): widened once where the window
 * is in assembly form (one run of 4k bytes: 1x1 convolutions, FULLY_CONNECTED, gathered
 * windows; or uniform runs) and short, else from the input; each channel's constants serve
 * both rows, the odd channel last. */
static inline void rows2(const rows_job *j, const run *runs, int32_t nr, ptrdiff_t xd, int8_t *o0,
                         int8_t *o1) {
  ptrdiff_t row = 0;
  const bool asm_form = (nr == 1 && (runs[0].n & 3) == 0) || uniform_runs(runs, nr, &row);
#if FAST_WIDE
  if (asm_form) {
    rows2_wide(j, runs, nr, row, xd, o0, o1);
    return;
  }
#endif
#if FAST_WIDE32
  if (asm_form && j->cout >= WIDE32_MIN_COUT) {
    rows2_wide32(j, runs, nr, row, xd, o0, o1);
    return;
  }
#endif
  rows2_runs(j, runs, nr, asm_form, row, xd, o0, o1);
}

/* ------------------------------------------------------------- one input row */

#ifndef S8_HAS_QUADS_SUMS
static void quads_sums(const quads_job *p) {
  const int32_t off = (int16_t)(p->off2 & 0xFFFFu), n = (int32_t)(p->x_end - p->x);
  for (int32_t b = 0; b < p->blocks; ++b) {
    int32_t acc[4] = {0, 0, 0, 0};
    dot4(p->x, p->w + (size_t)b * 4 * p->ws, (size_t)p->ws, n, off, acc);
    memcpy(p->out + 4 * b, acc, sizeof acc);
  }
}
#endif

/* s[k] = sum_i w[k * ws + i] * (x[i] + off), i < len, for the n weight rows k < n (wrapping as
 * int32): four rows per pass over the row, then the other rows one by one, then the last
 * len % 4 values. */
static void row_sums(const int8_t *x, int32_t len, const int8_t *w, size_t ws, int32_t n,
                     int32_t off, int32_t *s) {
  const int32_t n4 = len & ~3;
  int32_t k = 0;
  if (n4 > 0 && n >= 4) {
    const uint32_t off2 = ((uint32_t)off & 0xFFFFu) * 0x10001u;
    const quads_job q = {x, x + n4, w, (int32_t)ws, s, n / 4, off2, (int32_t)(4 * ws) - n4};
    quads_sums(&q);
    k = n & ~3;
  }
  int32_t i = n4;
  if (n4 == 0 && len > 0) { /* rows of under four values (hello_world's first layer): the */
    const int32_t x0 = x[0] + off; /* first value starts the sums, no dot products of none */
    for (; k < n; ++k) s[k] = wrap_mac(0, w[(size_t)k * ws], x0);
    i = 1;
  }
  for (; k < n; ++k) s[k] = dot1(x, w + (size_t)k * ws, n4, off, 0);
  for (; i < len; ++i) {
    const int32_t xi = x[i] + off;
    for (k = 0; k < n; ++k) s[k] = wrap_mac(s[k], w[(size_t)k * ws + i], xi);
  }
}

/* One input row of len values (a FULLY_CONNECTED batch, a 1x1 convolution's pixel) against
 * every weight row of j: o[0, cout), chunk by chunk of channels, each chunk's sums before its
 * writes (so every read of the row comes no later than in channel order, as overlap.c's rule
 * wants), then the chunk's requantization. Not inlined: its sums stay off rows2_wide's stack
 * (matrix_rows). */
__attribute__((noinline)) static void one_row(const rows_job *j, const int8_t *x, int32_t len, int8_t *o) {
  int32_t s[ROW_CHUNK];
  for (int32_t c0 = 0; c0 < j->cout; c0 += ROW_CHUNK) {
    const int32_t n = j->cout - c0 < ROW_CHUNK ? j->cout - c0 : ROW_CHUNK;
    row_sums(x, len, j->f + (size_t)c0 * j->fstride, j->fstride, n, j->off, s);
    requant_rows(j, c0, n, s, 1, o, o);
  }
}

/* ------------------------------------------------------------------ CONV_2D */

/* A run of a window: input and filter bytes that are contiguous in both (a filter row's taps
 * inside the input without dilation, else one tap). Found once per output pixel (pair), then
 * used by every block of output channels. */
enum { MAX_RUNS = 32 }; /* windows with more (tall or dilated filters) take the reference loop */

static int32_t max_runs(const mak_window_geom *g, bool grouped) {
  return g->dil_w == 1 && !grouped ? g->kh : g->kh * g->kw;
}

/* The taps of one run of a window: a filter row's (inside the input) without dilation, else
 * one. Group gi's window takes input channels gi * fin on of pixels of cin channels (one
 * group, fin = cin, but for grouped convolutions). */
static inline int32_t run_span(const mak_window_geom *g, const mak_window *w, int32_t cin,
                               int32_t fin) {
  return g->dil_w == 1 && fin == cin ? w->fx1 - w->fx0 : 1;
}

/* The run of group gi's window from tap (fy, fx), span taps long. Walked as window_runs does
 * where a copy of the runs would cost stack (gather, widen_pair). */
static inline run window_run(const int8_t *in, const mak_window_geom *g, const mak_window *w,
                             int32_t cin, int32_t fin, int32_t gi, int32_t fy, int32_t fx,
                             int32_t span) {
  const size_t row = ((size_t)w->b * g->in_h + w->iy0 + g->dil_h * fy) * g->in_w;
  const run r = {in + (row + w->ix0 + g->dil_w * fx) * cin + gi * fin, (fy * g->kw + fx) * fin,
                 span * fin};
  return r;
}

/* The runs of group gi's window, in filter order. */
static int32_t window_runs(const int8_t *in, const mak_window_geom *g, const mak_window *w,
                           int32_t cin, int32_t fin, int32_t gi, run *runs) {
  const int32_t span = run_span(g, w, cin, fin);
  int32_t n = 0;
  for (int32_t fy = w->fy0; fy < w->fy1; ++fy)
    for (int32_t fx = w->fx0; fx < w->fx1; fx += span)
      runs[n++] = window_run(in, g, w, cin, fin, gi, fy, fx, span);
  return n;
}

/* Group gi's share of j: its filters, biases, multipliers and output channels. */
static rows_job group_job(const rows_job *j, int32_t gi) {
  rows_job r = *j;
  const int32_t c0 = gi * j->cout;
  r.f += c0 * j->fstride;
  if (r.bias) r.bias += c0;
  if (r.per_channel) {
    r.mult += c0;
    r.shift += c0;
  }
  return r;
}

/* One output pixel, all channels, in order: four channels per pass over the window. */
static void conv_pixel(const rows_job *j, const run *runs, int32_t nr, int8_t *o) {
#if FAST_ONE_RUN
  /* A window of several runs is first copied into one, as gather does (the taps
   * outside the input hold the zero point), so that each block of four channels costs one
   * dot4 call (a grouped 3x3 layer of two channels per group took nine). */
  int8_t col[COL_MAX];
  run whole = {col, 0, (int32_t)j->fstride};
  if (nr > 1 && j->fstride <= COL_MAX && j->off >= -127 && j->off <= 128) {
    memset(col, -j->off, j->fstride);
    for (int32_t i = 0; i < nr; ++i)
      for (int32_t k = 0; k < runs[i].n; ++k) col[runs[i].f + k] = runs[i].in[k];
    runs = &whole;
    nr = 1;
  }
#endif
  chan_q c = chan_consts(j->mult[0], j->shift[0]);
  int32_t oc = 0;
  for (; oc + 4 <= j->cout; oc += 4) {
    const int8_t *fo = j->f + oc * j->fstride;
    int32_t acc[4];
    for (int k = 0; k < 4; ++k) acc[k] = j->bias ? j->bias[oc + k] : 0;
    for (int32_t i = 0; i < nr; ++i)
      dot4(runs[i].in, fo + runs[i].f, j->fstride, runs[i].n, j->off, acc);
    for (int k = 0; k < 4; ++k) {
      if (j->per_channel) c = chan_consts(j->mult[oc + k], j->shift[oc + k]);
      o[oc + k] = requant_c(acc[k], &c, &j->r);
    }
  }
#if FAST_ONE_RUN
  if (oc + 2 <= j->cout) {
    const int8_t *fo = j->f + oc * j->fstride;
    int32_t acc[2];
    for (int k = 0; k < 2; ++k) acc[k] = j->bias ? j->bias[oc + k] : 0;
    for (int32_t i = 0; i < nr; ++i)
      dot2(runs[i].in, fo + runs[i].f, j->fstride, runs[i].n, j->off, acc);
    for (int k = 0; k < 2; ++k) {
      if (j->per_channel) c = chan_consts(j->mult[oc + k], j->shift[oc + k]);
      o[oc + k] = requant_c(acc[k], &c, &j->r);
    }
    oc += 2;
  }
#endif
  for (; oc < j->cout; ++oc) {
    const int8_t *fo = j->f + oc * j->fstride;
    int32_t acc = j->bias ? j->bias[oc] : 0;
    for (int32_t i = 0; i < nr; ++i)
      acc = dot1(runs[i].in, fo + runs[i].f, runs[i].n, j->off, acc);
    if (j->per_channel) c = chan_consts(j->mult[oc], j->shift[oc]);
    o[oc] = requant_c(acc, &c, &j->r);
  }
}

#if FAST_ONE_RUN
/* Grouped convolutions whose groups' windows fit COL_MAX together: pixel by pixel,
 * each group's fin input channels of the window copied once, in filter order, one group's
 * window (k = taps * fin bytes) after the other (the taps outside the input hold the zero
 * point: 0 after the offset), then conv_pixel on each group's copy. The window is walked once
 * per pixel, not once per group (conv_options' first layer, two groups of two channels: 476
 * instructions per output before, window_runs and a job copy per group). Every read of a
 * pixel's window comes before its writes, as in conv_pixel's order. */
static bool conv_groups_copied(const rows_job *j, const int8_t *in, const mak_window_geom *g,
                               int32_t cin, int32_t fin, int32_t groups, int8_t *out) {
  const int32_t k = (int32_t)j->fstride, all = groups * j->cout;
  if (groups * k > COL_MAX || j->off < -127 || j->off > 128) return false;
  int8_t col[COL_MAX];
  rows_job jg = *j;
  mak_window w;
  mak_window_start(g, &w);
  while (mak_window_next(g, &w)) {
    if (w.fy1 - w.fy0 < g->kh || w.fx1 - w.fx0 < g->kw) memset(col, -j->off, (size_t)(groups * k));
    for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
      const size_t row = ((size_t)w.b * g->in_h + w.iy0 + g->dil_h * fy) * g->in_w;
      const int8_t *p = in + (row + w.ix0 + g->dil_w * w.fx0) * cin;
      int8_t *c = col + (fy * g->kw + w.fx0) * fin;
      for (int32_t fx = w.fx0; fx < w.fx1; ++fx, p += g->dil_w * cin, c += fin)
        for (int32_t gi = 0; gi < groups; ++gi)
          for (int32_t i = 0; i < fin; ++i) c[gi * k + i] = p[gi * fin + i];
    }
    int8_t *o = out + w.pixel * (size_t)all;
    for (int32_t gi = 0; gi < groups; ++gi) {
      const run rn = {col + gi * k, 0, k};
      jg.f = j->f + (size_t)gi * j->cout * j->fstride;
      jg.bias = j->bias ? j->bias + gi * j->cout : NULL;
      jg.mult = j->mult + (j->per_channel ? gi * j->cout : 0);
      jg.shift = j->shift + (j->per_channel ? gi * j->cout : 0);
      conv_pixel(&jg, &rn, 1, o + gi * j->cout);
    }
  }
  return true;
}
#endif

/* Whether two windows take the same taps (so the same runs, a constant distance apart). */
static bool same_taps(const mak_window *a, const mak_window *b) {
  return a->fy0 == b->fy0 && a->fy1 == b->fy1 && a->fx0 == b->fx0 && a->fx1 == b->fx1;
}

/* The window's bytes in filter order, as one run: the taps outside the input hold the input
 * zero point, whose value plus the input offset is 0, so they add nothing (the reference
 * skips them). Windows of several short runs (first layers: one to three input channels)
 * then take rows2's one-run loops whatever their clipping. */
static void gather(const int8_t *in, const mak_window_geom *g, const mak_window *w, int32_t cin,
                   int32_t len, int8_t zero_point, int8_t *col) {
  const int32_t span = run_span(g, w, cin, cin);
  memset(col, zero_point, (size_t)len);
  for (int32_t fy = w->fy0; fy < w->fy1; ++fy) {
    for (int32_t fx = w->fx0; fx < w->fx1; fx += span) {
      const run r = window_run(in, g, w, cin, cin, 0, fy, fx, span);
      if (r.n > 8 || FAST_MEMCPY_RUNS) {
        memcpy(col + r.f, r.in, (size_t)r.n);
      } else { /* a call per run of a few bytes costs more than the bytes */
        for (int32_t k = 0; k < r.n; ++k) col[r.f + k] = r.in[k];
      }
    }
  }
}

#if FAST_WIDE
/* A gathered pixel pair widened straight from the input into wb (len values), without the
 * byte copies: where the two windows take the same taps and every run is whole words of the
 * filter (a multiple of 4 bytes at a multiple of 4), each run widens into its place; the taps
 * outside the input (and a filter row's padding) are zeros, the zero point plus the offset.
 * Even channel counts only: rows2_odd would read the input after the pair's writes (the
 * gathered copies do not). The runs are walked twice (checked, then widened), not copied. */
static bool widen_pair(const rows_job *j, const int8_t *in, const mak_window_geom *g,
                       const mak_window *a, const mak_window *b, int32_t cin, uint32_t *wb) {
  if ((j->cout & 1) != 0 || !same_taps(a, b)) return false;
  const int32_t span = run_span(g, a, cin, cin), len = (int32_t)j->fstride;
  for (int32_t fy = a->fy0; fy < a->fy1; ++fy)
    for (int32_t fx = a->fx0; fx < a->fx1; fx += span) {
      const run r = window_run(in, g, a, cin, cin, 0, fy, fx, span);
      if (((r.n | r.f) & 3) != 0) return false;
    }
  const ptrdiff_t xd = (ptrdiff_t)((((int64_t)b->b - a->b) * g->in_h + (b->iy0 - a->iy0)) *
                                       g->in_w + (b->ix0 - a->ix0)) * cin;
  const uint32_t off2 = ((uint32_t)j->off & 0xFFFFu) * 0x10001u;
  int32_t at = 0; /* the runs come in filter order: zeros only in the gaps between them */
  for (int32_t fy = a->fy0; fy < a->fy1; ++fy)
    for (int32_t fx = a->fx0; fx < a->fx1; fx += span) {
      const run r = window_run(in, g, a, cin, cin, 0, fy, fx, span);
      if (r.f > at) memset(wb + at, 0, (size_t)(r.f - at) * sizeof *wb);
      at = r.f + r.n;
      widen_rows(r.in, xd, r.n, off2, wb + r.f);
    }
  if (at < len) memset(wb + at, 0, (size_t)(len - at) * sizeof *wb);
  return true;
}
#endif

/* conv_gathered's buffers for windows of len bytes (a multiple of 4): two windows' copies and,
 * where FAST_WIDE, their widened rows (len words). Its callers give them, after their own
 * weights where they have some, from one stack array: GATHER_SCRATCH bytes, or for windows of
 * at most COL_MAX bytes without weights GATHER_BYTES(COL_MAX). */
#define GATHER_BYTES(len) ((FAST_WIDE ? 6 : 2) * (int64_t)(len))
enum { GATHER_SCRATCH = 1152 };

/* The convolution by gathered windows, in pixel pairs (the last pixel alone); col: its
 * GATHER_BYTES(fstride) bytes, word-aligned. */
static void conv_gathered(const rows_job *j, const int8_t *in, const mak_window_geom *g,
                          int32_t cin, int8_t *out, int8_t *col) {
  const int32_t len = (int32_t)j->fstride;
  const int8_t zero_point = (int8_t)-j->off;
#if FAST_WIDE
  uint32_t *wb = (uint32_t *)(void *)(col + 2 * len);
#endif
  const run rn = {col, 0, len};
  mak_window cur, next;
  mak_window_start(g, &cur);
  bool more = mak_window_next(g, &cur);
  while (more) {
    next = cur;
    more = mak_window_next(g, &next);
    int8_t *o0 = out + cur.pixel * (size_t)j->cout;
    if (FAST_PAIRS && more) {
      int8_t *o1 = out + next.pixel * (size_t)j->cout;
#if FAST_WIDE
      if (widen_pair(j, in, g, &cur, &next, cin, wb)) {
        rows2_widened(j, wb, wb + len, 0, o0, o1);
      } else {
        gather(in, g, &cur, cin, len, zero_point, col);
        gather(in, g, &next, cin, len, zero_point, col + len);
        /* rows2_wide's widening with a buffer of the gathered windows' size */
        uint32_t *end = widen_rows(col, len, len, ((uint32_t)j->off & 0xFFFFu) * 0x10001u, wb);
        rows2_widened(j, wb, end, 0, o0, o1);
      }
#else
      gather(in, g, &cur, cin, len, zero_point, col);
      gather(in, g, &next, cin, len, zero_point, col + len);
      rows2(j, &rn, 1, len, o0, o1);
#endif
      more = mak_window_next(g, &next);
    } else {
      gather(in, g, &cur, cin, len, zero_point, col);
      conv_pixel(j, &rn, 1, o0);
    }
    cur = next;
  }
}

/* conv_gathered with its buffers, for windows of at most COL_MAX bytes. Not inlined: they
 * stay off the stack of the other paths. */
__attribute__((noinline)) static void conv_gathered_own(const rows_job *j, const int8_t *in,
                                                        const mak_window_geom *g, int32_t cin,
                                                        int8_t *out) {
  uint32_t buf[GATHER_BYTES(COL_MAX) / 4];
  conv_gathered(j, in, g, cin, out, (int8_t *)buf);
}

/* Small windows whose filter rows are not whole words (first layers of three channels, 3 x 1 x 6
 * filters, conv1d_audio's 1 x 3 x 10) or that are grouped (at most 4 groups, windows of several
 * runs): the weights copied once per invoke into
 * rows of the whole window (every input channel, a group's filter in its own channels and
 * zeros in the others') padded with zeros to a multiple of 4 bytes, so that the windows take
 * the gathered, widened pairs (the padding holds the zero point: 0 after the offset) instead
 * of runs of a few bytes each. A grouped layer then multiplies zeros too (groups times its
 * products), which still costs less than its runs of fin bytes. The weights and
 * conv_gathered's buffers share GATHER_SCRATCH bytes of stack. Not inlined: they stay off the
 * stack of the other paths. */
__attribute__((noinline)) static bool conv_padded(const rows_job *j, const int8_t *in,
                                                  const mak_window_geom *g, int32_t cin,
                                                  int32_t fin, int32_t groups, int8_t *out) {
  const int32_t taps = g->kh * g->kw, k = taps * fin, fs = (taps * cin + 3) & ~3;
  const int32_t all = j->cout * groups;
  if (!FAST_WIDE || (groups == 1 && fs == k) || groups > 4 ||
      (int64_t)all * fs + GATHER_BYTES(fs) > GATHER_SCRATCH || j->off < -127 || j->off > 128)
    return false;
  uint32_t buf[GATHER_SCRATCH / 4];
  int8_t *w = (int8_t *)buf;
  memset(w, 0, (size_t)(all * fs));
  for (int32_t c = 0; c < all; ++c) {
    const int8_t *f = j->f + (size_t)c * k;
    int8_t *row = w + (size_t)c * fs + c / j->cout * fin;
    for (int32_t t = 0; t < taps; ++t) memcpy(row + t * cin, f + t * fin, (size_t)fin);
  }
  rows_job p = *j;
  p.f = w;
  p.fstride = (size_t)fs;
  p.cout = all;
  conv_gathered(&p, in, g, cin, out, w + all * fs);
  return true;
}

/* `rows` rows of outputs (cout apart) from input rows of one run each (len bytes, len apart):
 * a 1x1 convolution's pixels or FULLY_CONNECTED's batches, in pairs where `pairs` allows. */
static void matrix_rows(const rows_job *j, const int8_t *in, int32_t len, size_t rows,
                        int8_t *out, bool pairs) {
  size_t r = 0;
  for (; FAST_PAIRS && pairs && r + 2 <= rows; r += 2) {
    const run rn = {in + r * len, 0, len};
    rows2(j, &rn, 1, len, out + r * j->cout, out + (r + 1) * j->cout);
  }
  for (; r < rows; ++r) one_row(j, in + r * len, len, out + r * j->cout);
}

/* A 1x1 convolution, stride 1, that reads every input pixel: a matrix product. */
static bool is_matrix(const mak_window_geom *g) {
  return g->kh == 1 && g->kw == 1 && g->stride_h == 1 && g->stride_w == 1 && g->pad_h == 0 &&
         g->pad_w == 0 && g->in_h == g->out_h && g->in_w == g->out_w;
}

/* rows_job.fused_q for a convolution: per-channel multipliers whose shifts are all below 0 (a
 * rounding right shift: requant_right's form alone), a bias, and the full int8 range. */
static bool fused_q_fits(const rows_job *j, const mak_conv_data *d) {
  if (!FAST_WIDE_Q || !j->per_channel || j->bias == NULL || j->r.lo + j->r.offset != INT8_MIN ||
      j->r.hi + j->r.offset != INT8_MAX)
    return false;
  for (int32_t c = 0; c < d->n_mult; ++c)
    if (j->shift[c] >= 0) return false;
  return true;
}

/* Whether group gi's window is rows2_wide's: nr runs like *first, row bytes apart in the input
 * and back to back in the filter, of whole words (rows2's test, found from the taps without a
 * copy of the runs): one run per filter row where the rows are whole or only one, or one row
 * of single taps. */
#if FAST_WIDE || FAST_WIDE32
static bool wide_window(const int8_t *in, const mak_window_geom *g, const mak_window *w,
                        int32_t cin, int32_t fin, int32_t gi, run *first, int32_t *nr,
                        ptrdiff_t *row) {
  const int32_t span = run_span(g, w, cin, fin), rows = w->fy1 - w->fy0, cols = w->fx1 - w->fx0;
  if (rows <= 0 || cols <= 0) return false;
  *first = window_run(in, g, w, cin, fin, gi, w->fy0, w->fx0, span);
  if (span == cols) { /* a run per filter row */
    if (rows > 1 && span != g->kw) return false;
    *nr = rows;
    *row = (ptrdiff_t)g->dil_h * g->in_w * cin;
  } else { /* a run per tap */
    if (rows > 1) return false;
    *nr = cols;
    *row = (ptrdiff_t)g->dil_w * cin;
  }
  return (first->n & 3) == 0;
}
#endif

/* One window of group gi from its runs: conv_pixel, or with the next pixel's (o1, xd bytes
 * further) rows2_runs. Not inlined where rows2_wide runs: the runs stay off its stack. */
#if FAST_WIDE
__attribute__((noinline))
#endif
static void window_by_runs(const rows_job *j, const int8_t *in, const mak_window_geom *g,
                           const mak_window *w, int32_t cin, int32_t fin, int32_t gi,
                           ptrdiff_t xd, int8_t *o0, int8_t *o1) {
  run runs[MAX_RUNS];
  const int32_t nr = window_runs(in, g, w, cin, fin, gi, runs);
  if (o1 == NULL) {
    conv_pixel(j, runs, nr, o0);
    return;
  }
  ptrdiff_t row = 0;
  const bool asm_form = (nr == 1 && (runs[0].n & 3) == 0) || uniform_runs(runs, nr, &row);
  rows2_runs(j, runs, nr, asm_form, row, xd, o0, o1);
}

/* The convolution window by window (in pixel pairs where `pairs`), group by group: rows2_wide
 * where the window is its form, else from the window's runs. Not inlined: its windows stay
 * off the stack of the other paths. */
__attribute__((noinline)) static void conv_windows(const rows_job *j, const int8_t *in,
                                                   const mak_window_geom *g, int32_t cin,
                                                   int32_t fin, int32_t groups, bool pairs,
                                                   int8_t *out) {
  const int32_t cout = j->cout * groups;
  mak_window cur, next;
  mak_window_start(g, &cur);
  bool more = mak_window_next(g, &cur);
  while (more) {
    next = cur;
    more = mak_window_next(g, &next);
    const bool pair = pairs && more && same_taps(&cur, &next);
    const int64_t pix = ((int64_t)next.b - cur.b) * g->in_h * g->in_w +
                        (int64_t)(next.iy0 - cur.iy0) * g->in_w + (next.ix0 - cur.ix0);
    int8_t *o0 = out + cur.pixel * (size_t)cout, *o1 = out + next.pixel * (size_t)cout;
    const ptrdiff_t xd = (ptrdiff_t)(pix * cin);
    for (int32_t gi = 0; gi < groups; ++gi) {
      const rows_job jg = group_job(j, gi);
      int8_t *p0 = o0 + gi * j->cout, *p1 = pair ? o1 + gi * j->cout : NULL;
#if FAST_WIDE
      run first;
      int32_t nr;
      ptrdiff_t row;
      if (pair && wide_window(in, g, &cur, cin, fin, gi, &first, &nr, &row)) {
        rows2_wide(&jg, &first, nr, row, xd, p0, p1);
        continue;
      }
#elif FAST_WIDE32
      run first;
      int32_t nr;
      ptrdiff_t row;
      if (pair && jg.cout >= WIDE32_MIN_COUT &&
          wide_window(in, g, &cur, cin, fin, gi, &first, &nr, &row)) {
        wide32_buffers b; /* in the room of window_by_runs' runs, a sibling scope */
        rows2_wide32_in(&jg, &first, nr, row, xd, p0, p1, &b);
        continue;
      }
#endif
      window_by_runs(&jg, in, g, &cur, cin, fin, gi, xd, p0, p1);
    }
    if (pair) more = mak_window_next(g, &next);
    cur = next;
  }
}

bool mak_fast_conv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *f_t = node->inputs[1], *bias_t = mak_input(node, 2);
  const int32_t cin = in_t->dims[3], fin = f_t->dims[3], cout = node->outputs[0]->dims[3];
  if (!all_s8(node) || fin <= 0 || cin % fin != 0 || cout % (cin / fin) != 0 ||
      max_runs(g, fin != cin) > MAX_RUNS || !offsets_ok(d->input_offset, d->output_offset))
    return false;
  const int32_t groups = cin / fin; /* each with cout / groups output channels */
  rows_job j = {f_t->data,
                      (size_t)g->kh * g->kw * fin,
                      bias_t ? bias_t->data : NULL,
                      d->mult,
                      mak_conv_shifts(d),
                      d->n_mult > 1,
                      cout / groups,
                      d->input_offset,
                      make_range(d->output_offset, d->act_min, d->act_max),
                      false};
  j.fused_q = fused_q_fits(&j, d);
  const int8_t *in = in_t->data;
  int8_t *out = node->outputs[0]->data;
  /* Pixel (row) pairs write the second pixel's first channels before the first pixel's window
   * is read for the last ones: they run where overlap.h's pair rules allow the tensors'
   * offsets (always where they share no byte). */
  if (groups == 1 && is_matrix(g)) {
    const size_t rows = (size_t)g->batches * g->out_h * g->out_w;
    matrix_rows(&j, in, cin, rows, out,
                mak_rows_pairs_fit(in_t, node->outputs[0], (int64_t)rows, cin, cout));
    return true;
  }
  /* Windows of several runs, small, whose padding the zero point can fill. Both windows of a
   * pair are copied before either pixel is written: overlap.c's CONV_2D rule holds. */
  if (groups == 1 && max_runs(g, false) > 1 && j.fstride <= COL_MAX && j.fstride % 4 == 0 &&
      d->input_offset >= -127 && d->input_offset <= 128) {
    conv_gathered_own(&j, in, g, cin, out);
    return true;
  }
  /* Not on Helium cores: the padded weights (1 KiB) on top of the gathered pairs' widened
   * rows took demo_int8 on the M55 to 7,696 of its 8 KiB stack; its Helium paths were
   * measured without this one. */
  if (FAST_PADDED && (max_runs(g, false) > 1 || j.fstride % 4 != 0) &&
      conv_padded(&j, in, g, cin, fin, groups, out))
    return true;
#if FAST_ONE_RUN
  if (groups > 1 && conv_groups_copied(&j, in, g, cin, fin, groups, out)) return true;
#endif
  const bool pairs = !FAST_PAIRS           ? false
                     : groups == 1 ? mak_window_pairs_fit(in_t, node->outputs[0], g, cin, cout)
                                 : mak_disjoint(in_t, node->outputs[0]);
  conv_windows(&j, in, g, cin, fin, groups, pairs, out);
  return true;
}

/* -------------------------------------- DEPTHWISE_CONV_2D of one input channel */

/* A depthwise convolution of one input channel (multiplier cout: person_detect's first layer,
 * micro_speech's) is a convolution of one input channel: output channel c's filter is the
 * depthwise filter's channel c, tap by tap. Its weights are transposed once per invoke into
 * rows of kh x kw bytes padded with zeros to a multiple of 4 (the padded taps of the gathered
 * windows hold the zero point: 0 after the offset, so they add nothing), and the windows take
 * the gathered path, in pixel pairs widened once, where input and output share no byte and
 * the filter rows are whole words (widen_pair then widens most windows from the input; with
 * 3-tap rows the byte copies cost more than the blocks of fast_depthwise_s8.c). Where the
 * widened rows pay: the DSP cores and the host build (which checks the logic). The weights and
 * conv_gathered's buffers share GATHER_SCRATCH bytes of stack. */
bool mak_fast_dw1_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *f_t = node->inputs[1], *bias_t = mak_input(node, 2);
  const int32_t cout = node->outputs[0]->dims[3], taps = g->kh * g->kw;
  const int32_t fs = (taps + 3) & ~3;
  if (!FAST_WIDE || !all_s8(node) || in_t->dims[3] != 1 || g->kw % 4 != 0 ||
      (int64_t)fs * cout + GATHER_BYTES(fs) > GATHER_SCRATCH || !offsets_ok(d->input_offset, d->output_offset) || d->input_offset < -127 ||
      d->input_offset > 128 || !mak_disjoint(in_t, node->outputs[0]))
    return false;
  uint32_t buf[GATHER_SCRATCH / 4];
  int8_t *w = (int8_t *)buf;
  const int8_t *f = f_t->data;
  for (int32_t c = 0; c < cout; ++c) {
    int8_t *row = w + (size_t)c * fs;
    for (int32_t t = 0; t < taps; ++t) row[t] = f[(size_t)t * cout + c];
    for (int32_t t = taps; t < fs; ++t) row[t] = 0;
  }
  rows_job j = {w,
                (size_t)fs,
                bias_t ? bias_t->data : NULL,
                d->mult,
                mak_conv_shifts(d),
                d->n_mult > 1,
                cout,
                d->input_offset,
                make_range(d->output_offset, d->act_min, d->act_max),
                false};
  j.fused_q = fused_q_fits(&j, d);
  conv_gathered(&j, in_t->data, g, 1, node->outputs[0]->data, w + fs * cout);
  return true;
}

/* ---------------------------------------------------------- FULLY_CONNECTED */

bool mak_fast_fc_s8(const mak_fc_s8_job *fc) {
  if (!FAST_ENABLED || !offsets_ok(fc->input_offset, fc->output_offset)) return false;
  /* A batch is a 1x1 convolution's pixel: one run of depth bytes, one weight row per unit. */
  const rows_job j = {fc->w,
                      (size_t)fc->depth,
                      fc->bias,
                      fc->mult,
                      fc->shift,
                      fc->n_mult > 1,
                      fc->units,
                      fc->input_offset,
                      make_range(fc->output_offset, fc->act_min, fc->act_max),
                      false};
  /* Batch pairs, as pixel pairs, where overlap.h's rule allows the offsets (mak_rows_pairs_fit
   * from the data pointers: the node's descriptors hold nothing else). */
  const intptr_t in = (intptr_t)fc->in, out = (intptr_t)fc->out;
  const int64_t rows = fc->batches;
  bool pairs = rows > 1 && (in + rows * fc->depth <= out || out + rows * fc->units <= in);
  if (rows > 1 && !pairs) { /* the rule's need costs a 64-bit division: only when overlapping */
    const int64_t need = mak_rows_pairs_need(rows, fc->depth, fc->units);
    pairs = need == MAK_ANY_OFFSET || in - out >= need;
  }
  matrix_rows(&j, fc->in, fc->depth, (size_t)rows, fc->out, pairs);
  return true;
}

bool mak_row_sums_s8(const int8_t *x, const int8_t *w, int32_t len, int32_t rows, int32_t off,
                     int32_t *s) {
  if (!FAST_ENABLED || !offsets_ok(off, 0)) return false;
  row_sums(x, len, w, (size_t)len, rows, off, s);
  return true;
}
