/* fast_s8.c's steps with the DSP extension (Armv7E-M and Armv8-M Mainline with DSP:
 * Cortex-M4, M7, M33, M55), included by fast/fast_s8_steps.h only.
 *
 * The inner loops take four int8 values per 32-bit load: SXTAB16 widens an input word to two
 * int16 pairs with the input offset added, SXTB16 a weight word, and SMLAD multiplies and
 * accumulates a pair of pairs. The channel loops' frames are Armv7-M's
 * (fast/v7m/fast_v7m_s8_frames.h) with these inner steps. Pixel pairs first widen both input
 * rows once into int16 pairs on the stack (widen_rows; FAST_WIDE), so that every channel pair
 * loads them with one LDM; where the requantization allows (fused_q) it runs in the same
 * loop (wide_q_dsp: SMLAL, QADD and SSAT; FAST_WIDE_Q). */
#ifndef MA_FAST_DSP_S8_H
#define MA_FAST_DSP_S8_H

/* acc[r] += sum_i w[r * ws + i] * (x[i] + off) for the four weight rows r. Not inlined: its
 * assembly loop needs 13 registers, more than a caller leaves free. */
#define S8_HAS_DOT4 1
__attribute__((noinline))
static void dot4(const int8_t *x, const int8_t *w, size_t ws, int32_t n, int32_t off,
                 int32_t acc[4]) {
  const int8_t *w0 = w, *w1 = w + ws, *w2 = w1 + ws, *w3 = w2 + ws;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  int32_t i = 0;
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

/* Two weight words (r2, r3 rows) widened once, each against both rows' widened inputs
 * (r8-r11): the 2 x 2 block's sums r4-r7. Shared by MAC2X2_HALF and WIDE_HALF. */
#define WEIGHTS_2X2 \
  "ldr r12, [r2], #4\n\t" \
  "sxtb16 lr, r12\n\t" \
  "smlad r4, lr, r8, r4\n\t" \
  "smlad r5, lr, r10, r5\n\t" \
  "sxtb16 r12, r12, ror #8\n\t" \
  "smlad r4, r12, r9, r4\n\t" \
  "smlad r5, r12, r11, r5\n\t" \
  "ldr r12, [r3], #4\n\t" \
  "sxtb16 lr, r12\n\t" \
  "smlad r6, lr, r8, r6\n\t" \
  "smlad r7, lr, r10, r7\n\t" \
  "sxtb16 r12, r12, ror #8\n\t" \
  "smlad r6, r12, r9, r6\n\t" \
  "smlad r7, r12, r11, r7\n\t"

/* Four values of the 2x2 block (fast_v7m_s8_frames.h's mac2x2_dsp and pairs loops). */
#define MAC2X2_HALF \
  "ldr lr, [sp, #4]\n\t" \
  "ldr r12, [r0], #4\n\t" \
  "sxtab16 r8, lr, r12\n\t" \
  "sxtab16 r9, lr, r12, ror #8\n\t" \
  "ldr r12, [r1], #4\n\t" \
  "sxtab16 r10, lr, r12\n\t" \
  "sxtab16 r11, lr, r12, ror #8\n\t" \
  WEIGHTS_2X2

/* quads_sums_dsp's loop (fast_v7m_s8_frames.h). */
#define QUADS_OFFSET "mov r12, r10\n\t"
#define QUADS_STEP \
  "ldr r10, [r0], #4\n\t" \
  "sxtab16 r8, r12, r10\n\t" \
  "sxtab16 r9, r12, r10, ror #8\n\t" \
  "ldr r10, [r1, r3]\n\t" \
  "sxtb16 r11, r10\n\t" \
  "smlad r5, r11, r8, r5\n\t" \
  "sxtb16 r10, r10, ror #8\n\t" \
  "smlad r5, r10, r9, r5\n\t" \
  "ldr r10, [r1], #4\n\t" \
  "sxtb16 r11, r10\n\t" \
  "smlad r4, r11, r8, r4\n\t" \
  "sxtb16 r10, r10, ror #8\n\t" \
  "smlad r4, r10, r9, r4\n\t" \
  "ldr r10, [r2, r3]\n\t" \
  "sxtb16 r11, r10\n\t" \
  "smlad r7, r11, r8, r7\n\t" \
  "sxtb16 r10, r10, ror #8\n\t" \
  "smlad r7, r10, r9, r7\n\t" \
  "ldr r10, [r2], #4\n\t" \
  "sxtb16 r11, r10\n\t" \
  "smlad r6, r11, r8, r6\n\t" \
  "sxtb16 r10, r10, ror #8\n\t" \
  "smlad r6, r10, r9, r6\n\t"
/* Sixteen values per pass (the loop end compared once per sixteen). A row of 4 (k + 4 m)
 * values, k in 1..3, takes its first pass from step 4 - k: QUADS_ENTRY, once per call, finds
 * that step's address from the first two steps' (the steps are the same instructions, so the
 * same size) and keeps it at [sp, #16], and each block jumps there with one LDR to PC (an
 * interworking load: the address has its Thumb bit set). */
#define QUADS_FRAME "24"
#define QUADS_ENTRY \
  "sub r12, r4, r5\n\t" \
  "and r12, r12, #12\n\t" \
  "lsr r12, r12, #2\n\t" \
  "adr.w r0, 1f\n\t" \
  "adr.w r1, 4f\n\t" \
  "sub r1, r1, r0\n\t" \
  "mla r0, r12, r1, r0\n\t" \
  "orr r0, r0, #1\n\t" \
  "str r0, [sp, #16]\n\t"
#define QUADS_LOOP \
  "ldr pc, [sp, #16]\n\t" \
  "1:\n\t" \
  QUADS_STEP \
  "4:\n\t" \
  QUADS_STEP \
  QUADS_STEP \
  QUADS_STEP \
  "cmp r0, lr\n\t" \
  "bne 1b\n\t"

#include "fast/v7m/fast_v7m_s8_frames.h"

/* requant_c's clamp with `full` (a constant where inlined): the activation range is all of
 * int8, where on the DSP the offset is added saturating and SSAT clamps, the same value (a sum
 * past int32 was past the range before). */
#define S8_HAS_REQUANT_CF 1
static inline int8_t requant_cf(int32_t acc, const chan_q *c, const out_range *r, bool full) {
  if (full) {
    const int32_t y = c->half ? REQUANT_RIGHT(acc, c->mult, c->amount, c->half)
                              : requant_left(acc, c->mult, c->amount);
    return (int8_t)__ssat(__qadd(y, r->offset), 8);
  }
  return requant_c(acc, c, r);
}

#define S8_HAS_EVEN_ROW 1
/* requant_right for an even half (e >= 2, quarter = half / 2) in one instruction fewer: k =
 * half + (acc >> 31) has the sign's low bit, so requant_right's low word is acc's sign bit
 * and 2^30, its high word k >> 1 = quarter + (acc >> 31). */
static inline int32_t requant_right_even(int32_t acc, int32_t mult, int32_t e_minus_1,
                                         int32_t quarter) {
  uint32_t lo = ((uint32_t)acc & UINT32_C(0x80000000)) | UINT32_C(0x40000000);
  int32_t hi = quarter + (acc >> 31);
  __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(acc), "r"(mult));
  return hi >> e_minus_1;
}

