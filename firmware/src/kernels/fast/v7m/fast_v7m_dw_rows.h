/* fast_depthwise_s8.c's sums_quad and sums_bcast (DW_HAS_SUMS) with each row's taps unrolled
 * in Armv7-M assembly, as GCC 12 spills the C form's registers (not inlined:
 * DW_SUMS_NOINLINE): for the M3 (fast_v7m_dw.h) and the DSP cores (fast/dsp/fast_dsp_dw.h),
 * around the one-tap forms the includer defines first:
 *   DW_TAP(IN, F)   multiplier 1: four inputs plus the offset (%[off2]) times four weights into
 *                   the sums %[a0]..%[a3] (scratch %[x], %[w], %[xe], %[we])
 *   DW_BTAP(IN, F)  multiplier 4k: one input plus the offset (%[off]) times four weights
 *   DW_OFF2_T, DW_OFF2(off)  the type and value of %[off2]
 * Windows one to three taps wide; a whole 3 x 3 window without a loop. */
#ifndef MA_FAST_V7M_DW_ROWS_H
#define MA_FAST_V7M_DW_ROWS_H

/* After a row's taps: to the next row (DW_NEXT_ROW: until the input pointer reaches end). */
#define DW_STEP_ROW           \
  "ldr %[x], %[ir]\n\t"      \
  "add %[i], %[i], %[x]\n\t" \
  "ldr %[x], %[fr]\n\t"      \
  "add %[f], %[f], %[x]\n\t"
#define DW_NEXT_ROW       \
  DW_STEP_ROW             \
  "ldr %[x], %[end]\n\t" \
  "cmp %[i], %[x]\n\t"   \
  "bne 1b"
#define DW_SUMS_OUT                                                                  \
  [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [i] "+r"(i), [f] "+r"(fp), \
      [x] "=&r"(x), [w] "=&r"(w), [we] "=&r"(we)
#define DW_STEPS_IN [ir] "m"(in_row), [fr] "m"(f_row), [end] "m"(end)
#define DW_ROWS(TAPS)                                                       \
  __asm__("1:\n\t" TAPS DW_NEXT_ROW                                        \
          : DW_SUMS_OUT, [xe] "=&r"(xe)                                     \
          : [col] "r"(col), [off2] "r"(off2), DW_STEPS_IN                   \
          : "cc", "memory")
#define DW_TAP0 DW_TAP("[%[i]]", "[%[f]]")
#define DW_TAP1 DW_TAP("[%[i], %[col]]", "[%[f], %[col]]")
#define DW_TAP2 DW_TAP("[%[i], %[col], lsl #1]", "[%[f], %[col], lsl #1]")
/* A whole 3 x 3 window: no loop. */
#define DW_ROW3 DW_TAP0 DW_TAP1 DW_TAP2
#define DW_3X3                                                                  \
  __asm__(DW_ROW3 DW_STEP_ROW DW_ROW3 DW_STEP_ROW DW_ROW3                        \
          : DW_SUMS_OUT, [xe] "=&r"(xe)                                         \
          : [col] "r"(col), [off2] "r"(off2), [ir] "m"(in_row), [fr] "m"(f_row) \
          : "cc", "memory")
#define DW_BROWS(TAPS)                                                             \
  __asm__("1:\n\t" TAPS DW_NEXT_ROW                                               \
          : DW_SUMS_OUT                                                            \
          : [icol] "r"(icol), [fcol] "r"(fcol), [off] "r"(off), DW_STEPS_IN        \
          : "cc", "memory")
#define DW_BTAP0 DW_BTAP("[%[i]]", "[%[f]]")
#define DW_BTAP1 DW_BTAP("[%[i], %[icol]]", "[%[f], %[fcol]]")
#define DW_BTAP2 DW_BTAP("[%[i], %[icol], lsl #1]", "[%[f], %[fcol], lsl #1]")

#define DW_SUMS_NOINLINE __attribute__((noinline))
#define DW_HAS_SUMS

/* Multiplier 1 without dilation (ch: the channels, each tap's step in input and filter). */
DW_SUMS_NOINLINE static void sums_quad(const taps *t, const int32_t *b, int32_t c0, int32_t n,
                                       int32_t ch, int32_t off, int32_t *acc) {
  const size_t col = (size_t)ch, in_row = t->in_row, f_row = t->f_row;
  const size_t span = (size_t)t->rows * in_row;
  const int32_t rows = t->rows, cols = t->cols;
  const DW_OFF2_T off2 = DW_OFF2(off);
  const int8_t *in = t->in + c0, *f = t->f + c0;
  for (int32_t k = 0; k < n; k += 4, in += 4, f += 4) {
    const acc4 a = bias_quad(b, k);
    int32_t a0 = a.v0, a1 = a.v1, a2 = a.v2, a3 = a.v3, x, w, xe, we;
    const int8_t *i = in, *fp = f, *const end = in + span;
    if (cols == 3 && rows == 3)
      DW_3X3;
    else if (cols == 3)
      DW_ROWS(DW_TAP0 DW_TAP1 DW_TAP2);
    else if (cols == 2)
      DW_ROWS(DW_TAP0 DW_TAP1);
    else
      DW_ROWS(DW_TAP0);
    store_quad(acc + k, (acc4){a0, a1, a2, a3});
  }
}

/* Multipliers that are multiples of 4. */
DW_SUMS_NOINLINE static void sums_bcast(const taps *t, const int32_t *b, int32_t c0, int32_t n,
                                        int32_t mult, int32_t cout, int32_t off, int32_t *acc) {
  const size_t icol = t->in_col, fcol = (size_t)cout, in_row = t->in_row, f_row = t->f_row;
  const size_t span = (size_t)t->rows * in_row;
  const int32_t cols = t->cols;
  const int8_t *f = t->f + c0;
  for (int32_t k = 0; k < n; k += 4, f += 4) {
    const acc4 a = bias_quad(b, k);
    int32_t a0 = a.v0, a1 = a.v1, a2 = a.v2, a3 = a.v3, x, w, we;
    const int8_t *i = t->in + (c0 + k) / mult, *fp = f, *const end = i + span;
    if (cols == 3)
      DW_BROWS(DW_BTAP0 DW_BTAP1 DW_BTAP2);
    else if (cols == 2)
      DW_BROWS(DW_BTAP0 DW_BTAP1);
    else
      DW_BROWS(DW_BTAP0);
    store_quad(acc + k, (acc4){a0, a1, a2, a3});
  }
}
#undef DW_NEXT_ROW
#undef DW_SUMS_OUT
#undef DW_STEPS_IN
#undef DW_ROWS
#undef DW_TAP0
#undef DW_TAP1
#undef DW_TAP2
#undef DW_STEP_ROW
#undef DW_ROW3
#undef DW_3X3
#undef DW_BROWS
#undef DW_BTAP0
#undef DW_BTAP1
#undef DW_BTAP2
#undef DW_TAP
#undef DW_BTAP
#undef DW_OFF2_T
#undef DW_OFF2

#endif
