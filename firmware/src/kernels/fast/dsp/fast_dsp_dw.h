/* fast_depthwise_s8.c's steps (fast/fast_dw_steps.h names them) on the DSP extension (M4, M7,
 * M33, M55): each row's taps in assembly (fast/v7m/fast_v7m_dw_rows.h) with four channels'
 * inputs widened in pairs by SXTAB16 (the offset in both int16 lanes) and multiplied by SMLAxy;
 * the full int8 range clamped by QADD and SSAT; a pixel's per-channel requantization
 * (DW_REQUANT_RUN) and a whole 3 x 3 pixel of multiplier 1 (DW3X3_PIXEL) in one assembly call
 * each. */
#ifndef MA_FAST_DSP_DW_H
#define MA_FAST_DSP_DW_H

#include "fast/fast_dw_taps.h"
#include "kernel_util.h"

/* Multiplier 1, one tap: four inputs plus the offset times four weights into the four sums. */
#define DW_TAP(IN, F)                      \
  "ldr %[x], " IN "\n\t"                   \
  "ldr %[w], " F "\n\t"                    \
  "sxtab16 %[xe], %[off2], %[x]\n\t"       \
  "sxtab16 %[x], %[off2], %[x], ror #8\n\t" \
  "sxtb16 %[we], %[w]\n\t"                 \
  "sxtb16 %[w], %[w], ror #8\n\t"          \
  "smlabb %[a0], %[xe], %[we], %[a0]\n\t"  \
  "smlatt %[a2], %[xe], %[we], %[a2]\n\t"  \
  "smlabb %[a1], %[x], %[w], %[a1]\n\t"    \
  "smlatt %[a3], %[x], %[w], %[a3]\n\t"
/* Multiplier 4k, one tap: one input plus the offset times four weights into the four sums. */
#define DW_BTAP(IN, F)                   \
  "ldrsb %[x], " IN "\n\t"               \
  "ldr %[w], " F "\n\t"                  \
  "add %[x], %[x], %[off]\n\t"           \
  "sxtb16 %[we], %[w]\n\t"               \
  "sxtb16 %[w], %[w], ror #8\n\t"        \
  "smlabb %[a0], %[x], %[we], %[a0]\n\t" \
  "smlabt %[a2], %[x], %[we], %[a2]\n\t" \
  "smlabb %[a1], %[x], %[w], %[a1]\n\t"  \
  "smlabt %[a3], %[x], %[w], %[a3]\n\t"
#define DW_OFF2_T int16x2_t
#define DW_OFF2(off) (int16x2_t)(((uint32_t)(off) & 0xFFFFu) * 0x10001u)
#include "fast/v7m/fast_v7m_dw_rows.h" /* sums_quad, sums_bcast */

#define DW_TAPS_NOINLINE __attribute__((noinline)) /* its own registers for the sums and steps */
#define DW_TAP4 DW_TAP4_WORDS
#define DW_SHARED_ANY_WIDTH 0
#define DW_HAS_CLAMP
#define DW_RUNS 1

/* clamp_out, or where the activation range is all of int8 (full: ReLU and ReLU6 outputs of
 * zero point -128 too) a saturating add and an 8-bit saturation: the same value in two
 * instructions. */
static inline int8_t clamp_out_as(int32_t y, const out_range *r, bool full) {
  if (full) return (int8_t)__ssat(__qadd(y, r->offset), 8);
  return clamp_out(y, r);
}

/* requant_as for per-channel right shifts (-31 to -1) and the full int8 range, in assembly
 * (GCC 12 took 23 instructions per output; these 15 or 16). requant_right's constant
 * k = 2^(e-1) + (acc >> 31), e = -shift, gives the 64-bit addend (k << 31 | 2^30, k >> 1);
 * 2^(e-1) is 2^31 rotated right by the shift (ROR takes the amount mod 32: a rotation left by
 * e). Where every e is 2 or more, 2^(e-1) is even, so k's low bit is acc's sign and the addend
 * is ((acc & 2^31) | 2^30, 2^(e-2) + (acc >> 31)), 2^(e-2) being 2^30 rotated the same way:
 * one instruction less. Field order: the assembly's. n at least 1. */
