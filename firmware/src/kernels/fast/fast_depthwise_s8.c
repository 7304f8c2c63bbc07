/* The fast int8 path of DEPTHWISE_CONV_2D (see fast_s8.h; the shared primitives and why they
 * are bit-exact: fast_s8_core.h, fast_s8.c). */
#include "fast/fast_s8.h"
#include "fast/fast_s8_core.h"
#include "overlap.h"

/* The taps of one output pixel: `rows` x `cols` taps from input `in` (channel 0) and filter
 * `f`, input steps between rows and columns in bytes. */
typedef struct {
  const int8_t *in, *f;
  int32_t rows, cols;
  size_t in_row, in_col, f_row;
} taps;

/* The taps of output row (b, oy), columns left to the pixel: rows, steps, and the input and
 * filter at tap row fy0, column 0. */
static taps row_taps(const int8_t *in, const int8_t *f, const mak_window_geom *g, int32_t b,
                     int32_t oy, int32_t cin, int32_t cout) {
  const int32_t iy0 = oy * g->stride_h - g->pad_h;
  int32_t fy0, fy1;
  mak_tap_range(iy0, g->dil_h, g->kh, g->in_h, &fy0, &fy1);
  const size_t row = (size_t)b * g->in_h + iy0 + g->dil_h * fy0;
  const taps t = {in + row * g->in_w * cin,
                  f + (size_t)fy0 * g->kw * cout,
                  fy1 - fy0,
                  0,
                  (size_t)g->dil_h * g->in_w * cin,
                  (size_t)g->dil_w * cin,
                  (size_t)g->kw * cout};
  return t;
}

/* Row r's taps at output column ox: the columns of the filter inside the input (all of them
 * for the pixels away from the edges, found without mak_tap_range's divisions). */
static inline taps pixel_taps(const taps *r, const mak_window_geom *g, int32_t ox, int32_t cin,
                              int32_t cout) {
  const int32_t ix0 = ox * g->stride_w - g->pad_w;
  int32_t fx0 = 0, fx1 = g->kw;
  if (ix0 < 0 || ix0 + g->dil_w * (g->kw - 1) >= g->in_w)
    mak_tap_range(ix0, g->dil_w, g->kw, g->in_w, &fx0, &fx1);
  taps t = *r;
  t.in += (ix0 + g->dil_w * fx0) * (ptrdiff_t)cin;
  t.f += (size_t)fx0 * cout;
  t.cols = fx1 - fx0;
  return t;
}

/* a + sums over the taps of filter * (input + off), channels c..c+3, depth multiplier 1. */
#if FAST_DSP
__attribute__((noinline)) /* its own registers for the sums and steps */
#endif
static acc4 dw4(const taps *tp, int32_t c, int32_t ch, int32_t off, acc4 a) {
  const taps t = *tp;
  const int8_t *ip = t.in + c, *fp = t.f + c;
  for (int32_t y = 0; y < t.rows; ++y, ip += t.in_row, fp += t.f_row) {
    const int8_t *i = ip, *f = fp;
    for (int32_t x = 0; x < t.cols; ++x, i += t.in_col, f += ch) {
#if FAST_V6M /* byte loads: Armv6-M takes a word's bytes apart in two instructions each */
      a.v0 = wrap_mac(a.v0, f[0], i[0] + off);
      a.v1 = wrap_mac(a.v1, f[1], i[1] + off);
      a.v2 = wrap_mac(a.v2, f[2], i[2] + off);
      a.v3 = wrap_mac(a.v3, f[3], i[3] + off);
#else
      a = quad_mac(a, quad_in(load4(i), off), load4(f));
#endif
    }
  }
  return a;
}

#if FAST_V6M
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
#endif

/* The same for depth multipliers that are multiples of 4: channels c..c+3 all read input
 * channel c / mult. */