/* requant_as's loop for one row, per-tensor constants of an even half: no test of the
 * shift's sign per output (GCC kept it in the loop). */
static inline __attribute__((always_inline)) void requant_even_row(
    const chan_q *c, const out_range *r, int32_t n, const int32_t *s, const int32_t *bias,
    int8_t *o, bool full) {
  const int32_t quarter = c->half >> 1;
  for (int32_t k = 0; k < n; ++k) {
    const int32_t y = requant_right_even(wrap_add(s[k], bias[k]), c->mult, c->amount, quarter);
    if (full) {
      o[k] = (int8_t)__ssat(__qadd(y, r->offset), 8);
      continue;
    }
    o[k] = clamp_out(y, r);
  }
}

/* The widened rows' steps (FAST_WIDE). */
#define S8_HAS_WIDE 1
/* The two int16 lanes of a word: even (bytes 0 and 2) or odd (1 and 3) bytes plus the offset. */
static inline uint32_t widen_even(uint32_t v, uint32_t off2) {
  return (uint32_t)__sxtab16((int16x2_t)off2, (int8x4_t)v);
}
static inline uint32_t widen_odd(uint32_t v, uint32_t off2) {
  return (uint32_t)sxtab16_ror8((int16x2_t)off2, v);
}

/* acc plus the products of the int16 lanes of w and x (SMLAD, wrapping). */
static inline int32_t lanes_mac(int32_t acc, uint32_t w, uint32_t x) {
  return __smlad((int16x2_t)w, (int16x2_t)x, acc);
}

/* n values (a multiple of 4) of x0 and of x0 + xd into wb, widened and interleaved; returns
 * the end of what it wrote. */
