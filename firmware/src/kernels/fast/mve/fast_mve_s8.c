/* Helium int8 paths (see fast_mve_s8.h), written with GCC's arm_mve.h intrinsics.
 *
 * Dot products (CONV_2D, FULLY_CONNECTED): VMLADAVA adds the 16 products of an int8 input
 * vector and an int8 weight vector to a scalar, and VADDVA the 16 weights to another, so a sum
 * with the input offset is acc + offset * sum(w) = sum(w * (x + offset)): the same wrapping
 * int32 sum as the reference loop, in another order. Four output channels share each input
 * load. Depthwise: eight channels per pass over the taps, in int16 lanes (see sums8).
 *
 * Requantization, four lanes at once, is the integer steps of fast_s8_core.h's requant:
 *   - left shift: VSHL by max(shift, 0), wrapping like requant's unsigned shift;
 *   - doubling high multiply: VQRDMULH gives sat((2ab + 2^31) >> 32) = (ab + 2^30) >> 31,
 *     requant's value; it saturates only for a = b = INT32_MIN, and the multiplier is never
 *     INT32_MIN (mak_quantize_multiplier gives 0 or [2^30, 2^31));
 *   - right shift by e = min(-shift, 31): TFLite's RoundingDivideByPOT rounds half away from
 *     zero, VRSHL half up. With v = q 2^e + r (0 <= r < 2^e), TFLite gives q + (r > 2^(e-1) - 1)
 *     for v >= 0 and q + (r > 2^(e-1)) for v < 0; VRSHL gives q + (r >= 2^(e-1)), the same for
 *     v >= 0, and on v - 1 for v < 0: q + (r - 1 >= 2^(e-1)) = q + (r > 2^(e-1)). So 1 is
 *     subtracted from negative v first (VQADD of (v AND -e) >> 31, which is -1 exactly when
 *     v < 0 and e > 0). For v = INT32_MIN VQADD saturates, r = 0 there, and VRSHL rounds
 *     INT32_MIN to q as TFLite does;
 *   - clamp to the activation range minus the offset, add the offset, store the low bytes. */
#include "fast/mve/fast_mve_s8.h"

#if FAST_MVE /* elsewhere fast_mve_s8.h's entry points are stubs returning false */
#include "fast/mve/fast_mve_core.h"
#include "overlap.h"

/* mak_window_next, with the next pixel of the same output row taken inline: its column's taps
 * all inside the input (most columns) without mak_tap_range's divisions. */
static inline bool next_window(const mak_window_geom *g, mak_window *w) {
  if (w->ox < 0 || w->ox + 1 >= g->out_w || w->b >= g->batches) /* first, new row, or done */
    return mak_window_next(g, w);
  ++w->ox;
  ++w->pixel;
  w->ix0 += g->stride_w;
  if (w->ix0 >= 0 && w->ix0 + (g->kw - 1) * g->dil_w < g->in_w) {
    w->fx0 = 0;
    w->fx1 = g->kw;
  } else {
    mak_tap_range(w->ix0, g->dil_w, g->kw, g->in_w, &w->fx0, &w->fx1);
  }
  return true;
}

/* ---------------------------------------------------------- weight matrices */

/* The rows of a weight matrix against the input of one output pixel (or batch): the input is
 * `nr` runs of contiguous values, each against the same span of every row. */
typedef struct {
  const int8_t *in;
  int32_t f, n; /* f: offset in each row */
} span;

typedef struct {
  const int8_t *w;
  const int32_t *bias, *mult;
  const int8_t *shift;
  size_t row; /* bytes per row */
  int32_t rows, per_channel, off;
  out_range r;
  int32_t out_step; /* output elements from one pixel to the next (pixels_times_rows) */
} matrix;

/* Pairs of consecutive weight rows (from w, `row` bytes apart) against one input row x of n
 * values: for pair k, the dot products into dots[2k], dots[2k + 1] and the rows' sums into
 * dots[ROW_CHUNK + 2k], [ROW_CHUNK + 2k + 1]. The field order is the register order below. */
enum { ROW_CHUNK = MAK_ROW_CHUNK };

typedef struct {
  const int8_t *x, *w;
  int32_t n, row, pairs;
  int32_t *dots;
} unit_pairs_job;

/* unit_pairs' loop: tail-predicated (DLSTP/LETP: the lanes past the row load and add nothing),
 * the products (VMLADAVA) and sums (VADDVA) of two rows in even registers, each input vector
 * loaded once for both. In assembly: GCC 12 spilled the pointers. */
__attribute__((naked, noinline)) static void unit_pairs(
    __attribute__((unused)) const unit_pairs_job *job) { /* r0: read by the assembly */
  __asm__(
      "push {r4-r11, lr}\n\t"
      "ldm r0, {r1, r3, r7, r8, r9, r10}\n"
      "1:\n\t"
      "mov r11, r1\n\t"
      "adds r5, r3, r8\n\t"
      "add r12, r5, r8\n\t"
      "movs r0, #0\n\t"
      "movs r2, #0\n\t"
      "movs r4, #0\n\t"
      "movs r6, #0\n\t"
      "dlstp.8 lr, r7\n"
      "2:\n\t"
      "vldrb.8 q0, [r11], #16\n\t"
      "vldrb.8 q1, [r3], #16\n\t"
      "vmladava.s8 r0, q0, q1\n\t"
      "vaddva.s8 r4, q1\n\t"
      "vldrb.8 q1, [r5], #16\n\t"
      "vmladava.s8 r2, q0, q1\n\t"
      "vaddva.s8 r6, q1\n\t"
      "letp lr, 2b\n\t"
      "strd r0, r2, [r10]\n\t"
      "strd r4, r6, [r10, #64]\n\t"
      "adds r10, #8\n\t"
      "mov r3, r12\n\t"
      "subs r9, #1\n\t"
      "bne 1b\n\t"
      "pop {r4-r11, pc}\n");
}

/* out[0..rows) = requantized (bias + rows . x) for one input row x of m->row values: the rows'
 * dot products and sums ROW_CHUNK units at a time (mak_mve_row_dots), then
 * bias + dot + offset x sum and the requantization four units a vector. Every write of a chunk
 * follows all its reads. */
void mak_mve_row_dots(const int8_t *w, const int8_t *x, int32_t n, int32_t k, int32_t *dots) {
  if (k >= 2) {
    const unit_pairs_job job = {x, w, n, n, k / 2, dots};
    unit_pairs(&job);
  }
  if (k % 2) {
    dots[k - 1] = dots[ROW_CHUNK + k - 1] = 0;
    dot1(x, w + (size_t)(k - 1) * n, n, &dots[k - 1], &dots[ROW_CHUNK + k - 1]);
  }
}

__attribute__((noinline)) static void row_times_units(const matrix *m, const int8_t *x,
                                                      int8_t *out) {
  int32_t dots[2 * ROW_CHUNK];
  const out_range range = m->r; /* locals: the byte stores below may alias *m */
  const int32_t off = m->off;
  const rq4 tensor_q = rq_make(vdupq_n_s32(m->mult[0]), vdupq_n_s32(m->shift[0]));
  for (int32_t c0 = 0; c0 < m->rows; c0 += ROW_CHUNK) {
    const int32_t k = m->rows - c0 < ROW_CHUNK ? m->rows - c0 : ROW_CHUNK;
    mak_mve_row_dots(m->w + (size_t)c0 * m->row, x, (int32_t)m->row, k, dots);
    for (int32_t j = 0; j < k; j += 4) {
      const int32_t c = c0 + j, lanes = k - j < 4 ? k - j : 4;
      const mve_pred16_t p = vctp32q((uint32_t)lanes);
      const int32x4_t bias = m->bias ? vldrwq_z_s32(m->bias + c, p) : vdupq_n_s32(0);
      const int32x4_t acc = vmlaq_n_s32(vaddq_s32(bias, vldrwq_s32(dots + j)),
                                        vldrwq_s32(dots + ROW_CHUNK + j), off);
      const rq4 q = !m->per_channel ? tensor_q
                    : lanes == 4    ? rq_load(m->mult, m->shift, 1, c)
                                    : rq_load_tail(m->mult, m->shift, 1, c, lanes);
      vstrbq_p_s32(out + c, requant4(acc, q, &range), p);
    }
  }
}

