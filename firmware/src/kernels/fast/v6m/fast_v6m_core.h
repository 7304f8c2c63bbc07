/* The core steps on Armv6-M (M0, M0+; fast/fast_core_steps.h names them): the C forms of the
 * four-lane steps (fast/fast_core_portable.h), mul_add_wide in assembly (requant_right and
 * requant_left build their 64-bit product from it: Armv6-M has no 32 x 32 -> 64 multiply, and
 * GCC's int64 form calls __aeabi_lmul), and the frame of the assembly loops that fast/ keeps
 * for this core (eight low registers, MULS, LDRSB with a register offset only). */
#ifndef MA_FAST_V6M_CORE_H
#define MA_FAST_V6M_CORE_H

#include "fast/fast_core_portable.h"

/* The Armv6-M assembly loops' frame (naked functions): r4-r11 and lr saved, then the job
 * pointer (r0) at [sp]. */
#define V6M_PROLOGUE \
  ".syntax unified\n\t" /* GCC marks Thumb-1 inline assembly divided */ \
  "push {r4-r7, lr}\n\t" \
  "mov r4, r8\n\t" \
  "mov r5, r9\n\t" \
  "mov r6, r10\n\t" \
  "mov r7, r11\n\t" \
  "push {r0, r4-r7}\n\t"
#define V6M_EPILOGUE \
  "pop {r0, r4-r7}\n\t" \
  "mov r8, r4\n\t" \
  "mov r9, r5\n\t" \
  "mov r10, r6\n\t" \
  "mov r11, r7\n\t" \
  "pop {r4-r7, pc}"

/* fast/fast_wide.h's sums with the carries in ADCS (GCC 12 compares for each: 19 instructions
 * here against about 40). ah bh is added last, with the third carry. */
static inline wide32 mul_add_wide(int32_t a, int32_t b, uint32_t lo, uint32_t hi) {
  uint32_t t, u, v;
  __asm__(
      ".syntax unified\n\t" /* GCC marks Thumb-1 inline assembly divided */
      "uxth %[t], %[a]\n\t"
      "uxth %[u], %[b]\n\t"
      "asrs %[a], %[a], #16\n\t"
      "asrs %[b], %[b], #16\n\t"
      "movs %[v], %[t]\n\t"
      "muls %[v], %[u], %[v]\n\t" /* al bl */
      "muls %[u], %[a], %[u]\n\t" /* ah bl */
      "muls %[t], %[b], %[t]\n\t" /* al bh */
      "muls %[a], %[b], %[a]\n\t" /* ah bh */
      "asrs %[b], %[u], #16\n\t"
      "lsls %[u], %[u], #16\n\t"
      "adds %[lo], %[lo], %[v]\n\t"
      "adcs %[hi], %[hi], %[b]\n\t"
      "asrs %[v], %[t], #16\n\t"
      "lsls %[t], %[t], #16\n\t"
      "adds %[lo], %[lo], %[u]\n\t"
      "adcs %[hi], %[hi], %[v]\n\t"
      "adds %[lo], %[lo], %[t]\n\t"
      "adcs %[hi], %[hi], %[a]\n\t"
      ".syntax divided"
      : [a] "+l"(a), [b] "+l"(b), [lo] "+l"(lo), [hi] "+l"(hi), [t] "=&l"(t), [u] "=&l"(u),
        [v] "=&l"(v)
      :
      : "cc");
  const wide32 r = {lo, hi};
  return r;
}

#define REQUANT_RIGHT requant_right
#define REQUANT_Q_RIGHT requant_right

#endif