typedef struct {
  const int32_t *acc, *mult;
  const int8_t *shift;
  int8_t *o, *o_end;
  int32_t offset;
} rq_job;

/* r8 acc, r9 multiplier, r10 shift then e - 1, r11 the power of two, r7 the power rotated. */
#define RQ_RUN(POWER, ADDEND) \
  __asm__( \
      "push {r4-r11, lr}\n\t" \
      "ldm r0, {r1-r6}\n\t" \
      "mov r7, #" POWER "\n\t" \
      "1:\n\t" \
      "ldr r8, [r1], #4\n\t" \
      "ldr r9, [r2], #4\n\t" \
      "ldrsb r10, [r3], #1\n\t" \
      "ror r11, r7, r10\n\t" \
      "mvn r10, r10\n\t" \
      ADDEND \
      "smlal r12, lr, r8, r9\n\t" \
      "asr lr, lr, r10\n\t" \
      "qadd lr, lr, r6\n\t" \
      "ssat lr, #8, lr\n\t" \
      "strb lr, [r4], #1\n\t" \
      "cmp r4, r5\n\t" \
      "bne 1b\n\t" \
      "pop {r4-r11, pc}")
/* Any e: k in r11, then the addend in r12 (low) and lr (high). */
__attribute__((naked, noinline)) static void requant_run_dsp(const rq_job *j
                                                             __attribute__((unused))) {
  RQ_RUN("0x80000000",
         "add r11, r11, r8, asr #31\n\t"
         "lsl r12, r11, #31\n\t"
         "orr r12, r12, #0x40000000\n\t"
         "asr lr, r11, #1\n\t");
}
/* Every e at least 2. */
__attribute__((naked, noinline)) static void requant_run2_dsp(const rq_job *j
                                                              __attribute__((unused))) {
  RQ_RUN("0x40000000",
         "and r12, r8, #0x80000000\n\t"
         "orr r12, r12, #0x40000000\n\t"
         "add lr, r11, r8, asr #31\n\t");
}
#undef RQ_RUN

/* The requantization of acc[0..n-1] into o, output channels c0.., where
 * fast_depthwise_s8.c's requant_run_fits gives run 1 or 2. A statement, not an inline function:
 * the call changed GCC 12's register allocation of its caller. */
#define DW_REQUANT_RUN(acc, n, d, c0, r, o, run)                                          \
  do {                                                                                    \
    const rq_job j = {(acc), (d)->mult + (c0), mak_conv_shifts(d) + (c0), (o), (o) + (n), \
                      (r)->offset};                                                       \
    if ((run) == 2)                                                                       \
      requant_run2_dsp(&j);                                                               \
    else                                                                                  \
      requant_run_dsp(&j);                                                                \
  } while (0)

/* A whole output pixel of a 3 x 3 window inside the input, multiplier 1, no dilation, in one
 * assembly call: per four channels the biases, the nine taps (DW_TAP's ten instructions each),
 * then requant_run_dsp's steps and the four bytes stored (about 43 instructions per output,
 * against 48-70 through block_sums and requant_block: their calls and the sums' round trip
 * through the stack cost most on layers of few channels). Field order: the assembly's (the job
 * is copied to the frame whole). */
typedef struct {
  const int8_t *in, *f; /* the window's first tap, channel 0 */
  int32_t col;          /* the channels: a tap's step in input and filter */
  int32_t in_row, f_row;
  const int32_t *bias, *mult;
  const int8_t *shift;
  int8_t *o, *o_end; /* the pixel's outputs, o_end = o + channels (a multiple of 4) */
  uint32_t off2;     /* the input offset in both int16 lanes */
  int32_t offset;    /* the output offset */
} dwp_job;

/* One tap of four channels: input r8 (then odd lanes), weights r9, even lanes r10/r11. */
#define DWP_TAP(IN, F) \
  "ldr r8, " IN "\n\t" \
  "ldr r9, " F "\n\t" \
  "sxtab16 r10, r3, r8\n\t" \
  "sxtab16 r8, r3, r8, ror #8\n\t" \
  "sxtb16 r11, r9\n\t" \
  "sxtb16 r9, r9, ror #8\n\t" \
  "smlabb r4, r10, r11, r4\n\t" \
  "smlatt r6, r10, r11, r6\n\t" \
  "smlabb r5, r8, r9, r5\n\t" \
  "smlatt r7, r8, r9, r7\n\t"