/* out[0..rows) = requantized (bias + rows . input) for the input given by the spans. */
__attribute__((noinline)) static void rows_times_input(const matrix *m, const span *sp,
                                                       int32_t nr, int8_t *out) {
  if (nr == 1 && sp[0].f == 0 && sp[0].n == (int32_t)m->row) { /* one whole row */
    row_times_units(m, sp[0].in, out);
    return;
  }
  int32_t c = 0;
  for (; c < m->rows; c += 4) {
    const int32_t lanes = m->rows - c < 4 ? m->rows - c : 4;
    int32_t acc[4] = {0, 0, 0, 0};
    if (lanes == 4) {
      dots4 d = {0, 0, 0, 0, 0, 0, 0, 0};
      const int8_t *w = m->w + (size_t)c * m->row;
      for (int32_t i = 0; i < nr; ++i) d = dot4(d, sp[i].in, w + sp[i].f, m->row, sp[i].n);
      const int32_t *b = m->bias ? m->bias + c : acc;
      acc[0] = with_offset(b[0], d.a0, d.s0, m->off);
      acc[1] = with_offset(b[1], d.a1, d.s1, m->off);
      acc[2] = with_offset(b[2], d.a2, d.s2, m->off);
      acc[3] = with_offset(b[3], d.a3, d.s3, m->off);
    } else {
      for (int32_t k = 0; k < lanes; ++k) {
        const int8_t *w = m->w + (size_t)(c + k) * m->row;
        int32_t a = 0, s = 0;
        for (int32_t i = 0; i < nr; ++i) dot1(sp[i].in, w + sp[i].f, sp[i].n, &a, &s);
        acc[k] = with_offset(m->bias ? m->bias[c + k] : 0, a, s, m->off);
      }
    }
    const int32x4_t v = vldrwq_s32(acc);
    if (lanes == 4) {
      vstrbq_s32(out + c, requant4(v, rq_load(m->mult, m->shift, m->per_channel, c), &m->r));
    } else {
      const rq4 q = rq_load_tail(m->mult, m->shift, m->per_channel, c, lanes);
      vstrbq_p_s32(out + c, requant4(v, q, &m->r), vctp32q((uint32_t)lanes));
    }
  }
}

/* ------------------------------------------------------------------ CONV_2D */

enum { MAX_SPANS = 32 }; /* windows with more (tall or dilated filters): the other paths */

/* The window of one output pixel as spans: a filter row's taps inside the input (one tap
 * each with dilation). */
static int32_t window_spans(const int8_t *in, const mak_window_geom *g, const mak_window *w,
                            int32_t cin, span *sp) {
  const int32_t step = g->dil_w == 1 ? w->fx1 - w->fx0 : 1;
  int32_t n = 0;
  for (int32_t fy = w->fy0; fy < w->fy1; ++fy) {
    const size_t y = (size_t)w->b * g->in_h + w->iy0 + g->dil_h * fy;
    for (int32_t fx = w->fx0; fx < w->fx1; fx += step) {
      const size_t x = y * g->in_w + w->ix0 + g->dil_w * fx;
      sp[n++] = (span){in + x * cin, (fy * g->kw + fx) * cin, step * cin};
    }
  }
  return n;
}

/* Four output pixels at a time: their windows copied into rows of a buffer (im2col), taps
 * outside the input as -offset (so that they add w * 0), then every output channel's weight
 * row against the four rows: one weight load and its sum serve four pixels. All four windows
 * are read before any of the four pixels is written, earlier than overlap.c's rule needs. */
enum { PIXELS = 4, COLUMN_BYTES = 1152 }; /* on the stack: four 3x3x32 windows, two 3x3x64 */

/* dst[0..n) = src[0..n): whole vectors, then one predicated (nothing read past src + n). */
static inline void copy_bytes(int8_t *dst, const int8_t *src, int32_t n) {
  for (; n >= 16; n -= 16, dst += 16, src += 16) vstrbq_s8(dst, vldrbq_s8(src));
  if (n > 0) {
    const mve_pred16_t p = vctp8q((uint32_t)n);
    vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
  }
}

static inline void fill_bytes(int8_t *dst, int8_t v, int32_t n) {
  const int8x16_t vv = vdupq_n_s8(v);
  for (; n >= 16; n -= 16, dst += 16) vstrbq_s8(dst, vv);
  if (n > 0) vstrbq_p_s8(dst, vv, vctp8q((uint32_t)n));
}

/* The window of one pixel as one row of kh * kw * cin values. */
static void window_row(const int8_t *in, const mak_window_geom *g, const mak_window *w,
                       int32_t cin, int8_t pad, int8_t *row) {
  const int32_t tap_row = g->kw * cin;
  const size_t step = (size_t)g->dil_h * g->in_w * cin;
  const int8_t *src = in + (((size_t)w->b * g->in_h + w->iy0) * g->in_w + w->ix0) * cin;
  if (g->dil_w == 1 && w->fx0 == 0 && w->fx1 == g->kw && w->fy0 == 0 && w->fy1 == g->kh) {
    /* inside the input (most windows): one run of taps per filter row, nothing to fill */
    for (int32_t fy = 0; fy < g->kh; ++fy, row += tap_row, src += step)
      copy_bytes(row, src, tap_row);
    return;
  }
  fill_bytes(row, pad, g->kh * tap_row); /* clipped: the whole row padding, then the taps in */
  src += w->fy0 * step;
  row += w->fy0 * tap_row;
  for (int32_t fy = w->fy0; fy < w->fy1; ++fy, row += tap_row, src += step) {
    if (g->dil_w == 1) {
      copy_bytes(row + w->fx0 * cin, src + w->fx0 * cin, (w->fx1 - w->fx0) * cin);
    } else {
      for (int32_t fx = w->fx0; fx < w->fx1; ++fx)
        copy_bytes(row + fx * cin, src + (size_t)g->dil_w * fx * cin, cin);
    }
  }
}

/* bias + offset * (sum of the weights) of the k rows c.. (wrapping as the reference's int32
 * sum does): the part of each output channel's sum that does not depend on the input. */
static void row_bases(const matrix *m, int32_t c, int32_t k, int32_t *base) {
  for (int32_t j = 0; j < k; ++j) {
    const int8_t *w = m->w + (size_t)(c + j) * m->row;
    int32_t s = 0, i = 16;
    for (; i <= (int32_t)m->row; i += 16, w += 16) s = vaddvaq_s8(s, vldrbq_s8(w));
    if (i - 16 < (int32_t)m->row)
      s = vaddvaq_s8(s, vldrbq_z_s8(w, vctp8q((uint32_t)((int32_t)m->row + 16 - i))));
    base[j] = with_offset(m->bias ? m->bias[c + j] : 0, 0, s, m->off);
  }
}

/* row_bases of at most this many channels kept on the stack: the 1x1 rows read in place (the
 * wide pointwise layers), and beside the window copies, whose stack is the deepest. */
enum { BASE_CHANNELS = 256, COPY_BASE_CHANNELS = 64 };

/* One output channel's weight row w against the four rows r[0..3] of `row` bytes: the four dot
 * products into a[0..3], and with SUM (a line that adds q0 to %[s]) the sum of the weights. In
 * assembly: GCC 12 spills the pointers. VMLADAVA and VADDVA take even registers only
 * (constraint Te). The partial vector's predicated loads zero the lanes past the row; only q0
 * and q1, so that the caller's requantization constants stay in registers. */
#define CHANNEL_DOTS_ASM(SUM)                                                                 \
  "wls lr, %[n], 2f\n"                                                                        \
  "1:\n\t"                                                                                    \
  "vldrb.8 q0, [%[w]], #16\n\t"                                                               \
  "vldrb.8 q1, [%[r0]], #16\n\t" SUM "vmladava.s8 %[a0], q0, q1\n\t"                          \
  "vldrb.8 q1, [%[r1]], #16\n\t"                                                              \
  "vmladava.s8 %[a1], q0, q1\n\t"                                                             \
  "vldrb.8 q1, [%[r2]], #16\n\t"                                                              \
  "vmladava.s8 %[a2], q0, q1\n\t"                                                             \
  "vldrb.8 q1, [%[r3]], #16\n\t"                                                              \
  "vmladava.s8 %[a3], q0, q1\n\t"                                                             \
  "le lr, 1b\n"                                                                               \
  "2:\n\t"                                                                                    \
  "cmp %[p], #0\n\t"                                                                          \
  "beq 3f\n\t"                                                                                \
  "vmsr p0, %[p]\n\t"                                                                         \
  "vpstt\n\t"                                                                                 \
  "vldrbt.8 q0, [%[w]]\n\t"                                                                   \
  "vldrbt.8 q1, [%[r0]]\n\t" SUM "vmladava.s8 %[a0], q0, q1\n\t"                              \
  "vpst\n\t"                                                                                  \
  "vldrbt.8 q1, [%[r1]]\n\t"                                                                  \
  "vmladava.s8 %[a1], q0, q1\n\t"                                                             \
  "vpst\n\t"                                                                                  \
  "vldrbt.8 q1, [%[r2]]\n\t"                                                                  \
  "vmladava.s8 %[a2], q0, q1\n\t"                                                             \
  "vpst\n\t"                                                                                  \
  "vldrbt.8 q1, [%[r3]]\n\t"                                                                  \
  "vmladava.s8 %[a3], q0, q1\n"                                                               \
  "3:"