#if FAST_DSP
__attribute__((noinline))
#endif
static acc4 dw4_shared(const taps *tp, int32_t c, int32_t mult, int32_t cout, int32_t off,
                       acc4 a) {
#if FAST_V6M
  const taps *t = tp;
  if (t->rows <= 0 || t->cols <= 0) return a;
  const int32_t span = t->cols * (int32_t)t->in_col, fspan = t->cols * cout;
  bcast_job j = {t->in + c / mult, t->f + c, (int32_t)t->in_col, cout, span, t->rows,
                 (int32_t)t->in_row - span, (int32_t)t->f_row - fspan, off,
                 {a.v0, a.v1, a.v2, a.v3}};
  dw_bcast_v6m(&j);
  return (acc4){j.acc[0], j.acc[1], j.acc[2], j.acc[3]};
#else
  const taps t = *tp;
  const int8_t *ip = t.in + c / mult, *fp = t.f + c;
  for (int32_t y = 0; y < t.rows; ++y, ip += t.in_row, fp += t.f_row) {
    const int8_t *i = ip, *f = fp;
    for (int32_t x = 0; x < t.cols; ++x, i += t.in_col, f += cout) {
      a = bcast_mac(a, *i + off, load4(f));
    }
  }
  return a;
#endif
}

/* The same for `lanes` (1 to 4) output channels c.. of depth multiplier mult (each reads input
 * channel (c + k) / mult). Lanes past `lanes` repeat the last one (no read past the tensors);
 * the caller keeps the first `lanes` sums. */
static acc4 dw_lanes(const taps *tp, int32_t c, int32_t lanes, int32_t mult, int32_t cout,
                     int32_t off, acc4 a) {
  const taps t = *tp;
  const int32_t k1 = lanes > 1 ? 1 : 0, k2 = lanes > 2 ? 2 : k1, k3 = lanes > 3 ? 3 : k2;
  const int32_t i0 = c / mult, i1 = (c + k1) / mult, i2 = (c + k2) / mult, i3 = (c + k3) / mult;
  const int8_t *ip = t.in, *fp = t.f + c;
  for (int32_t y = 0; y < t.rows; ++y, ip += t.in_row, fp += t.f_row) {
    const int8_t *i = ip, *f = fp;
    for (int32_t x = 0; x < t.cols; ++x, i += t.in_col, f += cout) {
      a.v0 = wrap_mac(a.v0, f[0], i[i0] + off);
      a.v1 = wrap_mac(a.v1, f[k1], i[i1] + off);
      a.v2 = wrap_mac(a.v2, f[k2], i[i2] + off);
      a.v3 = wrap_mac(a.v3, f[k3], i[i3] + off);
    }
  }
  return a;
}

/* The biases of channels c.. (lanes past `lanes` repeat the last), or zeros. */
static acc4 bias4(const int32_t *bias, int32_t c, int32_t lanes) {
  if (bias == NULL) return (acc4){0, 0, 0, 0};
  const int32_t *b = bias + c;
  return (acc4){b[0], b[lanes > 1 ? 1 : 0], b[lanes > 2 ? 2 : 0], b[lanes > 3 ? 3 : 0]};
}

/* acc[0..n-1] = b[0..n-1] (or zeros) plus the sums of channels c0.. (n a multiple of 4) of a
 * window one to three taps wide: for multiplier 1 without dilation (input and filter both step ch bytes per tap) four
 * inputs per load, for multipliers that are multiples of 4 (channels c..c+3 all read input
 * channel c / mult) one input for four weights. On DSP and M3 builds each row's taps are
 * unrolled in assembly, as GCC 12 spills the C form's registers; elsewhere dw4 and dw4_shared
 * (the same sums). */
#if FAST_DSP || FAST_V7M
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
/* Multiplier 1, one tap: four inputs plus the offset times four weights into the four sums
 * (on the M3 each byte taken out of the word by SBFX, the offset in %[off2] as one int32). */
#if FAST_V7M
#define DW_LANE(K, A)                             \
  "sbfx %[xe], %[x], #" K ", #8\n\t"              \
  "add %[xe], %[xe], %[off2]\n\t"                \
  "sbfx %[we], %[w], #" K ", #8\n\t"              \
  "mla %[" A "], %[xe], %[we], %[" A "]\n\t"
#define DW_TAP(IN, F)                 \
  "ldr %[x], " IN "\n\t"              \
  "ldr %[w], " F "\n\t"               \
  DW_LANE("0", "a0") DW_LANE("8", "a1") DW_LANE("16", "a2") \
  "asr %[x], %[x], #24\n\t"           \
  "add %[x], %[x], %[off2]\n\t"       \
  "asr %[w], %[w], #24\n\t"           \
  "mla %[a3], %[x], %[w], %[a3]\n\t"
