/* The Thumb-2 frames of fast_s8.c's channel loops, shared by Armv7-M (Cortex-M3:
 * fast/v7m/fast_v7m_s8.h) and the DSP extension (Armv7E-M and v8-M Mainline: fast/dsp/
 * fast_dsp_s8.h), which include it after defining the inner steps the frames repeat:
 * MAC2X2_HALF (four values of the 2 x 2 block) and QUADS_OFFSET, QUADS_FRAME, QUADS_ENTRY,
 * QUADS_LOOP (quads_sums_dsp's loop). GCC 12 spills these loops to the stack in C: they need
 * all 14 free registers, so each is one naked function over a job whose fields it loads (field
 * order: the assembly's). The "_dsp" names are the loops' (both forms share them). */
#ifndef MA_FAST_V7M_S8_FRAMES_H
#define MA_FAST_V7M_S8_FRAMES_H

/* Four values of the 2x2 block in assembly: it needs all 14 free registers (sums r4-r7:
 * x0.w0, x1.w0, x0.w1, x1.w1; the input words as int16 pairs r8-r11; temporaries r12, lr;
 * pointers x0, x1, w0, w1 in r0-r3), so the loop end ([sp]) and the offset pair ([sp, #4])
 * stay on the stack. MAC2X2_LOOP: eight values per pass (the loop end read once per eight),
 * entered at its second half when the run's length is 4 more than a multiple of 8 (label 5:
 * a run's start). At least 4. */
#define MAC2X2_LOOP \
  "5:\n\t" \
  "ldr lr, [sp]\n\t" \
  "sub lr, lr, r0\n\t" \
  "tst lr, #4\n\t" \
  "bne 4f\n\t" \
  "1:\n\t" \
  MAC2X2_HALF \
  "4:\n\t" \
  MAC2X2_HALF \
  "ldr lr, [sp]\n\t" \
  "cmp r0, lr\n\t" \
  "bne 1b\n\t"

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
      MAC2X2_LOOP
      "ldr r0, [sp, #8]\n\t"
      "add r0, r0, #24\n\t"
      "stm r0, {r4-r7}\n\t"
      "add sp, sp, #12\n\t"
      "pop {r4-r11, pc}");
}

/* The 2 x 2 block's sums over n values: the first n & ~3 in assembly, the rest in C. */
#define S8_HAS_MAC2X2 1
static void mac2x2(block2x2 *b, int32_t n, int32_t off) {
  int32_t i = n & ~3;
  if (i > 0) mac2x2_dsp(b);
  for (; i < n; ++i) {
    const int32_t x0 = b->x0[i] + off, x1 = b->x1[i] + off, w0 = b->w0[i], w1 = b->w1[i];
    b->acc[0] = wrap_mac(b->acc[0], w0, x0);
    b->acc[1] = wrap_mac(b->acc[1], w0, x1);
    b->acc[2] = wrap_mac(b->acc[2], w1, x0);
    b->acc[3] = wrap_mac(b->acc[3], w1, x1);
  }
}

_Static_assert(offsetof(pairs_job, w1) == 32 && offsetof(pairs_job, runs_left) == 52,
               "pairs_sums_dsp's offsets");
/* A channel pair's start: the input pointers reset, the sums zero. */
#define PAIR_START \
  "ldrd r0, r1, [sp, #8]\n\t" \
  "movs r4, #0\n\t" \
  "movs r5, #0\n\t" \
  "movs r6, #0\n\t" \
  "movs r7, #0\n\t"
/* A channel pair's end: its sums stored, the weight pointers on to the next pair. */
#define PAIR_END \
  "ldr r12, [sp, #20]\n\t" \
  "stmia r12!, {r4-r7}\n\t" \
  "str r12, [sp, #20]\n\t" \
  "ldr r12, [sp, #16]\n\t" \
  "add r2, r2, r12\n\t" \
  "add r3, r3, r12\n\t" \
  "ldr r12, [sp, #24]\n\t" \
  "subs r12, r12, #1\n\t" \
  "str r12, [sp, #24]\n\t" \
  "bne 2b\n\t"

/* The channel loop around MAC2X2_LOOP for one run: the run's pointers, loop end and offset
 * live in a stack frame ([sp]: x_end, off2, x0, x1, wstep, out, pairs), the sums in
 * registers. */