#define CHANNEL_DOTS_OUT                                                                      \
  [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [w] "+r"(w), [r0] "+r"(r0), \
      [r1] "+r"(r1), [r2] "+r"(r2), [r3] "+r"(r3)
#define CHANNEL_DOTS_IN [n] "r"(blocks), [p] "r"(tail)
#define CHANNEL_DOTS_CLOBBERS "q0", "q1", "lr", "memory", "cc"

/* s NULL: the weights' sum is not wanted (row_bases made it). */
static inline __attribute__((always_inline)) void channel_dots(const int8_t *w,
                                                               const int8_t *const r[4],
                                                               int32_t blocks, uint32_t tail,
                                                               int32_t a[4], int32_t *s) {
  const int8_t *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3];
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, sum = 0;
  if (s)
    __asm__(CHANNEL_DOTS_ASM("vaddva.s8 %[s], q0\n\t")
            : CHANNEL_DOTS_OUT, [s] "+Te"(sum)
            : CHANNEL_DOTS_IN
            : CHANNEL_DOTS_CLOBBERS);
  else
    __asm__(CHANNEL_DOTS_ASM("") : CHANNEL_DOTS_OUT : CHANNEL_DOTS_IN : CHANNEL_DOTS_CLOBBERS);
  a[0] = a0;
  a[1] = a1;
  a[2] = a2;
  a[3] = a3;
  if (s) *s = sum;
}

/* `channels` consecutive weight rows (from w, `n` bytes each) against the four rows r[0..3]:
 * the dot products into acc[pixel * 4 + channel] (acc as int32_t[4][4]). The field order is
 * the register order the loads below fill. */
typedef struct {
  const int8_t *w;
  const int8_t *r[4];
  int32_t n_after; /* the row's bytes after its first vector (rows of more than 32 bytes) */
  int32_t w_skip;  /* row minus the bytes a row's loads step over (16 per vector, the last too) */
  int32_t channels; /* 1 to 4 */
  int32_t *acc;
} channel_rows_job;

/* channel_rows' loop: each row's first vector starts the four sums (VMLADAV), the rest under a
 * tail-predicated loop (DLSTP/LETP: the last vector's lanes past the row are inactive, so they
 * load nothing and add nothing); four accumulators in even registers (VMLADAVA), the four row
 * pointers kept on the stack and reloaded by one LDM per channel. Whole in assembly: with its
 * 13 registers GCC 12 spilled. */
__attribute__((naked, noinline)) static void channel_rows(
    __attribute__((unused)) const channel_rows_job *job) { /* r0: read by the assembly */
  __asm__(
      "push {r4-r11, lr}\n\t"
      "ldm r0, {r1, r3, r5, r7, r9, r10, r11, r12}\n\t"
      "ldr r0, [r0, #32]\n\t"
      "push {r3, r5, r7, r9}\n"
      "1:\n\t"
      "vldrb.8 q0, [r1], #16\n\t"
      "vldrb.8 q1, [r3], #16\n\t"
      "vmladav.s8 r2, q0, q1\n\t"
      "vldrb.8 q1, [r5], #16\n\t"
      "vmladav.s8 r4, q0, q1\n\t"
      "vldrb.8 q1, [r7], #16\n\t"
      "vmladav.s8 r6, q0, q1\n\t"
      "vldrb.8 q1, [r9], #16\n\t"
      "vmladav.s8 r8, q0, q1\n\t"
      "dlstp.8 lr, r10\n"
      "2:\n\t"
      "vldrb.8 q0, [r1], #16\n\t"
      "vldrb.8 q1, [r3], #16\n\t"
      "vmladava.s8 r2, q0, q1\n\t"
      "vldrb.8 q1, [r5], #16\n\t"
      "vmladava.s8 r4, q0, q1\n\t"
      "vldrb.8 q1, [r7], #16\n\t"
      "vmladava.s8 r6, q0, q1\n\t"
      "vldrb.8 q1, [r9], #16\n\t"
      "vmladava.s8 r8, q0, q1\n\t"
      "letp lr, 2b\n\t"
      "str r2, [r0]\n\t"
      "str r4, [r0, #16]\n\t"
      "str r6, [r0, #32]\n\t"
      "str r8, [r0, #48]\n\t"
      "adds r0, #4\n\t"
      "ldm sp, {r3, r5, r7, r9}\n\t"
      "add r1, r11\n\t"
      "subs r12, #1\n\t"
      "bne 1b\n\t"
      "add sp, #16\n\t"
      "pop {r4-r11, pc}\n");
}

/* Two pixels' rows x0, x1 against pairs of consecutive weight rows (the second `w1_step` after
 * the first: the row, or 0 for a last single channel, which then fills two columns alike): the
 * dot products into acc[pixel * 4 + channel] (acc as int32_t[2][4]), and with pair_rows_sums
 * the rows' sums into sums[channel]. The field order is the register order the loads below
 * fill. */
typedef struct {
  const int8_t *w, *x0, *x1;
  int32_t n_after, w_skip, w1_step; /* as channel_rows_job's */
  int32_t pairs;
  int32_t *acc, *sums;
} pair_rows_job;

/* pair_rows' loop: channel_rows' for two pixels and two channels at a time, each of the four
 * loads per vector serving two products (four loads and four VMLADAVA for 64 products, where
 * channel_rows takes five and four); the two row pointers kept on the stack. */
__attribute__((naked, noinline)) static void pair_rows(
    __attribute__((unused)) const pair_rows_job *job) { /* r0: read by the assembly */
  __asm__(
      "push {r4-r11, lr}\n\t"
      "ldm r0, {r1, r5, r7, r9, r11, r12}\n\t"
      "ldr r10, [r0, #24]\n\t"
      "ldr r0, [r0, #28]\n\t"
      "push {r5, r7}\n"
      "1:\n\t"
      "add r3, r1, r12\n\t"
      "vldrb.8 q0, [r1], #16\n\t"
      "vldrb.8 q1, [r3], #16\n\t"
      "vldrb.8 q2, [r5], #16\n\t"
      "vmladav.s8 r2, q2, q0\n\t"
      "vmladav.s8 r4, q2, q1\n\t"
      "vldrb.8 q2, [r7], #16\n\t"
      "vmladav.s8 r6, q2, q0\n\t"
      "vmladav.s8 r8, q2, q1\n\t"
      "dlstp.8 lr, r9\n"
      "2:\n\t"
      "vldrb.8 q0, [r1], #16\n\t"
      "vldrb.8 q1, [r3], #16\n\t"
      "vldrb.8 q2, [r5], #16\n\t"
      "vmladava.s8 r2, q2, q0\n\t"
      "vmladava.s8 r4, q2, q1\n\t"
      "vldrb.8 q2, [r7], #16\n\t"
      "vmladava.s8 r6, q2, q0\n\t"
      "vmladava.s8 r8, q2, q1\n\t"
      "letp lr, 2b\n\t"
      "strd r2, r4, [r0]\n\t"
      "strd r6, r8, [r0, #16]\n\t"
      "adds r0, #8\n\t"
      "ldrd r5, r7, [sp]\n\t"
      "add r1, r3, r11\n\t"
      "subs r10, #1\n\t"
      "bne 1b\n\t"
      "add sp, #8\n\t"
      "pop {r4-r11, pc}\n");
}

/* pair_rows with the weight rows' sums (VADDVA of the two weight vectors, into sums[2k] and
 * sums[2k + 1]): for nodes too wide for the stacked weight sums. Two more accumulators, so the
 * step, the count and the sums pointer live on the stack. */