static uint32_t *widen_rows(const int8_t *x0, ptrdiff_t xd, int32_t n, uint32_t off2,
                            uint32_t *wb) {
  if (n > 0) { /* in assembly: two STRDs per four values where GCC stores word by word */
    const int8_t *x1 = x0 + xd, *end = x0 + n;
    uint32_t a, b, e, o;
    __asm__ volatile(
        "1:\n\t"
        "ldr %[a], [%[x0]], #4\n\t"
        "ldr %[b], [%[x1]], #4\n\t"
        "sxtab16 %[e], %[off2], %[a]\n\t"
        "sxtab16 %[o], %[off2], %[a], ror #8\n\t"
        "strd %[e], %[o], [%[wb]], #8\n\t"
        "sxtab16 %[e], %[off2], %[b]\n\t"
        "sxtab16 %[o], %[off2], %[b], ror #8\n\t"
        "strd %[e], %[o], [%[wb]], #8\n\t"
        "cmp %[x0], %[end]\n\t"
        "bne 1b"
        : [x0] "+&r"(x0), [x1] "+&r"(x1), [wb] "+&r"(wb), [a] "=&r"(a), [b] "=&r"(b),
          [e] "=&r"(e), [o] "=&r"(o)
        : [off2] "r"(off2), [end] "r"(end)
        : "cc", "memory");
  }
  return wb;
}

/* Four values: one LDM of the widened words (r8-r11), each weight word widened once and
 * serving both rows; sums r4-r7 as pairs_sums'. */
#define WIDE_HALF \
  "ldm r0!, {r8-r11}\n\t" \
  WEIGHTS_2X2

_Static_assert(offsetof(wide_job, wstep) == 24, "wide_sums_dsp's offsets");
/* Eight values per pass, entered at its second half when n is 4 more than a multiple of 8;
 * the frame [sp] holds wb, out, pairs left, wstep; wb's end in r1. Each pair's sums start as
 * INIT sets r4-r7. */
#define WIDE_SUMS_ASM(INIT) \
  __asm__( \
      "push {r4-r11, lr}\n\t" \
      "ldm r0, {r4-r10}\n\t" \
      "sub sp, sp, #16\n\t" \
      "str r4, [sp]\n\t" \
      "str r8, [sp, #4]\n\t" \
      "str r9, [sp, #8]\n\t" \
      "str r10, [sp, #12]\n\t" \
      "mov r1, r5\n\t" \
      "mov r2, r6\n\t" \
      "add r3, r6, r7\n\t" \
      "2:\n\t" \
      "ldr r0, [sp]\n\t" \
      INIT \
      "sub r12, r1, r0\n\t" \
      "tst r12, #16\n\t" \
      "bne 4f\n\t" \
      "1:\n\t" \
      WIDE_HALF \
      "4:\n\t" \
      WIDE_HALF \
      "cmp r0, r1\n\t" \
      "bne 1b\n\t" \
      "ldr r12, [sp, #4]\n\t" \
      "stmia r12!, {r4-r7}\n\t" \
      "str r12, [sp, #4]\n\t" \
      "ldr r12, [sp, #12]\n\t" \
      "add r2, r2, r12\n\t" \
      "add r3, r3, r12\n\t" \
      "ldr r12, [sp, #8]\n\t" \
      "subs r12, r12, #1\n\t" \
      "str r12, [sp, #8]\n\t" \
      "bne 2b\n\t" \
      "add sp, sp, #16\n\t" \
      "pop {r4-r11, pc}")

/* The sums from zero. */
__attribute__((naked, noinline)) static void wide_sums_dsp(const wide_job *p
                                                           __attribute__((unused))) {
  WIDE_SUMS_ASM("movs r4, #0\n\t"
                "movs r5, #0\n\t"
                "movs r6, #0\n\t"
                "movs r7, #0\n\t");
}

/* The sums added to those in out (a window widened part by part: rows2_parts). */
__attribute__((naked, noinline)) static void wide_acc_dsp(const wide_job *p
                                                          __attribute__((unused))) {
  WIDE_SUMS_ASM("ldr r12, [sp, #4]\n\t"
                "ldm r12, {r4-r7}\n\t");
}
#undef WIDE_SUMS_ASM

/* wide_sums with the requantization in the same loop, for rows_job.fused_q: each pair's sums
 * start from its channels' biases and are requantized as requant_right_dsp and requant_cf's
 * full clamp, then stored (channel c of the first row at o0 + c, of the second at o0 + od + c).
 * Field order: the assembly's (the job is copied to the frame whole). */
typedef struct {
  const uint32_t *wb, *wb_end;
  const int8_t *w0;
  int32_t ws;
  int8_t *o0;
  int32_t pairs;
  int32_t wstep;
  const int32_t *bias, *mult;
  const int8_t *shift;
  int32_t od, offset;
} wideq_job;