#else
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
#endif
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
/* Multiplier 4k, one tap: one input plus the offset times four weights into the four sums. */
#if FAST_V7M
#define DW_BTAP(IN, F)                         \
  "ldrsb %[x], " IN "\n\t"                     \
  "ldr %[w], " F "\n\t"                        \
  "add %[x], %[x], %[off]\n\t"                 \
  "sbfx %[we], %[w], #0, #8\n\t"               \
  "mla %[a0], %[x], %[we], %[a0]\n\t"          \
  "sbfx %[we], %[w], #8, #8\n\t"               \
  "mla %[a1], %[x], %[we], %[a1]\n\t"          \
  "sbfx %[we], %[w], #16, #8\n\t"              \
  "mla %[a2], %[x], %[we], %[a2]\n\t"          \
  "asr %[w], %[w], #24\n\t"                    \
  "mla %[a3], %[x], %[w], %[a3]\n\t"
#else
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
#endif
#define DW_BROWS(TAPS)                                                             \
  __asm__("1:\n\t" TAPS DW_NEXT_ROW                                               \
          : DW_SUMS_OUT                                                            \
          : [icol] "r"(icol), [fcol] "r"(fcol), [off] "r"(off), DW_STEPS_IN        \
          : "cc", "memory")
#define DW_BTAP0 DW_BTAP("[%[i]]", "[%[f]]")
#define DW_BTAP1 DW_BTAP("[%[i], %[icol]]", "[%[f], %[fcol]]")
#define DW_BTAP2 DW_BTAP("[%[i], %[icol], lsl #1]", "[%[f], %[fcol], lsl #1]")
#endif
/* The biases of channels k..k+3 of b, or zeros. */
static inline acc4 bias_quad(const int32_t *b, int32_t k) {
  return b ? (acc4){b[k], b[k + 1], b[k + 2], b[k + 3]} : (acc4){0, 0, 0, 0};
}

static inline void store_quad(int32_t *acc, acc4 a) {
  acc[0] = a.v0;
  acc[1] = a.v1;
  acc[2] = a.v2;
  acc[3] = a.v3;
}

/* Multiplier 1 without dilation (ch: the channels, each tap's step in input and filter). */
#if FAST_DSP || FAST_V7M
__attribute__((noinline))
#endif
static void sums_quad(const taps *t, const int32_t *b, int32_t c0, int32_t n, int32_t ch,
                      int32_t off, int32_t *acc) {
#if FAST_DSP || FAST_V7M
  const size_t col = (size_t)ch, in_row = t->in_row, f_row = t->f_row;
  const size_t span = (size_t)t->rows * in_row;
  const int32_t rows = t->rows, cols = t->cols;
#if FAST_DSP
  const int16x2_t off2 = (int16x2_t)(((uint32_t)off & 0xFFFFu) * 0x10001u);
#else
  const int32_t off2 = off;
#endif
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
#else
  for (int32_t k = 0; k < n; k += 4) store_quad(acc + k, dw4(t, c0 + k, ch, off, bias_quad(b, k)));
#endif
}

/* Multipliers that are multiples of 4. */
#if FAST_DSP || FAST_V7M
__attribute__((noinline))
#endif
static void sums_bcast(const taps *t, const int32_t *b, int32_t c0, int32_t n, int32_t mult,
                       int32_t cout, int32_t off, int32_t *acc) {
#if FAST_DSP || FAST_V7M
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
#else
  for (int32_t k = 0; k < n; k += 4)
    store_quad(acc + k, dw4_shared(t, c0 + k, mult, cout, off, bias_quad(b, k)));
#endif
}
#if FAST_DSP || FAST_V7M
#undef DW_LANE
#undef DW_NEXT_ROW
#undef DW_SUMS_OUT
#undef DW_STEPS_IN
#undef DW_TAP
#undef DW_ROWS
#undef DW_TAP0
#undef DW_TAP1
#undef DW_TAP2
#undef DW_STEP_ROW
#undef DW_ROW3
#undef DW_3X3
#undef DW_BTAP
#undef DW_BROWS
#undef DW_BTAP0
#undef DW_BTAP1
#undef DW_BTAP2
#endif

static inline void sums_rows(const taps *t, const int32_t *b, int32_t c0, int32_t n,
                             int32_t mult, int32_t cout, int32_t off, int32_t *acc) {
  if (mult == 1)
    sums_quad(t, b, c0, n, cout, off, acc);
  else
    sums_bcast(t, b, c0, n, mult, cout, off, acc);
}