__attribute__((naked, noinline)) static void pair_rows_sums(
    __attribute__((unused)) const pair_rows_job *job) { /* r0: read by the assembly */
  __asm__(
      "push {r4-r11, lr}\n\t"
      "ldr r1, [r0]\n\t"
      "ldrd r5, r7, [r0, #4]\n\t"
      "ldrd r9, r11, [r0, #12]\n\t"
      "ldr r2, [r0, #20]\n\t"
      "ldr r3, [r0, #24]\n\t"
      "ldr r4, [r0, #32]\n\t"
      "ldr r0, [r0, #28]\n\t"
      "push {r2, r3, r4}\n\t"
      "push {r5, r7}\n"
      "1:\n\t"
      "ldr r3, [sp, #8]\n\t"
      "add r3, r1\n\t"
      "vldrb.8 q0, [r1], #16\n\t"
      "vldrb.8 q1, [r3], #16\n\t"
      "vldrb.8 q2, [r5], #16\n\t"
      "vaddv.s8 r10, q0\n\t"
      "vaddv.s8 r12, q1\n\t"
      "vmladav.s8 r2, q2, q0\n\t"
      "vmladav.s8 r4, q2, q1\n\t"
      "vldrb.8 q2, [r7], #16\n\t"
      "vmladav.s8 r6, q2, q0\n\t"
      "vmladav.s8 r8, q2, q1\n\t"
      "dlstp.8 lr, r9\n"
      "2:\n\t"
      "vldrb.8 q0, [r1], #16\n\t"
      "vldrb.8 q1, [r3], #16\n\t"
      "vldrb.8 q2, [r5], #16\n\t"
      "vaddva.s8 r10, q0\n\t"
      "vaddva.s8 r12, q1\n\t"
      "vmladava.s8 r2, q2, q0\n\t"
      "vmladava.s8 r4, q2, q1\n\t"
      "vldrb.8 q2, [r7], #16\n\t"
      "vmladava.s8 r6, q2, q0\n\t"
      "vmladava.s8 r8, q2, q1\n\t"
      "letp lr, 2b\n\t"
      "strd r2, r4, [r0]\n\t"
      "strd r6, r8, [r0, #16]\n\t"
      "adds r0, #8\n\t"
      "ldr r2, [sp, #16]\n\t"
      "strd r10, r12, [r2], #8\n\t"
      "str r2, [sp, #16]\n\t"
      "ldrd r5, r7, [sp]\n\t"
      "add r1, r3, r11\n\t"
      "ldr r2, [sp, #12]\n\t"
      "subs r2, #1\n\t"
      "str r2, [sp, #12]\n\t"
      "bne 1b\n\t"
      "add sp, #20\n\t"
      "pop {r4-r11, pc}\n");
}

/* pixels_times_rows for fewer than four output channels: per channel its four pixels' sums as
 * one vector, requantized with the channel's constants and stored `out_step` apart. */
__attribute__((noinline)) static void few_channels(const matrix *m, const int32_t *bases,
                                                   const int8_t *const r[4], int32_t n,
                                                   int8_t *o) {
  const int32_t blocks = (int32_t)(m->row >> 4);
  const uint32_t tail = vctp8q((uint32_t)(m->row & 15));
  const uint32x4_t at = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)m->out_step);
  for (int32_t c = 0; c < m->rows; ++c) {
    int32_t a[4], base;
    channel_dots(m->w + (size_t)c * m->row, r, blocks, tail, a, NULL);
    if (bases)
      base = bases[c];
    else
      row_bases(m, c, 1, &base);
    const int32_t q = m->per_channel ? c : 0;
    const int32x4_t v = requant4(vaddq_n_s32(vldrwq_s32(a), base),
                                 rq_make(vdupq_n_s32(m->mult[q]), vdupq_n_s32(m->shift[q])), &m->r);
    vstrbq_scatter_offset_p_s32(o + c, at, v, vctp32q((uint32_t)n));
  }
}

/* The dot products of pixels_times_rows for rows of 17 to 32 bytes: two vectors per row, the
 * second zero past the row's end (apart, so that the usual loop keeps its registers). */
__attribute__((noinline)) static void short_rows(const matrix *m, int32_t c, int32_t lanes,
                                                 const int8_t *const r[4], int32_t acc[4][4]) {
  const mve_pred16_t p = vctp8q((uint32_t)m->row - 16);
  const int8_t *w = m->w + (size_t)c * m->row;
  const int8x16_t x0 = vldrbq_s8(r[0]), y0 = vldrbq_z_s8(r[0] + 16, p);
  const int8x16_t x1 = vldrbq_s8(r[1]), y1 = vldrbq_z_s8(r[1] + 16, p);
  for (int32_t j = 0; j < lanes; ++j, w += m->row) {
    const int8x16_t w0 = vldrbq_s8(w), w1 = vldrbq_z_s8(w + 16, p);
    acc[0][j] = vmladavaq_s8(vmladavq_s8(x0, w0), y0, w1);
    acc[1][j] = vmladavaq_s8(vmladavq_s8(x1, w0), y1, w1);
    acc[2][j] = vmladavaq_s8(vmladavq_s8(vldrbq_s8(r[2]), w0), vldrbq_z_s8(r[2] + 16, p), w1);
    acc[3][j] = vmladavaq_s8(vmladavq_s8(vldrbq_s8(r[3]), w0), vldrbq_z_s8(r[3] + 16, p), w1);
  }
}

/* pixels_times_rows' dot products without row_bases made beforehand (wide nodes): each weight
 * row's sum taken on the way, and own[j] its bias + offset x sum (apart, so that the assembly
 * finds its even registers). */
__attribute__((noinline)) static void dots_with_sums(const matrix *m, int32_t c, int32_t lanes,
                                                     const int8_t *const r[4],
                                                     int32_t acc[4][4], int32_t own[4]) {
  const int32_t blocks = (int32_t)(m->row >> 4);
  const uint32_t tail = vctp8q((uint32_t)(m->row & 15));
  const int8_t *w = m->w + (size_t)c * m->row;
  for (int32_t j = 0; j < lanes; ++j, w += m->row) {
    int32_t a[4], s;
    channel_dots(w, r, blocks, tail, a, &s);
    acc[0][j] = a[0];
    acc[1][j] = a[1];
    acc[2][j] = a[2];
    acc[3][j] = a[3];
    own[j] = with_offset(m->bias ? m->bias[c + j] : 0, 0, s, m->off);
  }
}

/* Every output channel of the `n` (1 to 4) pixels whose rows start at col, `stride` apart
 * (rows past n repeat row 0), four channels at a time: each channel's four dot products
 * (channel_dots), then per pixel the four channels' sums as one vector plus their row_bases
 * (`bases`, or NULL: made here per four channels), requantized with the four channels'
 * constants and stored as four bytes, `out_step` apart from o. */
__attribute__((noinline)) static void pixels_times_rows(const matrix *m, const int32_t *bases,
                                                        const int8_t *col, size_t stride,
                                                        int32_t n, int8_t *o) {
  const int8_t *const r[4] = {col, n > 1 ? col + stride : col, n > 2 ? col + 2 * stride : col,
                              n > 3 ? col + 3 * stride : col};
  const rq4 tensor_q = rq_make(vdupq_n_s32(m->mult[0]), vdupq_n_s32(m->shift[0]));
  const out_range range = m->r; /* locals: the byte stores below may alias *m */
  const int32_t out_step = m->out_step;
  channel_rows_job job = {NULL, {r[0], r[1], r[2], r[3]}, (int32_t)m->row - 16,
                          (int32_t)m->row - (int32_t)((m->row + 15) & ~(size_t)15), 0, NULL};
  pair_rows_job pair_job = {NULL, r[0], r[1], job.n_after, job.w_skip, 0, 0, NULL, NULL};
  for (int32_t c = 0; c < m->rows; c += 4) {
    const int32_t lanes = m->rows - c < 4 ? m->rows - c : 4;
    int32_t acc[4][4], own[4]; /* acc[pixel][channel] */
    const int8_t *w = m->w + (size_t)c * m->row;
    if (m->row <= 16) { /* one vector per row: the four rows stay in registers */
      const mve_pred16_t p = vctp8q((uint32_t)m->row);
      const int8x16_t x0 = vldrbq_z_s8(r[0], p), x1 = vldrbq_z_s8(r[1], p);
      const int8x16_t x2 = vldrbq_z_s8(r[2], p), x3 = vldrbq_z_s8(r[3], p);
      for (int32_t j = 0; j < lanes; ++j, w += m->row) {
        const int8x16_t wv = vldrbq_z_s8(w, p); /* zero past the row: adds nothing */
        acc[0][j] = vmladavq_s8(x0, wv);
        acc[1][j] = vmladavq_s8(x1, wv);
        acc[2][j] = vmladavq_s8(x2, wv);
        acc[3][j] = vmladavq_s8(x3, wv);
      }
    } else if (m->row <= 32) {
      short_rows(m, c, lanes, r, acc);
    } else if (n == 2) { /* conv_by_pixels' pairs of wide windows, a last pair of a row */
      pair_job.w = w;
      pair_job.w1_step = lanes > 1 ? (int32_t)m->row : 0;
      pair_job.pairs = lanes / 2 > 0 ? lanes / 2 : 1;
      pair_job.acc = &acc[0][0];
      pair_job.sums = own;
      if (bases)
        pair_rows(&pair_job);
      else
        pair_rows_sums(&pair_job);
      if (lanes == 3) {
        pair_job.w = w + 2 * m->row;
        pair_job.w1_step = 0;
        pair_job.pairs = 1;
        pair_job.acc = &acc[0][2];
        pair_job.sums = own + 2;
        if (bases)
          pair_rows(&pair_job);
        else
          pair_rows_sums(&pair_job);
      }
      for (int32_t j = 0; j < lanes && !bases; ++j)
        own[j] = with_offset(m->bias ? m->bias[c + j] : 0, 0, own[j], m->off);
    } else if (!bases) {
      dots_with_sums(m, c, lanes, r, acc, own);
    } else {
      job.w = w;
      job.channels = lanes;
      job.acc = &acc[0][0];
      channel_rows(&job);
    }
    const int32_t *b = bases ? bases + c : own;
    if (!bases && m->row <= 32) row_bases(m, c, lanes, own); /* longer: dots_with_sums */
    int8_t *oc = o + c;
    if (lanes == 4) {
      const rq4 q = m->per_channel ? rq_load(m->mult, m->shift, 1, c) : tensor_q;
      const int32x4_t base = vldrwq_s32(b);
      for (int32_t p = 0; p < n; ++p, oc += out_step)
        vstrbq_s32(oc, requant4(vaddq_s32(vldrwq_s32(acc[p]), base), q, &range));
      continue;
    }
    const mve_pred16_t pc = vctp32q((uint32_t)lanes); /* lanes past `lanes`: never stored */
    const rq4 q = rq_load_tail(m->mult, m->shift, m->per_channel, c, lanes);
    const int32x4_t base = vldrwq_z_s32(b, pc);
    for (int32_t p = 0; p < n; ++p, oc += out_step)
      vstrbq_p_s32(oc, requant4(vaddq_s32(vldrwq_z_s32(acc[p], pc), base), q, &range), pc);
  }
}

