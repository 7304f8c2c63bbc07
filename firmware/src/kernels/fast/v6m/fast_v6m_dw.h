/* fast_depthwise_s8.c's steps (fast/fast_dw_steps.h names them) on Armv6-M (M0, M0+): dw4's
 * taps by byte loads (taking a word's bytes apart costs two instructions each there), and
 * dw4_shared's taps, rows and columns, in one assembly call for any window width (its eight
 * low registers hold the four sums, the input and the weight pointers; the C loop spills
 * them). */
#ifndef MA_FAST_V6M_DW_H
#define MA_FAST_V6M_DW_H

#include "fast/fast_dw_taps.h"

#define DW_TAPS_NOINLINE
#define DW_SUMS_NOINLINE
#define DW_TAP4(a, i, f, off) ((a) = dw_tap4_bytes((a), (i), (f), (off)))
#define DW_HAS_DW4_SHARED
#define DW_SHARED_ANY_WIDTH 1
#define DW_RUNS 0

/* One tap of four channels, multiplier 1: a + weights f[k] * (inputs i[k] + off). */
static inline acc4 dw_tap4_bytes(acc4 a, const int8_t *i, const int8_t *f, int32_t off) {
  a.v0 = wrap_mac(a.v0, f[0], i[0] + off);
  a.v1 = wrap_mac(a.v1, f[1], i[1] + off);
  a.v2 = wrap_mac(a.v2, f[2], i[2] + off);
  a.v3 = wrap_mac(a.v3, f[3], i[3] + off);
  return a;
}

/* dw4_shared's taps on Armv6-M, rows and columns in one call: each tap's input plus the
 * offset (r2) times four weights (LDRB + SXTB: LDRSB has no immediate offset) into the sums
 * r4-r7; the offset and the column steps in r8-r10, the row's end in r11, the row steps and
 * the rows left read from the job ([sp]) once per row. rows and cols at least 1. Field order:
 * the assembly's. */
typedef struct {
  const int8_t *in, *f;
  int32_t in_col, f_col, span; /* span: cols x in_col */
  int32_t rows;                /* counts down */
  int32_t in_next, f_next;     /* from a row's end to the next row's start */
  int32_t off;
  int32_t acc[4];
} bcast_job;

_Static_assert(offsetof(bcast_job, acc) == 36, "dw_bcast_v6m's offsets");
#define BCAST_V6M_LANE(K, ACC) \
  "ldrb r3, [r1, #" K "]\n\t" \
  "sxtb r3, r3\n\t" \
  "muls r3, r2, r3\n\t" \
  "adds " ACC ", " ACC ", r3\n\t"
__attribute__((naked, noinline)) static void dw_bcast_v6m(bcast_job *j __attribute__((unused))) {
  __asm__(
      V6M_PROLOGUE
      "ldr r2, [r0, #32]\n\t"
      "mov r8, r2\n\t"
      "ldr r2, [r0, #8]\n\t"
      "mov r9, r2\n\t"
      "ldr r2, [r0, #12]\n\t"
      "mov r10, r2\n\t"
      "ldr r4, [r0, #36]\n\t"
      "ldr r5, [r0, #40]\n\t"
      "ldr r6, [r0, #44]\n\t"
      "ldr r7, [r0, #48]\n\t"
      "ldr r1, [r0, #4]\n\t"
      "ldr r0, [r0, #0]\n\t"
      "2:\n\t"
      "ldr r2, [sp]\n\t"
      "ldr r3, [r2, #16]\n\t"
      "adds r3, r0, r3\n\t"
      "mov r11, r3\n\t"
      "1:\n\t"
      "ldrb r2, [r0, #0]\n\t"
      "sxtb r2, r2\n\t"
      "add r2, r2, r8\n\t"
      BCAST_V6M_LANE("0", "r4") BCAST_V6M_LANE("1", "r5") BCAST_V6M_LANE("2", "r6")
      BCAST_V6M_LANE("3", "r7")
      "add r0, r0, r9\n\t"
      "add r1, r1, r10\n\t"
      "cmp r0, r11\n\t"
      "bne 1b\n\t"
      "ldr r2, [sp]\n\t"
      "ldr r3, [r2, #24]\n\t"
      "adds r0, r0, r3\n\t"
      "ldr r3, [r2, #28]\n\t"
      "adds r1, r1, r3\n\t"
      "ldr r3, [r2, #20]\n\t"
      "subs r3, r3, #1\n\t"
      "str r3, [r2, #20]\n\t"
      "bne 2b\n\t"
      "str r4, [r2, #36]\n\t"
      "str r5, [r2, #40]\n\t"
      "str r6, [r2, #44]\n\t"
      "str r7, [r2, #48]\n\t"
      V6M_EPILOGUE);
}
#undef BCAST_V6M_LANE

/* fast_depthwise_s8.c's dw4_shared (a + sums over the taps of channels c..c+3, each reading
 * input channel c / mult, plus the offset) through dw_bcast_v6m. */
static acc4 dw4_shared(const taps *tp, int32_t c, int32_t mult, int32_t cout, int32_t off,
                       acc4 a) {
  const taps *t = tp;
  if (t->rows <= 0 || t->cols <= 0) return a;
  const int32_t span = t->cols * (int32_t)t->in_col, fspan = t->cols * cout;
  bcast_job j = {t->in + c / mult, t->f + c, (int32_t)t->in_col, cout, span, t->rows,
                 (int32_t)t->in_row - span, (int32_t)t->f_row - fspan, off,
                 {a.v0, a.v1, a.v2, a.v3}};
  dw_bcast_v6m(&j);
  return (acc4){j.acc[0], j.acc[1], j.acc[2], j.acc[3]};
}

#endif