/* sums_rows for windows more than three taps wide: three columns at a time, each part adding
 * to the sums so far. Not inlined: the common narrow windows keep their caller's registers. */
#if FAST_DSP || FAST_V7M
__attribute__((noinline))
#endif
static void sums_wide(const taps *t, const int32_t *b, int32_t c0, int32_t n, int32_t mult,
                      int32_t cout, int32_t off, int32_t *acc) {
  taps part = *t;
  for (int32_t j = 0; j < t->cols; j += 3, b = acc) {
    part.in = t->in + j * t->in_col;
    part.f = t->f + (size_t)j * cout;
    part.cols = t->cols - j < 3 ? t->cols - j : 3;
    sums_rows(&part, b, c0, n, mult, cout, off, acc);
  }
}

/* The sums of output channels c0..c0+n-1 of one pixel into acc[0..n-1], from their biases. */
static void block_sums(const taps *t, const int32_t *bias, int32_t c0, int32_t n, int32_t mult,
                       int32_t cout, int32_t off, int32_t *acc) {
  int32_t k = 0;
  if (t->rows > 0 && t->cols > 0 &&
      ((mult == 1 && t->in_col == (size_t)cout) || mult % 4 == 0)) {
    k = n & ~3;
    const int32_t *start = bias ? bias + c0 : NULL;
    if (t->cols <= 3 || (FAST_V6M && mult != 1)) /* Armv6-M: dw4_shared takes any width */
      sums_rows(t, start, c0, k, mult, cout, off, acc);
    else
      sums_wide(t, start, c0, k, mult, cout, off, acc);
  }
  for (; k < n; k += 4) {
    const int32_t lanes = n - k < 4 ? n - k : 4, c = c0 + k;
    acc4 a = bias4(bias, c, lanes);
    if (lanes == 4 && mult == 1)
      a = dw4(t, c, cout, off, a);
    else if (lanes == 4 && mult % 4 == 0)
      a = dw4_shared(t, c, mult, cout, off, a);
    else
      a = dw_lanes(t, c, lanes, mult, cout, off, a);
    acc[k] = a.v0;
    if (lanes > 1) acc[k + 1] = a.v1;
    if (lanes > 2) acc[k + 2] = a.v2;
    if (lanes > 3) acc[k + 3] = a.v3;
  }
}

/* clamp_out, or where the activation range is all of int8 (full: ReLU and ReLU6 outputs of
 * zero point -128 too) on the DSP a saturating add and an 8-bit saturation: the same value in
 * two instructions. */
static inline int8_t clamp_out_as(int32_t y, const out_range *r, bool full) {
#if FAST_DSP
  if (full) return (int8_t)__ssat(__qadd(y, r->offset), 8);
#else
  (void)full;
#endif
  return clamp_out(y, r);
}

/* requant_right or requant_left as requant_block picks them: the tests' entry (fast_s8.h). */
int32_t mak_fast_dw_requant(int32_t acc, int32_t mult, int32_t shift) {
  return shift < 0 ? requant_right(acc, mult, -shift - 1, (int32_t)1 << (-shift - 1))
                   : requant_left(acc, mult, shift);
}

/* o[k] = acc[k] requantized (as requant), for the n output channels c0.. of a pixel; full as
 * clamp_out_as's (a constant where inlined). */
static inline __attribute__((always_inline)) void requant_as(const int32_t *acc, int32_t n,
                                                             const mak_conv_data *d, int32_t c0,
                                                             const out_range *r, int8_t *o,
                                                             bool full) {
  const int8_t *shift = mak_conv_shifts(d);
  if (d->n_mult > 1) {
    const int32_t *m = d->mult + c0;
    const int8_t *s = shift + c0;
    for (int32_t k = 0; k < n; ++k) {
      const int32_t sk = s[k];
      const int32_t y = sk < 0 ? requant_right(acc[k], m[k], -sk - 1, (int32_t)1 << (-sk - 1))
                               : requant_left(acc[k], m[k], sk);
      o[k] = clamp_out_as(y, r, full);
    }
  } else if (shift[0] < 0) {
    const int32_t m = d->mult[0], e_minus_1 = -shift[0] - 1, half = (int32_t)1 << e_minus_1;
    for (int32_t k = 0; k < n; ++k)
      o[k] = clamp_out_as(requant_right(acc[k], m, e_minus_1, half), r, full);
  } else {
    const int32_t m = d->mult[0], left = shift[0];
    for (int32_t k = 0; k < n; ++k) o[k] = clamp_out_as(requant_left(acc[k], m, left), r, full);
  }
}