/* pixels_times_rows, few_channels for fewer than four output channels, or for one pixel
 * row_times_units (the units a step share each input load instead): called from here, so that
 * no frame of the three is under another. */
static inline void pixels_or_one(const matrix *m, const int32_t *bases, const int8_t *col,
                                 size_t stride, int32_t n, int8_t *o) {
  if (n == 1) {
    row_times_units(m, col, o);
  } else if (m->rows < 4) {
    const int8_t *const r[4] = {col, col + stride, n > 2 ? col + 2 * stride : col,
                                n > 3 ? col + 3 * stride : col};
    few_channels(m, bases, r, n, o);
  } else {
    pixels_times_rows(m, bases, col, stride, n, o);
  }
}

/* The row_bases of all of m's rows into base (room for `room`), or NULL where there are more
 * or the convolution has two groups of PIXELS or fewer: pixels_times_rows then makes them per
 * four channels. */
static const int32_t *all_bases(const matrix *m, size_t pixels, int32_t *base, int32_t room) {
  if (m->rows > room || pixels <= 2 * PIXELS) return NULL; /* few: made where used */
  row_bases(m, 0, m->rows, base);
  return base;
}

/* A 1x1 convolution with stride 1 whose output is far enough below its input (overlap.h's
 * MVE rows rule): the input pixels are the rows already, read in place. Not inlined, nor are
 * the other two ways below, so that only the way taken has its stack. */
__attribute__((noinline)) static void conv_1x1_in_place(const matrix *m, const int8_t *in, size_t pixels, int8_t *out) {
  int32_t base[BASE_CHANNELS];
  const int32_t *bases = all_bases(m, pixels, base, BASE_CHANNELS);
  for (size_t p = 0; p < pixels; p += PIXELS) {
    const int32_t n = pixels - p < PIXELS ? (int32_t)(pixels - p) : PIXELS;
    pixels_or_one(m, bases, in + p * m->row, m->row, n, out + p * m->rows);
  }
}

/* A grouped convolution's window as one row per group (the group's `fin` channels of each
 * tap, tap after tap: its filter rows' layout), groups one after the other. */
static void window_row_groups(const int8_t *in, const mak_window_geom *g, const mak_window *w,
                              int32_t cin, int32_t fin, int8_t pad, int8_t *row) {
  const int32_t per_group = g->kh * g->kw * fin;
  const size_t step_y = (size_t)g->dil_h * g->in_w * cin, step_x = (size_t)g->dil_w * cin;
  const int8_t *src_row = in + (((size_t)w->b * g->in_h + w->iy0) * g->in_w + w->ix0) * cin;
  const mve_pred16_t p = vctp8q((uint32_t)(fin < 16 ? fin : 16));
  const int8x16_t fill = vdupq_n_s8(pad);
  for (int32_t fy = 0; fy < g->kh; ++fy, src_row += step_y) {
    const bool row_inside = fy >= w->fy0 && fy < w->fy1;
    const int8_t *src = src_row; /* not read where the tap is outside */
    for (int32_t fx = 0; fx < g->kw; ++fx, src += step_x, row += fin) {
      const bool inside = row_inside && fx >= w->fx0 && fx < w->fx1;
      int8_t *dst = row;
      if (fin <= 16) { /* one predicated vector per group (most grouped filters are thin) */
        for (int32_t c = 0; c < cin; c += fin, dst += per_group)
          vstrbq_p_s8(dst, inside ? vldrbq_z_s8(src + c, p) : fill, p);
        continue;
      }
      for (int32_t c = 0; c < cin; c += fin, dst += per_group) {
        if (inside)
          copy_bytes(dst, src + c, fin);
        else
          fill_bytes(dst, pad, fin);
      }
    }
  }
}

/* Four pixels at a time (see PIXELS): their windows copied into rows, one group after the
 * other for grouped convolutions (filters of fin < cin channels), then each group's output
 * channels against its rows. Every window is read before any of the four pixels is written. */
__attribute__((noinline)) static void conv_by_pixels(const matrix *m, const int8_t *in,
                                                     const mak_window_geom *geom, int32_t cin,
                                                     int32_t fin, int8_t *out) {
  const mak_window_geom local = *geom, *g = &local; /* not reloaded after each byte store */
  int8_t col[COLUMN_BYTES];
  int32_t base[COPY_BASE_CHANNELS];
  const size_t pixels = (size_t)g->batches * g->out_h * g->out_w;
  const int32_t *bases = all_bases(m, pixels, base, COPY_BASE_CHANNELS); /* across groups */
  const int32_t k = g->kh * g->kw * cin, groups = cin / fin, per_group = m->rows / groups;
  const int32_t group = k * PIXELS <= COLUMN_BYTES ? PIXELS : 2; /* pixels copied at once */
  mak_window w;
  mak_window_start(g, &w);
  bool more = next_window(g, &w);
  while (more) {
    const size_t first = w.pixel;
    int32_t n = 0;
    for (; n < group && more; ++n, more = next_window(g, &w)) {
      if (groups == 1)
        window_row(in, g, &w, cin, (int8_t)-m->off, col + n * k);
      else
        window_row_groups(in, g, &w, cin, fin, (int8_t)-m->off, col + n * k);
    }
    if (groups == 1) {
      pixels_or_one(m, bases, col, (size_t)k, n, out + first * m->out_step);
      continue;
    }
    for (int32_t i = 0; i < groups; ++i) {
      const int32_t c = i * per_group, mi = m->per_channel ? c : 0;
      const matrix mg = {m->w + (size_t)c * m->row,
                         m->bias ? m->bias + c : NULL,
                         m->mult + mi,
                         m->shift + mi,
                         m->row,
                         per_group,
                         m->per_channel,
                         m->off,
                         m->r,
                         m->out_step};
      const int8_t *rows = col + (size_t)i * m->row;
      pixels_or_one(&mg, bases ? bases + c : NULL, rows, (size_t)k, n,
                        out + first * m->out_step + c);
    }
  }
}

/* Pixel by pixel, each window's runs against the weight rows in place. */
__attribute__((noinline)) static void conv_by_spans(const matrix *m, const int8_t *in,
                                                    const mak_window_geom *g, int32_t cin,
                                                    int8_t *out) {
  span sp[MAX_SPANS];
  mak_window w;
  mak_window_start(g, &w);
  while (next_window(g, &w))
    rows_times_input(m, sp, window_spans(in, g, &w, cin, sp), out + w.pixel * (size_t)m->rows);
}

