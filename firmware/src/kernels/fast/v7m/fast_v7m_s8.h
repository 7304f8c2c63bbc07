/* fast_s8.c's steps on Armv7-M without the DSP extension (Cortex-M3), included by
 * fast/fast_s8_steps.h only.
 *
 * The M3 has no SXTAB16 or SMLAD to take a word's four int8 values at once, but LDRSB with a
 * post-increment and MLA: its loops load one byte per LDRSB and multiply with MLA, each input
 * plus the offset serving two or four weights (MAC2X2_HALF, QUADS_STEP, dot4), in the Thumb-2
 * frames it shares with the DSP (fast_v7m_s8_frames.h). Pixel pairs of one-run and uniform
 * windows take their values plus the offset from a buffer of int32 pairs (rows2_v7m: one LDM
 * gives two values of both rows), and gather copies every run with memcpy
 * (fast/fast_s8_steps.h: FAST_WIDE32, FAST_MEMCPY_RUNS). */
#ifndef MA_FAST_V7M_S8_H
#define MA_FAST_V7M_S8_H

/* One input value of dot4 on the M3: plus the offset, times the four rows' weights. */
#define DOT4_V7M_STEP \
  "ldrsb %[t], [%[x]], #1\n\t" \
  "add %[t], %[t], %[off]\n\t" \
  "ldrsb %[u], [%[wa], %[ws]]\n\t" \
  "mla %[a1], %[u], %[t], %[a1]\n\t" \
  "ldrsb %[u], [%[wa]], #1\n\t" \
  "mla %[a0], %[u], %[t], %[a0]\n\t" \
  "ldrsb %[u], [%[wb], %[ws]]\n\t" \
  "mla %[a3], %[u], %[t], %[a3]\n\t" \
  "ldrsb %[u], [%[wb]], #1\n\t" \
  "mla %[a2], %[u], %[t], %[a2]\n\t"

/* acc[r] += sum_i w[r * ws + i] * (x[i] + off) for the four weight rows r. Not inlined: its
 * assembly loop needs 13 registers, more than a caller leaves free. */