#if FAST_DSP
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
#endif

#if FAST_DSP
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
#endif

/* Which of requant_run_dsp (1) and requant_run2_dsp (2) serves the node, or neither (0):
 * per-channel, every shift a right shift (from -31), the full int8 range. */
static int requant_run_fits(const mak_conv_data *d, const out_range *r) {
  if (!FAST_DSP || d->n_mult <= 1 || r->lo + r->offset != INT8_MIN || r->hi + r->offset != INT8_MAX)
    return 0;
  const int8_t *shift = mak_conv_shifts(d);
  int form = 2;
  for (int32_t c = 0; c < d->n_mult; ++c) {
    if (shift[c] > -1 || shift[c] < -31) return 0;
    if (shift[c] == -1) form = 1;
  }
  return form;
}

static void requant_block(const int32_t *acc, int32_t n, const mak_conv_data *d, int32_t c0,
                          const out_range *r, int8_t *o, int run) {
#if FAST_DSP
  if (run) {
    const rq_job j = {acc, d->mult + c0, mak_conv_shifts(d) + c0, o, o + n, r->offset};
    if (run == 2)
      requant_run2_dsp(&j);
    else
      requant_run_dsp(&j);
    return;
  }
#else
  (void)run;
#endif
  if (r->lo + r->offset == INT8_MIN && r->hi + r->offset == INT8_MAX)
    requant_as(acc, n, d, c0, r, o, true);
  else
    requant_as(acc, n, d, c0, r, o, false);
}

/* The depthwise convolution pixel by pixel, in blocks of channels. Not inlined: its sums stay
 * off the stack of mak_fast_dw1_s8's path. */
__attribute__((noinline)) static void dw_pixels(const ma_node *node, const mak_conv_data *d,
                                                const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *bias_t = mak_input(node, 2);
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3], mult = cout / cin;
  const int8_t *in = in_t->data, *f = node->inputs[1]->data;
  const int32_t *bias = bias_t ? bias_t->data : NULL;
  int8_t *out = node->outputs[0]->data;
  const out_range r = make_range(d->output_offset, d->act_min, d->act_max);
  const int run = requant_run_fits(d, &r);
#if FAST_DSP
  /* dw3x3_pixel_dsp: whole pixels in order, each four channels read over the window, then
   * written: blocks of four. */
  const bool whole = run && bias && mult == 1 && cout % 4 == 0 && g->kh == 3 && g->kw == 3 &&
                     g->dil_w == 1 && mak_dw_blocks_fit(in_t, node->outputs[0]);
  const uint32_t off2 = ((uint32_t)d->input_offset & 0xFFFFu) * 0x10001u;
#endif
  int32_t acc[MAK_DW_BLOCK];
  int8_t *o = out;
  /* Output pixels in order; a block's channels are all read before any is written (overlap.c's
   * rule). */
  for (int32_t b = 0; b < g->batches; ++b) {
    for (int32_t oy = 0; oy < g->out_h; ++oy) {
      const taps row = row_taps(in, f, g, b, oy, cin, cout);
      for (int32_t ox = 0; ox < g->out_w; ++ox, o += cout) {
        const taps t = pixel_taps(&row, g, ox, cin, cout);
#if FAST_DSP
        if (whole && t.rows == 3 && t.cols == 3) {
          const dwp_job j = {t.in, t.f, cout, (int32_t)t.in_row, (int32_t)t.f_row, bias, d->mult,
                             mak_conv_shifts(d), o, o + cout, off2, r.offset};
          dw3x3_pixel_dsp(&j);
          continue;
        }
#endif
        for (int32_t c0 = 0; c0 < cout; c0 += MAK_DW_BLOCK) {
          const int32_t n = cout - c0 < MAK_DW_BLOCK ? cout - c0 : MAK_DW_BLOCK;
          block_sums(&t, bias, c0, n, mult, cout, d->input_offset, acc);
          requant_block(acc, n, d, c0, &r, o + c0, run);
        }
      }
    }
  }
}

bool mak_fast_dwconv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  if (mak_fast_dw1_s8(node, d, g)) return true;
  if (!all_s8(node) || !offsets_ok(d->input_offset, d->output_offset)) return false;
  dw_pixels(node, d, g);
  return true;
}