bool mak_mve_conv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *f_t = node->inputs[1], *bias_t = mak_input(node, 2);
  const int32_t most = g->dil_w == 1 ? g->kh : g->kh * g->kw;
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3], fin = f_t->dims[3];
  if (!all_s8(node) || !offsets_ok(d->input_offset, d->output_offset)) return false;
  if (fin != cin) { /* grouped: window copies only */
    const int32_t groups = fin > 0 && cin % fin == 0 ? cin / fin : 0;
    if (groups == 0 || cout % groups != 0 || g->kh * g->kw * cin * 2 > COLUMN_BYTES ||
        d->input_offset < -127 || d->input_offset > 128)
      return false;
    const matrix m = {f_t->data, bias_t ? bias_t->data : NULL, d->mult, mak_conv_shifts(d),
                      (size_t)g->kh * g->kw * fin, cout, d->n_mult > 1, d->input_offset,
                      make_range(d->output_offset, d->act_min, d->act_max), cout};
    conv_by_pixels(&m, in_t->data, g, cin, fin, node->outputs[0]->data);
    return true;
  }
  if (most > MAX_SPANS) return false;
  const matrix m = {f_t->data,
                    bias_t ? bias_t->data : NULL,
                    d->mult,
                    mak_conv_shifts(d),
                    (size_t)g->kh * g->kw * cin,
                    cout,
                    d->n_mult > 1,
                    d->input_offset,
                    make_range(d->output_offset, d->act_min, d->act_max),
                    cout};
  const int8_t *in = in_t->data;
  int8_t *out = node->outputs[0]->data;
  const size_t pixels = (size_t)g->batches * g->out_h * g->out_w;
  if (g->kh == 1 && g->kw == 1 && g->stride_h == 1 && g->stride_w == 1 && g->pad_h == 0 &&
      g->pad_w == 0 && mak_mve_rows_fit(in_t, node->outputs[0], (int64_t)pixels, cin, cout)) {
    conv_1x1_in_place(&m, in, pixels, out);
    return true;
  }
  if ((int32_t)m.row * 2 <= COLUMN_BYTES && m.off >= -127 && m.off <= 128) {
    conv_by_pixels(&m, in, g, cin, cin, out);
    return true;
  }
  conv_by_spans(&m, in, g, cin, out);
  return true;
}

/* ---------------------------------------------------------- FULLY_CONNECTED */

/* Rows of at most SHORT_ROW values (FULLY_CONNECTED of small depth, such as hello_world's
 * first layer of one value), where a VMLADAVA would leave most of its 16 lanes empty: four
 * units per pass in int32 lanes, each input value plus the offset times the four units'
 * weights (a gather of every depth-th byte), wrapping as the reference's sum. The input row
 * is read whole before the first write. */
enum { SHORT_ROW = 8 };

static void fc_short_rows(const mak_fc_s8_job *fc, const out_range *r, const int8_t *x,
                          int8_t *out) {
  const int32_t units = fc->units, depth = fc->depth;
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), (uint32_t)depth);
  const rq4 tensor_q = rq_load(fc->mult, fc->shift, 0, 0);
  int32_t xo[SHORT_ROW];
  for (int32_t i = 0; i < depth; ++i) xo[i] = x[i] + fc->input_offset;
  for (int32_t c = 0; c < units; c += 4) {
    const int32_t lanes = units - c < 4 ? units - c : 4;
    const mve_pred16_t p = vctp32q((uint32_t)lanes);
    const int8_t *w = fc->w + (size_t)c * depth;
    int32x4_t acc = fc->bias ? vldrwq_z_s32(fc->bias + c, p) : vdupq_n_s32(0);
    for (int32_t i = 0; i < depth; ++i)
      acc = vmlaq_n_s32(acc, vldrbq_gather_offset_z_s32(w + i, offsets, p), xo[i]);
    const rq4 q = fc->n_mult > 1 ? rq_load_tail(fc->mult, fc->shift, 1, c, lanes) : tensor_q;
    vstrbq_p_s32(out + c, requant4(acc, q, r), p);
  }
}

/* Whether the batches may go MAK_MVE_ROWS at a time (conv_1x1_in_place's order: overlap.h's
 * MVE rows rule, from the data pointers, the node's descriptors holding nothing else). */
static bool batch_rows_fit(const mak_fc_s8_job *fc) {
  const intptr_t in = (intptr_t)fc->in, out = (intptr_t)fc->out;
  const int64_t rows = fc->batches;
  if (in + rows * fc->depth <= out || out + rows * fc->units <= in) return true;
  const int64_t need = mak_mve_rows_need(rows, fc->depth, fc->units);
  return need == MAK_ANY_OFFSET || in - out >= need;
}

bool mak_mve_fc_s8(const mak_fc_s8_job *fc) {
  if (!offsets_ok(fc->input_offset, fc->output_offset)) return false;
  if (fc->depth <= SHORT_ROW) {
    const out_range r = make_range(fc->output_offset, fc->act_min, fc->act_max);
    for (int32_t b = 0; b < fc->batches; ++b)
      fc_short_rows(fc, &r, fc->in + (size_t)b * fc->depth, fc->out + (size_t)b * fc->units);
    return true;
  }
  const matrix m = {fc->w,
                    fc->bias,
                    fc->mult,
                    fc->shift,
                    (size_t)fc->depth,
                    fc->units,
                    fc->n_mult > 1,
                    fc->input_offset,
                    make_range(fc->output_offset, fc->act_min, fc->act_max),
                    fc->units};
  if (fc->batches > 1 && batch_rows_fit(fc)) { /* batches as a 1x1 convolution's pixels */
    conv_1x1_in_place(&m, fc->in, (size_t)fc->batches, fc->out);
    return true;
  }
  for (int32_t b = 0; b < fc->batches; ++b)
    row_times_units(&m, fc->in + (size_t)b * fc->depth, fc->out + (size_t)b * fc->units);
  return true;
}

/* -------------------------------------------------------- DEPTHWISE_CONV_2D */

/* The taps of one output pixel: the input at channel 0 of the window's first tap, the filter
 * at that tap, how many rows and columns fall inside the input. */
typedef struct {
  const int8_t *in, *f;
  int32_t rows, cols;
} taps;

/* A group of eight channels' requantization constants in the lanes of their sums (sums8: even
 * channels, then odd), made once per node (dw_table) so that each group loads them whole
 * instead of gathering them and deriving the shifts for every pixel; its biases come by VLD2
 * (even and odd channels apart) from the node's own array. */
typedef struct {
  int32_t mult[8];
  int8_t left[8], right[8]; /* as rq4's, right in [-31, 0] */
} dw_consts;

/* Tables of up to 128 channels (768 bytes of stack); wider nodes, and nodes whose channels are
 * not whole groups of eight, gather their constants (requant_gathered). */
enum { DW_TABLE_GROUPS = 16 };

/* What every pixel of a depthwise convolution shares. */
typedef struct {
  const dw_consts *tab; /* NULL: more channels, or an output range outside int16 */
  const int32_t *bias, *mult;
  const int8_t *shift;
  int32_t cout, dmult, per_channel;
  int16_t off; /* offsets_ok: x + off fits an int16 */
  size_t in_row, in_col, f_row; /* steps between tap rows and columns */
  uint16x8_t gather;            /* input channel of lane k, minus the group's first's */
  bool gather_fixed;            /* `gather` holds for every group of eight */
  out_range r;
} dw_node;

static taps window_taps(const int8_t *in, const int8_t *f, const mak_window_geom *g,
                        const mak_window *w, int32_t cin, int32_t cout) {
  const size_t row = (size_t)w->b * g->in_h + w->iy0 + g->dil_h * w->fy0;
  const taps t = {in + (row * g->in_w + w->ix0 + g->dil_w * w->fx0) * cin,
                  f + ((size_t)w->fy0 * g->kw + w->fx0) * cout, w->fy1 - w->fy0,
                  w->fx1 - w->fx0};
  return t;
}

/* Even and odd channels of a group of eight: int32 sums of w * (x + off). */
typedef struct {
  int32x4_t even, odd;
} sums8;

static inline sums8 mac8(sums8 a, int16x8_t x, int16x8_t w) {
  a.even = vaddq_s32(a.even, vmullbq_int_s16(x, w));
  a.odd = vaddq_s32(a.odd, vmulltq_int_s16(x, w));
  return a;
}

/* Eight channels c.. of depth multiplier 1: whole vectors, no predication. */
static inline __attribute__((always_inline)) sums8 dw8_full(const taps *t, const dw_node *n,
                                                            int32_t c, sums8 a) {
  const int8_t *ip = t->in + c, *fp = t->f + c;
  for (int32_t y = 0; y < t->rows; ++y, ip += n->in_row, fp += n->f_row) {
    const int8_t *i = ip, *k = fp;
    for (int32_t x = 0; x < t->cols; ++x, i += n->in_col, k += n->cout)
      a = mac8(a, vaddq_n_s16(vldrbq_s16(i), n->off), vldrbq_s16(k));
  }
  return a;
}