/* One sum A requantized with multiplier M and amount E (e - 1), half 2^E in r0. */
#define WIDE_RQ(A, M, E) \
  "add r12, r0, " A ", asr #31\n\t" \
  "lsl lr, r12, #31\n\t" \
  "orr lr, lr, #0x40000000\n\t" \
  "asr r12, r12, #1\n\t" \
  "smlal lr, r12, " A ", " M "\n\t" \
  "asr " A ", r12, " E "\n\t"
#define WIDE_OUT(A) \
  "qadd " A ", " A ", r8\n\t" \
  "ssat " A ", #8, " A "\n\t"

_Static_assert(sizeof(wideq_job) == 48 && offsetof(wideq_job, offset) == 44,
               "wide_q_dsp's frame");
__attribute__((naked, noinline)) static void wide_q_dsp(const wideq_job *p
                                                        __attribute__((unused))) {
  __asm__(
      "push {r4-r11, lr}\n\t"
      "sub sp, sp, #48\n\t"
      "ldm r0, {r1-r12}\n\t"
      "stm sp, {r1-r12}\n\t"
      "ldr r1, [sp, #4]\n\t"
      "ldr r2, [sp, #8]\n\t"
      "ldr r3, [sp, #12]\n\t"
      "add r3, r2, r3\n\t"
      "2:\n\t"
      "ldr r0, [sp, #28]\n\t"
      "ldr r4, [r0], #4\n\t"
      "ldr r6, [r0], #4\n\t"
      "str r0, [sp, #28]\n\t"
      "mov r5, r4\n\t"
      "mov r7, r6\n\t"
      "ldr r0, [sp]\n\t"
      "sub r12, r1, r0\n\t"
      "tst r12, #16\n\t"
      "bne 4f\n\t"
      "1:\n\t"
      WIDE_HALF
      "4:\n\t"
      WIDE_HALF
      "cmp r0, r1\n\t"
      "bne 1b\n\t"
      "ldr r0, [sp, #32]\n\t"
      "ldr r8, [r0], #4\n\t"
      "ldr r9, [r0], #4\n\t"
      "str r0, [sp, #32]\n\t"
      "ldr r0, [sp, #36]\n\t"
      "ldrsb r10, [r0], #1\n\t"
      "ldrsb r11, [r0], #1\n\t"
      "str r0, [sp, #36]\n\t"
      "mvn r10, r10\n\t"
      "mvn r11, r11\n\t"
      "mov r0, #1\n\t"
      "lsl r0, r0, r10\n\t"
      WIDE_RQ("r4", "r8", "r10")
      WIDE_RQ("r5", "r8", "r10")
      "mov r0, #1\n\t"
      "lsl r0, r0, r11\n\t"
      WIDE_RQ("r6", "r9", "r11")
      WIDE_RQ("r7", "r9", "r11")
      "ldr r8, [sp, #44]\n\t"
      WIDE_OUT("r4") WIDE_OUT("r5") WIDE_OUT("r6") WIDE_OUT("r7")
      "ldr r0, [sp, #16]\n\t"
      "ldr r9, [sp, #40]\n\t"
      "strb r4, [r0]\n\t"
      "strb r5, [r0, r9]\n\t"
      "add r0, r0, #1\n\t"
      "strb r6, [r0]\n\t"
      "strb r7, [r0, r9]\n\t"
      "add r0, r0, #1\n\t"
      "str r0, [sp, #16]\n\t"
      "ldr r12, [sp, #24]\n\t"
      "add r2, r2, r12\n\t"
      "add r3, r3, r12\n\t"
      "ldr r12, [sp, #20]\n\t"
      "subs r12, r12, #1\n\t"
      "str r12, [sp, #20]\n\t"
      "bne 2b\n\t"
      "add sp, sp, #48\n\t"
      "pop {r4-r11, pc}");
}
#undef WIDE_RQ
#undef WIDE_OUT
#undef WIDE_HALF

/* wide_job's sums, from zero or (acc) added to those in out. */
static void wide_sums(const wide_job *p, bool acc) {
  if (acc)
    wide_acc_dsp(p);
  else
    wide_sums_dsp(p);
}

/* rows2_widened's channel pairs, their requantization fused (rows_job.fused_q): from the
 * widened rows wb to end, filter offset f0, the even channels' outputs. */
static inline void wide_q(const rows_job *j, const uint32_t *wb, const uint32_t *end, int32_t f0,
                          int32_t even, int32_t wstep, int8_t *o0, int8_t *o1) {
  const wideq_job q = {wb,      end,     j->f + f0, (int32_t)j->fstride, o0,
                       even / 2, wstep,  j->bias,        j->mult,             j->shift,
                       (int32_t)(o1 - o0), j->r.offset};
  wide_q_dsp(&q);
}

#endif
