/* fast_s8.c's steps on Armv6-M (Cortex-M0, M0+), included by fast/fast_s8_steps.h only.
 *
 * Armv6-M has eight low registers for MULS and ADDS, MULS gives the low word of a product,
 * and LDRSB takes only a register offset: the DSP's word loads and SMLAD have no counterpart,
 * and taking a word's bytes apart in C costs more than loading them one by one. So dot4 and
 * dot2 are assembly loops over bytes (four and five instructions per multiply-accumulate),
 * dot1 loads bytes. fast/fast_s8_steps.h chooses the blocking that fits: no pixel pairs
 * (FAST_PAIRS 0), windows copied into one run (FAST_ONE_RUN). */
#ifndef MA_FAST_V6M_S8_H
#define MA_FAST_V6M_S8_H

/* dot4 on Armv6-M, whose LDRSB takes only a register offset and whose MULS and ADDS only the
 * eight low registers: one index counting from -n up to 0 (its ADDS sets the loop's flag)
 * over the ends of the input and of the four weight rows (r0-r5), the input plus the offset
 * in r6 serving four MULS; the sums live in r8-r11 (ADD takes high registers), the offset in
 * r12: four instructions per multiply-accumulate. n at least 1. Field order: the assembly's. */
typedef struct {
  const int8_t *x_end, *w_end; /* x + n; the first weight row + n */
  int32_t ws, n, off;
  int32_t acc[4];
} dot4_job;

_Static_assert(offsetof(dot4_job, acc) == 20, "dot4_v6m's offsets");
#define DOT4_V6M_ROW(ROW, ACC) \
  "ldrsb r7, [" ROW ", r0]\n\t" \
  "muls r7, r6, r7\n\t" \
  "add " ACC ", " ACC ", r7\n\t"
__attribute__((naked, noinline)) static void dot4_v6m(dot4_job *j __attribute__((unused))) {
  __asm__(
      V6M_PROLOGUE
      "ldr r1, [r0, #0]\n\t"
      "ldr r2, [r0, #4]\n\t"
      "ldr r7, [r0, #8]\n\t"
      "adds r3, r2, r7\n\t"
      "adds r4, r3, r7\n\t"
      "adds r5, r4, r7\n\t"
      "ldr r6, [r0, #16]\n\t"
      "mov r12, r6\n\t"
      "ldr r6, [r0, #20]\n\t"
      "mov r8, r6\n\t"
      "ldr r6, [r0, #24]\n\t"
      "mov r9, r6\n\t"
      "ldr r6, [r0, #28]\n\t"
      "mov r10, r6\n\t"
      "ldr r6, [r0, #32]\n\t"
      "mov r11, r6\n\t"
      "ldr r6, [r0, #12]\n\t"
      "rsbs r0, r6, #0\n\t"
      "1:\n\t"
      "ldrsb r6, [r1, r0]\n\t"
      "add r6, r6, r12\n\t"
      DOT4_V6M_ROW("r2", "r8") DOT4_V6M_ROW("r3", "r9") DOT4_V6M_ROW("r4", "r10")
      DOT4_V6M_ROW("r5", "r11")
      "adds r0, r0, #1\n\t"
      "bne 1b\n\t"
      "ldr r0, [sp]\n\t"
      "mov r6, r8\n\t"
      "str r6, [r0, #20]\n\t"
      "mov r6, r9\n\t"
      "str r6, [r0, #24]\n\t"
      "mov r6, r10\n\t"
      "str r6, [r0, #28]\n\t"
      "mov r6, r11\n\t"
      "str r6, [r0, #32]\n\t"
      V6M_EPILOGUE);
}
#undef DOT4_V6M_ROW

/* The same for two weight rows (the pair past a layer's blocks of four channels), the sums in
 * r4, r5: five instructions per multiply-accumulate, where dot1's C loop takes about eight.
 * Only r4-r7 are saved: the loop keeps off r8-r11. */
typedef struct {
  const int8_t *x_end, *w_end; /* x + n; the first weight row + n */
  int32_t ws, n, off;
  int32_t acc[2];
} dot2_job;

_Static_assert(offsetof(dot2_job, acc) == 20, "dot2_v6m's offsets");
__attribute__((naked, noinline)) static void dot2_v6m(dot2_job *j __attribute__((unused))) {
  __asm__(
      ".syntax unified\n\t"
      "push {r0, r4-r7, lr}\n\t"
      "ldr r1, [r0, #0]\n\t"
      "ldr r2, [r0, #4]\n\t"
      "ldr r7, [r0, #8]\n\t"
      "adds r3, r2, r7\n\t"
      "ldr r6, [r0, #16]\n\t"
      "mov r12, r6\n\t"
      "ldr r4, [r0, #20]\n\t"
      "ldr r5, [r0, #24]\n\t"
      "ldr r6, [r0, #12]\n\t"
      "rsbs r0, r6, #0\n\t"
      "1:\n\t"
      "ldrsb r6, [r1, r0]\n\t"
      "add r6, r6, r12\n\t"
      "ldrsb r7, [r2, r0]\n\t"
      "muls r7, r6, r7\n\t"
      "adds r4, r4, r7\n\t"
      "ldrsb r7, [r3, r0]\n\t"
      "muls r7, r6, r7\n\t"
      "adds r5, r5, r7\n\t"
      "adds r0, r0, #1\n\t"
      "bne 1b\n\t"
      "ldr r0, [sp]\n\t"
      "str r4, [r0, #20]\n\t"
      "str r5, [r0, #24]\n\t"
      "pop {r0, r4-r7, pc}");
}

/* acc[r] += sum_i w[r * ws + i] * (x[i] + off) for the two weight rows r. */
static void dot2(const int8_t *x, const int8_t *w, size_t ws, int32_t n, int32_t off,
                 int32_t acc[2]) {
  if (n > 0) {
    dot2_job j = {x + n, w + n, (int32_t)ws, n, off, {acc[0], acc[1]}};
    dot2_v6m(&j);
    acc[0] = j.acc[0];
    acc[1] = j.acc[1];
  }
}

#define S8_HAS_DOT4 1
static void dot4(const int8_t *x, const int8_t *w, size_t ws, int32_t n, int32_t off,
                 int32_t acc[4]) {
  if (n > 0) {
    dot4_job j = {x + n, w + n, (int32_t)ws, n, off, {acc[0], acc[1], acc[2], acc[3]}};
    dot4_v6m(&j);
    memcpy(acc, j.acc, sizeof j.acc);
  }
}

/* Byte loads beat taking words apart here. */
#define S8_HAS_DOT1 1
static inline int32_t dot1(const int8_t *x, const int8_t *w, int32_t n, int32_t off, int32_t a) {
  for (int32_t i = 0; i < n; ++i) a = wrap_mac(a, w[i], x[i] + off);
  return a;
}

#endif