/* Input channel of lane k of the group at c, relative to c / mult: (c % mult + k) / mult. */
static uint16x8_t gather_offsets(int32_t c, int32_t mult) {
  uint16_t lane_in[8];
  for (int32_t k = 0; k < 8; ++k) lane_in[k] = (uint16_t)((c % mult + k) / mult);
  return vld1q_u16(lane_in);
}

/* `lanes` (1 to 8) channels c.. of any depth multiplier: channel c + k reads input channel
 * (c + k) / mult (a gather); lanes past `lanes` load nothing and add (0 + off) * 0. */
static sums8 dw8_any(const taps *t, const dw_node *n, int32_t c, int32_t lanes, sums8 a) {
  const mve_pred16_t p = vctp16q((uint32_t)lanes);
  const uint16x8_t at = n->gather_fixed ? n->gather : gather_offsets(c, n->dmult);
  const int8_t *ip = t->in + c / n->dmult, *fp = t->f + c;
  for (int32_t y = 0; y < t->rows; ++y, ip += n->in_row, fp += n->f_row) {
    const int8_t *i = ip, *k = fp;
    for (int32_t x = 0; x < t->cols; ++x, i += n->in_col, k += n->cout) {
      const int16x8_t xv = vaddq_n_s16(vldrbq_gather_offset_z_s16(i, at, p), n->off);
      a = mac8(a, xv, vldrbq_z_s16(k, p));
    }
  }
  return a;
}

/* The requantization of `lanes` (1 to 8) channels c.., their even and odd lanes apart (the
 * gathers read nothing past `lanes`). */
typedef struct {
  rq4 even, odd;
  int32x4_t bias_even, bias_odd;
} dw_q;

static inline __attribute__((always_inline)) dw_q dw_params(const dw_node *n, int32_t c,
                                                            int32_t lanes) {
  const uint32x4_t even = vidupq_n_u32(0, 2), odd = vidupq_n_u32(1, 2);
  const mve_pred16_t pe = vctp32q((uint32_t)(lanes + 1) / 2), po = vctp32q((uint32_t)lanes / 2);
  dw_q q;
  if (n->per_channel) {
    q.even = rq_make(vldrwq_gather_shifted_offset_z_s32(n->mult + c, even, pe),
                     vldrbq_gather_offset_z_s32(n->shift + c, even, pe));
    q.odd = rq_make(vldrwq_gather_shifted_offset_z_s32(n->mult + c, odd, po),
                    vldrbq_gather_offset_z_s32(n->shift + c, odd, po));
  } else {
    q.even = q.odd = rq_make(vdupq_n_s32(n->mult[0]), vdupq_n_s32(n->shift[0]));
  }
  q.bias_even = q.bias_odd = vdupq_n_s32(0);
  if (n->bias) {
    q.bias_even = vldrwq_gather_shifted_offset_z_s32(n->bias + c, even, pe);
    q.bias_odd = vldrwq_gather_shifted_offset_z_s32(n->bias + c, odd, po);
  }
  return q;
}

/* The eight channels' sums requantized, back in channel order as int16 lanes. */
static inline __attribute__((always_inline)) int16x8_t requant8(sums8 a, const dw_q *q,
                                                                const out_range *r) {
  const int32x4_t e = requant4(vaddq_s32(a.even, q->bias_even), q->even, r);
  const int32x4_t o = requant4(vaddq_s32(a.odd, q->bias_odd), q->odd, r);
  return vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), e), o);
}

/* Without a table: the constants gathered for the group (one call for every use, so that the
 * rarely taken way adds little code). */
__attribute__((noinline)) static int16x8_t requant_gathered(sums8 a, const dw_node *n, int32_t c,
                                                            int32_t lanes) {
  const dw_q q = dw_params(n, c, lanes);
  return requant8(a, &q, &n->r);
}

static sums8 zero_sums(void) {
  const sums8 a = {vdupq_n_s32(0), vdupq_n_s32(0)};
  return a;
}

/* The biases of the whole group c..c + 7: where its sums start. */
static inline sums8 table_bias(const dw_node *n, int32_t c) {
  if (!n->bias) return zero_sums();
  const int32x4x2_t b = vld2q_s32(n->bias + c);
  const sums8 a = {b.val[0], b.val[1]};
  return a;
}

/* requant4 up to the rounding shift, with constants of a table. */
static inline int32x4_t rq_table(int32x4_t acc, const int32_t *mult, const int8_t *left,
                                 const int8_t *right) {
  const int32x4_t e = vldrbq_s32(right);
  int32x4_t v = vqrdmulhq_s32(vshlq_s32(acc, vldrbq_s32(left)), vldrwq_s32(mult));
  v = vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, e), 31));
  return vrshlq_s32(v, e);
}

/* A group's sums (biases included) requantized with its table entry, in channel order as int16
 * lanes: narrowed with saturation to int16 first, then clamped, which is the same as clamping
 * the int32 values since the range is inside int16 (dw_table_ok), so that the clamp and the
 * offset take one instruction for eight lanes. */
static inline __attribute__((always_inline)) int16x8_t requant_table(sums8 a, const dw_consts *k,
                                                                     const out_range *r) {
  int16x8_t v = vqmovnbq_s32(vdupq_n_s16(0), rq_table(a.even, k->mult, k->left, k->right));
  v = vqmovntq_s32(v, rq_table(a.odd, k->mult + 4, k->left + 4, k->right + 4));
  v = vminq_s16(vmaxq_s16(v, vdupq_n_s16((int16_t)r->lo)), vdupq_n_s16((int16_t)r->hi));
  return vaddq_n_s16(v, (int16_t)r->offset);
}

/* Whether a node's channels are whole groups for the table and its output range and offset fit
 * int16 lanes (requant_table). */
static bool dw_table_ok(const out_range *r, int32_t cout) {
  return cout <= 8 * DW_TABLE_GROUPS && cout % 8 == 0 && r->lo >= INT16_MIN &&
         r->hi <= INT16_MAX && r->offset >= INT16_MIN && r->offset <= INT16_MAX;
}

/* The table of every group of a node's channels (whole groups: dw_table_ok). */
static void dw_table(const dw_node *n, dw_consts *tab) {
  for (int32_t c = 0; c < n->cout; c += 8) { /* VLD2 splits the even and odd channels */
    dw_consts *k = tab + c / 8;
    const uint32x4_t even = vidupq_n_u32(0, 2), odd = vidupq_n_u32(1, 2);
    const int32x4_t se = n->per_channel ? vldrbq_gather_offset_s32(n->shift + c, even)
                                        : vdupq_n_s32(n->shift[0]);
    const int32x4_t so = n->per_channel ? vldrbq_gather_offset_s32(n->shift + c, odd) : se;
    const int32x4_t m0 = vdupq_n_s32(n->mult[0]);
    const int32x4x2_t m = n->per_channel ? vld2q_s32(n->mult + c) : (int32x4x2_t){{m0, m0}};
    const rq4 e = rq_make(m.val[0], se), o = rq_make(m.val[1], so);
    vstrwq_s32(k->mult, e.mult);
    vstrwq_s32(k->mult + 4, o.mult);
    vstrbq_s32(k->left, e.left);
    vstrbq_s32(k->left + 4, o.left);
    vstrbq_s32(k->right, e.right);
    vstrbq_s32(k->right + 4, o.right);
  }
}

/* One block of k <= MAK_DW_BLOCK output channels c0.. of one pixel: every sum, then every
 * write (overlap.c's rule for a block; with depth multiplier 1 a group of eight, read then
 * written, keeps it too). */
static void dw_block(const taps *t, const dw_node *n, int32_t c0, int32_t k, int8_t *o) {
  if (n->dmult == 1 && k % 8 == 0) {
    for (int32_t c = c0; c < c0 + k; c += 8) {
      if (n->tab) {
        const dw_consts *e = n->tab + c / 8;
        vstrbq_s16(o + c, requant_table(dw8_full(t, n, c, table_bias(n, c)), e, &n->r));
        continue;
      }
      vstrbq_s16(o + c, requant_gathered(dw8_full(t, n, c, zero_sums()), n, c, 8));
    }
    return;
  }
  int16x8_t v[MAK_DW_BLOCK / 8];
  for (int32_t j = 0; j < k; j += 8) {
    const int32_t lanes = k - j < 8 ? k - j : 8;
    if (n->tab) { /* c0 + j: a multiple of 8 */
      const dw_consts *e = n->tab + (c0 + j) / 8;
      v[j / 8] = requant_table(dw8_any(t, n, c0 + j, lanes, table_bias(n, c0 + j)), e, &n->r);
      continue;
    }
    v[j / 8] = requant_gathered(dw8_any(t, n, c0 + j, lanes, zero_sums()), n, c0 + j, lanes);
  }
  for (int32_t j = 0; j < k; j += 8)
    vstrbq_p_s16(o + c0 + j, v[j / 8], vctp16q((uint32_t)(k - j < 8 ? k - j : 8)));
}