#define DWP_ROW DWP_TAP("[r0]", "[r1]") DWP_TAP("[r0, r2]", "[r1, r2]") \
  DWP_TAP("[r0, r2, lsl #1]", "[r1, r2, lsl #1]")
/* Sum A of the channel whose multiplier is M and shift byte K of r9: requant_right_dsp. */
#define DWP_RQ(A, M, K) \
  "sbfx r10, r9, #" K ", #8\n\t" \
  "mov r11, #0x80000000\n\t" \
  "ror r11, r11, r10\n\t" \
  "mvn r10, r10\n\t" \
  "add r11, r11, " A ", asr #31\n\t" \
  "lsl r12, r11, #31\n\t" \
  "orr r12, r12, #0x40000000\n\t" \
  "asr lr, r11, #1\n\t" \
  "smlal r12, lr, " A ", " M "\n\t" \
  "asr " A ", lr, r10\n\t" \
  "qadd " A ", " A ", r8\n\t" \
  "ssat " A ", #8, " A "\n\t"

_Static_assert(sizeof(dwp_job) == 48 && offsetof(dwp_job, offset) == 44, "dw3x3_pixel_dsp's frame");
__attribute__((naked, noinline)) static void dw3x3_pixel_dsp(const dwp_job *j
                                                             __attribute__((unused))) {
  __asm__(
      "push {r4-r11, lr}\n\t"
      "sub sp, sp, #48\n\t"
      "ldm r0, {r1-r12}\n\t"
      "stm sp, {r1-r12}\n\t"
      "1:\n\t"
      "ldr r8, [sp, #20]\n\t"
      "ldm r8!, {r4-r7}\n\t"
      "str r8, [sp, #20]\n\t"
      "ldrd r0, r1, [sp]\n\t"
      "add r8, r0, #4\n\t"
      "add r9, r1, #4\n\t"
      "strd r8, r9, [sp]\n\t"
      "ldrd r2, r12, [sp, #8]\n\t"
      "ldr lr, [sp, #16]\n\t"
      "ldr r3, [sp, #40]\n\t"
      DWP_ROW
      "add r0, r0, r12\n\t"
      "add r1, r1, lr\n\t"
      DWP_ROW
      "add r0, r0, r12\n\t"
      "add r1, r1, lr\n\t"
      DWP_ROW
      "ldr r8, [sp, #24]\n\t"
      "ldm r8!, {r0-r3}\n\t"
      "str r8, [sp, #24]\n\t"
      "ldr r8, [sp, #28]\n\t"
      "ldr r9, [r8], #4\n\t"
      "str r8, [sp, #28]\n\t"
      "ldr r8, [sp, #44]\n\t"
      DWP_RQ("r4", "r0", "0") DWP_RQ("r5", "r1", "8") DWP_RQ("r6", "r2", "16")
      DWP_RQ("r7", "r3", "24")
      "ldr r0, [sp, #32]\n\t"
      "strb r4, [r0]\n\t"
      "strb r5, [r0, #1]\n\t"
      "strb r6, [r0, #2]\n\t"
      "strb r7, [r0, #3]\n\t"
      "add r0, r0, #4\n\t"
      "str r0, [sp, #32]\n\t"
      "ldr r1, [sp, #36]\n\t"
      "cmp r0, r1\n\t"
      "bne 1b\n\t"
      "add sp, sp, #48\n\t"
      "pop {r4-r11, pc}");
}
#undef DWP_TAP
#undef DWP_ROW
#undef DWP_RQ

/* dw3x3_pixel_dsp of the pixel of taps t (a taps value) into o; off2: the input offset in
 * both int16 lanes, offset: the output offset. A statement, as DW_REQUANT_RUN. */
#define DW3X3_PIXEL(t, cout, bias, d, o, off2, offset)                                        \
  do {                                                                                        \
    const dwp_job j = {(t).in, (t).f, (cout), (int32_t)(t).in_row, (int32_t)(t).f_row, (bias), \
                       (d)->mult, mak_conv_shifts(d), (o), (o) + (cout), (off2), (offset)};    \
    dw3x3_pixel_dsp(&j);                                                                      \
  } while (0)

#endif