#define S8_HAS_DOT4 1
__attribute__((noinline))
static void dot4(const int8_t *x, const int8_t *w, size_t ws, int32_t n, int32_t off,
                 int32_t acc[4]) {
  const int8_t *w0 = w, *w1 = w + ws, *w2 = w1 + ws, *w3 = w2 + ws;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t i = 0;
  if (n >= 4) { /* one byte per LDRSB, the input plus offset serving four MLAs */
    const int8_t *xq = x, *x_end = x + (n & ~3), *wa = w0, *wb = w2;
    int32_t t, u;
    __asm__(
        "1:\n\t"
        DOT4_V7M_STEP DOT4_V7M_STEP DOT4_V7M_STEP DOT4_V7M_STEP
        "ldr %[u], %[end]\n\t"
        "cmp %[x], %[u]\n\t"
        "bne 1b"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(xq),
          [wa] "+r"(wa), [wb] "+r"(wb), [t] "=&r"(t), [u] "=&r"(u)
        : [ws] "r"(ws), [off] "r"(off), [end] "m"(x_end)
        : "cc", "memory");
    i = n & ~3;
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

/* Four values of the 2x2 block (fast_v7m_s8_frames.h's mac2x2_dsp and pairs loops). On the
 * M3 one byte per LDRSB (the offset, sign-extended from the pair's low lane, in lr):
 * each input plus offset serves two MLAs, each weight two. */
#define MAC2X2_V7M_STEP \
  "ldrsb r8, [r0], #1\n\t" \
  "ldrsb r9, [r1], #1\n\t" \
  "add r8, r8, lr\n\t" \
  "add r9, r9, lr\n\t" \
  "ldrsb r10, [r2], #1\n\t" \
  "ldrsb r11, [r3], #1\n\t" \
  "mla r4, r10, r8, r4\n\t" \
  "mla r5, r10, r9, r5\n\t" \
  "mla r6, r11, r8, r6\n\t" \
  "mla r7, r11, r9, r7\n\t"
#define MAC2X2_HALF \
  "ldrsh lr, [sp, #4]\n\t" \
  MAC2X2_V7M_STEP MAC2X2_V7M_STEP MAC2X2_V7M_STEP MAC2X2_V7M_STEP

/* The offset pair's low lane, sign-extended, in r12; four input values, each plus the offset
 * serving the four rows' MLAs (r8 the input, r10 a weight). */
#define QUADS_OFFSET "sxth r12, r10\n\t"
#define QUADS_V7M_ONE \
  "ldrsb r8, [r0], #1\n\t" \
  "add r8, r8, r12\n\t" \
  "ldrsb r10, [r1, r3]\n\t" \
  "mla r5, r10, r8, r5\n\t" \
  "ldrsb r10, [r1], #1\n\t" \
  "mla r4, r10, r8, r4\n\t" \
  "ldrsb r10, [r2, r3]\n\t" \
  "mla r7, r10, r8, r7\n\t" \
  "ldrsb r10, [r2], #1\n\t" \
  "mla r6, r10, r8, r6\n\t"
#define QUADS_STEP QUADS_V7M_ONE QUADS_V7M_ONE QUADS_V7M_ONE QUADS_V7M_ONE
#define QUADS_FRAME "16"
#define QUADS_ENTRY
#define QUADS_LOOP \
  "1:\n\t" \
  QUADS_STEP \
  "cmp r0, lr\n\t" \
  "bne 1b\n\t"

#include "fast/v7m/fast_v7m_s8_frames.h"

/* On the M3, rows2's one-run and uniform windows take their values plus the offset from a
 * buffer of int32 pairs (x0[i], x1[i]), V7M_CHUNK values at a time, filled once per chunk of
 * channels: one LDM then gives two values of both rows, and each weight's LDRSB serves two
 * MLAs with no add of the offset: 28 instructions per 16 multiply-accumulates against 41 for
 * MAC2X2_V7M_STEP's (256 bytes of stack). */
enum { V7M_CHUNK = 32 };
/* Fewer output channels do not pay for the widening (conv_options' 6: 485,840 -> 496,880
 * instructions per invoke). */
enum { WIDE32_MIN_COUT = 8 };

/* The sums of `pairs` channel pairs over one chunk of n values (n a multiple of 4), added to
 * s (four per pair, pairs_sums' order): the first pair's weight rows at w0 and w0 + ws, the
 * next pair's wstep further. Field order: the assembly's. */
typedef struct {
  const int32_t *x, *x_end; /* the widened pairs: 2n words */
  const int8_t *w0;
  int32_t ws, wstep;
  int32_t *s;
  int32_t pairs;
} wide2x2_job;

/* Two values of both rows (r8-r11) against the two weight rows (r12: row 0, lr: row 1). */
#define WIDE2X2_V7M_TWO \
  "ldm r0!, {r8-r11}\n\t" \
  "ldrsb r12, [r1], #1\n\t" \
  "ldrsb lr, [r2], #1\n\t" \
  "mla r4, r12, r8, r4\n\t" \
  "mla r5, r12, r9, r5\n\t" \
  "mla r6, lr, r8, r6\n\t" \
  "mla r7, lr, r9, r7\n\t" \
  "ldrsb r12, [r1], #1\n\t" \
  "ldrsb lr, [r2], #1\n\t" \
  "mla r4, r12, r10, r4\n\t" \
  "mla r5, r12, r11, r5\n\t" \
  "mla r6, lr, r10, r6\n\t" \
  "mla r7, lr, r11, r7\n\t"

_Static_assert(offsetof(wide2x2_job, pairs) == 24, "wide2x2_v7m's offsets");
/* The frame: [sp] x, w0 of the pair, ws, wstep, s, pairs left; the sums in r4-r7, the
 * buffer's pointer and end in r0 and r3, the weight rows in r1 and r2. */
__attribute__((naked, noinline)) static void wide2x2_v7m(const wide2x2_job *j
                                                         __attribute__((unused))) {
  __asm__(
      "push {r4-r11, lr}\n\t"
      "sub sp, sp, #24\n\t"
      "ldm r0, {r1-r7}\n\t"
      "stm sp, {r1, r3-r7}\n\t"
      "mov r3, r2\n\t"
      "2:\n\t"
      "ldrd r0, r1, [sp]\n\t"
      "ldr r12, [sp, #8]\n\t"
      "add r2, r1, r12\n\t"
      "ldr r12, [sp, #16]\n\t"
      "ldm r12, {r4-r7}\n\t"
      "1:\n\t"
      WIDE2X2_V7M_TWO WIDE2X2_V7M_TWO
      "cmp r0, r3\n\t"
      "bne 1b\n\t"
      "ldr r12, [sp, #16]\n\t"
      "stmia r12!, {r4-r7}\n\t"
      "str r12, [sp, #16]\n\t"
      "ldrd r12, lr, [sp, #8]\n\t"
      "ldr r12, [sp, #4]\n\t"
      "add r12, r12, lr\n\t"
      "str r12, [sp, #4]\n\t"
      "ldr r12, [sp, #20]\n\t"
      "subs r12, r12, #1\n\t"
      "str r12, [sp, #20]\n\t"
      "bne 2b\n\t"
      "add sp, sp, #24\n\t"
      "pop {r4-r11, pc}");
}
#undef WIDE2X2_V7M_TWO

/* b[2i] = x0[i] + off, b[2i + 1] = x0[i + xd] + off for i < n. */
static void widen2_v7m(const int8_t *x0, ptrdiff_t xd, int32_t n, int32_t off, int32_t *b) {
  for (int32_t i = 0; i < n; ++i, b += 2) {
    b[0] = x0[i] + off;
    b[1] = x0[i + xd] + off;
  }
}

typedef struct {
  int32_t xb[2 * V7M_CHUNK]; /* the widened values */
  int32_t s[4 * PAIRS];      /* a chunk of channel pairs' sums */
} wide32_buffers;

/* rows2 for windows in nr runs like `first` (n bytes, a multiple of 4, `row` apart in the
 * input, back to back in the filter) on the M3: per chunk of channel pairs, the window chunk
 * by chunk of values, each widened then multiplied by every pair's weights (a window of one
 * chunk is widened once); an odd count's last channel from the input. The input is read whole
 * for each chunk of channels before its outputs are written, as rows2_runs does. */
__attribute__((noinline)) static void rows2_v7m_in(const rows_job *j, const run *first,
                                                   int32_t nr, ptrdiff_t row, ptrdiff_t xd,
                                                   int8_t *o0, int8_t *o1, wide32_buffers *b) {
  int32_t *xb = b->xb, *s = b->s;
  const int32_t n = first->n, even = j->cout & ~1;
  const bool once = nr == 1 && n <= V7M_CHUNK;
  if (once) widen2_v7m(first->in, xd, n, j->off, xb);
  for (int32_t oc = 0; oc < even; oc += 2 * PAIRS) {
    const int32_t np = (even - oc) / 2 < PAIRS ? (even - oc) / 2 : PAIRS;
    const int8_t *w = j->f + oc * j->fstride + first->f;
    memset(s, 0, (size_t)np * 4 * sizeof *s);
    for (int32_t i = 0; i < nr; ++i) {
      for (int32_t k = 0; k < n; k += V7M_CHUNK) {
        const int32_t len = n - k < V7M_CHUNK ? n - k : V7M_CHUNK;
        if (!once) widen2_v7m(first->in + i * row + k, xd, len, j->off, xb);
        const wide2x2_job q = {xb, xb + 2 * len, w + i * n + k, (int32_t)j->fstride,
                               (int32_t)(2 * j->fstride), s, np};
        wide2x2_v7m(&q);
      }
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

/* rows2_v7m_in with buffers of its own. Not inlined: they stay off its callers' stack (but for
 * conv_windows', which lends the room of its runs). */
__attribute__((noinline)) static void rows2_v7m(const rows_job *j, const run *first, int32_t nr,
                                                ptrdiff_t row, ptrdiff_t xd, int8_t *o0,
                                                int8_t *o1) {
  wide32_buffers b;
  rows2_v7m_in(j, first, nr, row, xd, o0, o1, &b);
}

/* fast_s8.c's names of this form (FAST_WIDE32): rows2's, and conv_windows' with the buffers in
 * its frame. */
static inline void rows2_wide32(const rows_job *j, const run *first, int32_t nr, ptrdiff_t row,
                                ptrdiff_t xd, int8_t *o0, int8_t *o1) {
  rows2_v7m(j, first, nr, row, xd, o0, o1);
}

static inline void rows2_wide32_in(const rows_job *j, const run *first, int32_t nr,
                                   ptrdiff_t row, ptrdiff_t xd, int8_t *o0, int8_t *o1,
                                   wide32_buffers *b) {
  rows2_v7m_in(j, first, nr, row, xd, o0, o1, b);
}

#endif