/* x + off for the eight channels c.. at input tap i: contiguous (depth multiplier 1), or the
 * node's fixed gather (all lanes one input channel where 8 divides the multiplier). */
static inline int16x8_t tap_x(const int8_t *i, const dw_node *n, bool gather) {
  const int16x8_t x = gather ? vldrbq_gather_offset_s16(i, n->gather) : vldrbq_s16(i);
  return vaddq_n_s16(x, n->off);
}

/* Two pixels whose windows take the same taps (in1, o1: the second's input and output),
 * channels a multiple of 8, fixed gathers: each weight load and the requantization constants
 * serve both. Out of overlap.c's order: only where overlap.h's pair rule allows the offsets. */
static inline __attribute__((always_inline)) void dw_pair(const taps *t, const int8_t *in1,
                                                          const dw_node *n, bool gather,
                                                          int8_t *o, int8_t *o1) {
  for (int32_t c = 0; c < n->cout; c += 8) {
    const dw_consts *e = n->tab ? n->tab + c / 8 : NULL;
    sums8 a = e ? table_bias(n, c) : zero_sums(), b = a;
    const int8_t *ip = t->in + c / n->dmult, *jp = in1 + c / n->dmult, *fp = t->f + c;
    for (int32_t y = 0; y < t->rows; ++y, ip += n->in_row, jp += n->in_row, fp += n->f_row) {
      const int8_t *i = ip, *j = jp, *k = fp;
      for (int32_t x = 0; x < t->cols; ++x, i += n->in_col, j += n->in_col, k += n->cout) {
        const int16x8_t wv = vldrbq_s16(k);
        a = mac8(a, tap_x(i, n, gather), wv);
        b = mac8(b, tap_x(j, n, gather), wv);
      }
    }
    if (e) {
      vstrbq_s16(o + c, requant_table(a, e, &n->r));
      vstrbq_s16(o1 + c, requant_table(b, e, &n->r));
      continue;
    }
    vstrbq_s16(o + c, requant_gathered(a, n, c, 8));
    vstrbq_s16(o1 + c, requant_gathered(b, n, c, 8));
  }
}

static bool same_taps(const mak_window *a, const mak_window *b) {
  return a->fy0 == b->fy0 && a->fy1 == b->fy1 && a->fx0 == b->fx0 && a->fx1 == b->fx1;
}

static void dw_single(const taps *t, const dw_node *n, int8_t *o) {
  for (int32_t c0 = 0; c0 < n->cout; c0 += MAK_DW_BLOCK)
    dw_block(t, n, c0, n->cout - c0 < MAK_DW_BLOCK ? n->cout - c0 : MAK_DW_BLOCK, o);
}

/* The window of output pixel (b, oy, ox): mak_window_next from the pixel before it. */
static mak_window window_at(const mak_window_geom *g, int32_t b, int32_t oy, int32_t ox) {
  mak_window w = {.b = b, .oy = oy, .ox = ox - 1};
  mak_window_next(g, &w);
  return w;
}

/* Images narrower than tall (keyword spotting's 5-wide maps) where overlap.h's rule allows the
 * offsets: pixels one above the other, which take the same taps away from the top and bottom
 * edges, in pairs. Its own function, so that the usual path's code stays as GCC lays it out. */
__attribute__((noinline)) static void dw_columns(const int8_t *in, const int8_t *f,
                                                 const mak_window_geom *g, int32_t cin,
                                                 const dw_node *n, int8_t *out) {
  for (int32_t b = 0; b < g->batches; ++b) {
    for (int32_t oy = 0; oy < g->out_h; oy += 2) {
      const bool two = oy + 1 < g->out_h;
      mak_window w = window_at(g, b, oy, 0), w1 = two ? window_at(g, b, oy + 1, 0) : w;
      for (int32_t ox = 0; ox < g->out_w; ++ox) {
        if (ox > 0) { /* along the rows: next_window's inline step */
          next_window(g, &w);
          if (two)
            next_window(g, &w1);
          else
            w1 = w;
        }
        const taps t = window_taps(in, f, g, &w, cin, n->cout);
        int8_t *o = out + w.pixel * (size_t)n->cout;
        const taps t1 = window_taps(in, f, g, &w1, cin, n->cout);
        int8_t *o1 = out + w1.pixel * (size_t)n->cout;
        if (w1.pixel == w.pixel) {
          dw_single(&t, n, o);
        } else if (!same_taps(&w, &w1)) {
          dw_single(&t, n, o);
          dw_single(&t1, n, o1);
        } else if (n->dmult == 1) { /* two copies of the loop, one load form each */
          dw_pair(&t, t1.in, n, false, o, o1);
        } else {
          dw_pair(&t, t1.in, n, true, o, o1);
        }
      }
    }
  }
}

/* A map one column wide under a filter one column wide, as the same bytes in one row under a
 * filter one row wide: its windows are then one run of taps (the tap loops run once per window,
 * not once per filter row), and neighbouring pixels pair side by side. */
static mak_window_geom as_row(const mak_window_geom *g) {
  const mak_window_geom t = {g->batches, 1,           g->in_h,     1,
                             g->out_h,   1,           g->kh,       g->stride_w,
                             g->stride_h, g->dil_w,   g->dil_h,    g->pad_w,
                             g->pad_h};
  return t;
}

bool mak_mve_dwconv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g) {
  const ma_tensor *in_t = node->inputs[0], *bias_t = mak_input(node, 2);
  mak_window_geom row;
  if (g->in_w == 1 && g->out_w == 1 && g->kw == 1) {
    row = as_row(g);
    g = &row;
  }
  const int32_t cin = in_t->dims[3], cout = node->outputs[0]->dims[3];
  if (!all_s8(node) || !offsets_ok(d->input_offset, d->output_offset)) return false;
  const int32_t dmult = cout / cin;
  const out_range r = make_range(d->output_offset, d->act_min, d->act_max);
  dw_consts tab[DW_TABLE_GROUPS];
  const dw_node n = {dw_table_ok(&r, cout) ? tab : NULL,
                     bias_t ? bias_t->data : NULL,
                     d->mult,
                     mak_conv_shifts(d),
                     cout,
                     dmult,
                     d->n_mult > 1,
                     (int16_t)d->input_offset,
                     (size_t)g->dil_h * g->in_w * cin,
                     (size_t)g->dil_w * cin,
                     (size_t)g->kw * cout,
                     gather_offsets(0, dmult),
                     8 % dmult == 0 || dmult % 8 == 0, /* groups start at multiples of 8 */
                     r};
  if (n.tab) dw_table(&n, tab);
  const int8_t *in = in_t->data, *f = node->inputs[1]->data;
  int8_t *out = node->outputs[0]->data;
  /* Pairs of pixels run where overlap.h's rules allow the offsets (always where the tensors
   * share no byte). */
  const bool can_pair = cout % 8 == 0 && n.gather_fixed;
  if (can_pair && g->out_w < g->out_h &&
      mak_mve_dw_pairs_fit(in_t, node->outputs[0], g, cin, cout, true)) {
    dw_columns(in, f, g, cin, &n, out);
    return true;
  }
  const bool pairs = can_pair && mak_mve_dw_pairs_fit(in_t, node->outputs[0], g, cin, cout, false);
  mak_window w, next;
  mak_window_start(g, &w);
  bool more = next_window(g, &w);
  while (more) {
    const taps t = window_taps(in, f, g, &w, cin, cout);
    int8_t *o = out + w.pixel * (size_t)cout;
    next = w;
    const bool second = next_window(g, &next);
    if (pairs && second && same_taps(&w, &next) && w.iy0 == next.iy0) {
      const int8_t *in1 = window_taps(in, f, g, &next, cin, cout).in;
      if (dmult == 1) /* two copies of the loop, one load form each */
        dw_pair(&t, in1, &n, false, o, o + cout);
      else
        dw_pair(&t, in1, &n, true, o, o + cout);
      more = next_window(g, &next);
    } else {
      for (int32_t c0 = 0; c0 < cout; c0 += MAK_DW_BLOCK)
        dw_block(&t, &n, c0, cout - c0 < MAK_DW_BLOCK ? cout - c0 : MAK_DW_BLOCK, o);
      more = second;
    }
    w = next;
  }
  return true;
}

#else
typedef int mak_no_mve; /* ISO C: a translation unit declares something */
#endif