__attribute__((naked, noinline)) static void pairs_sums_dsp(pairs_job *p __attribute__((unused))) {
  __asm__(
      "push {r4-r11, lr}\n\t"
      "sub sp, sp, #32\n\t"
      "ldm r0, {r1-r9}\n\t"
      "stm sp, {r1-r7}\n\t"
      "mov r2, r8\n\t"
      "mov r3, r9\n\t"
      "2:\n\t"
      PAIR_START
      MAC2X2_LOOP
      PAIR_END
      "add sp, sp, #32\n\t"
      "pop {r4-r11, pc}");
}

/* The same over nruns runs: the frame goes on with [sp, #28]: xstep, nruns, n, row, runs
 * left; after each run the input pointers skip to the next run and its end moves a row. */
__attribute__((naked, noinline)) static void pairs_runs_dsp(pairs_job *p __attribute__((unused))) {
  __asm__(
      "push {r4-r11, lr}\n\t"
      "sub sp, sp, #48\n\t"
      "ldm r0!, {r1-r9}\n\t"
      "stm sp, {r1-r7}\n\t"
      "mov r2, r8\n\t"
      "mov r3, r9\n\t"
      "ldm r0, {r4-r8}\n\t"
      "add r12, sp, #28\n\t"
      "stm r12, {r4-r8}\n\t"
      "2:\n\t"
      PAIR_START
      "ldr r12, [sp, #36]\n\t"
      "add r12, r0, r12\n\t"
      "str r12, [sp]\n\t"
      "ldr r12, [sp, #32]\n\t"
      "str r12, [sp, #44]\n\t"
      MAC2X2_LOOP
      "ldr r12, [sp, #44]\n\t"
      "subs r12, r12, #1\n\t"
      "beq 3f\n\t"
      "str r12, [sp, #44]\n\t"
      "ldr r12, [sp, #28]\n\t"
      "add r0, r0, r12\n\t"
      "add r1, r1, r12\n\t"
      "ldr r12, [sp, #40]\n\t"
      "ldr lr, [sp]\n\t"
      "add lr, lr, r12\n\t"
      "str lr, [sp]\n\t"
      "b 5b\n\t"
      "3:\n\t"
      PAIR_END
      "add sp, sp, #48\n\t"
      "pop {r4-r11, pc}");
}

#define S8_HAS_PAIRS_SUMS 1
static void pairs_sums(pairs_job *p) {
  if (p->nruns > 1)
    pairs_runs_dsp(p);
  else
    pairs_sums_dsp(p);
}

_Static_assert(offsetof(quads_job, step) == 28, "quads_sums_dsp's offsets");
/* dot4's loop for every block, its sums in r4-r7 (rows 0-3), the input as int16 pairs in r8,
 * r9, the rows in r1 (0 and 1, r3 = ws apart) and r2 (2 and 3), the offset pair in r12, the
 * input's end in lr; the frame [sp] holds x, out, blocks left, step and (DSP) the loop's
 * entry. */
__attribute__((naked, noinline)) static void quads_sums_dsp(const quads_job *p
                                                            __attribute__((unused))) {
  __asm__(
      "push {r4-r11, lr}\n\t"
      "ldm r0, {r4-r11}\n\t"
      "sub sp, sp, #" QUADS_FRAME "\n\t"
      QUADS_ENTRY
      "str r4, [sp]\n\t"
      "str r8, [sp, #4]\n\t"
      "str r9, [sp, #8]\n\t"
      "str r11, [sp, #12]\n\t"
      "mov lr, r5\n\t"
      "mov r1, r6\n\t"
      "mov r3, r7\n\t"
      QUADS_OFFSET
      "add r2, r1, r3, lsl #1\n\t"
      "2:\n\t"
      "ldr r0, [sp]\n\t"
      "movs r4, #0\n\t"
      "movs r5, #0\n\t"
      "movs r6, #0\n\t"
      "movs r7, #0\n\t"
      QUADS_LOOP
      "ldr r10, [sp, #4]\n\t"
      "stmia r10!, {r4-r7}\n\t"
      "str r10, [sp, #4]\n\t"
      "ldr r10, [sp, #12]\n\t"
      "add r1, r1, r10\n\t"
      "add r2, r2, r10\n\t"
      "ldr r10, [sp, #8]\n\t"
      "subs r10, r10, #1\n\t"
      "str r10, [sp, #8]\n\t"
      "bne 2b\n\t"
      "add sp, sp, #" QUADS_FRAME "\n\t"
      "pop {r4-r11, pc}");
}

#define S8_HAS_QUADS_SUMS 1
static void quads_sums(const quads_job *p) { quads_sums_dsp(p); }

#endif
