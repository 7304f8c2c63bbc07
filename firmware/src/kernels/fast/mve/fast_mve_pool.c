/* Helium int8 pools (see fast_mve_pool.h): sixteen channels of a maximum per VMAX, eight of a sum
 * per widening load and VADD in int16 lanes (exact for windows of at most 255 cells: |sum| <=
 * 255 * 128).
 *
 * TFLM divides the int32 sum by the cell count c rounding half away from zero: (sum + c/2) / c
 * for sum > 0, else (sum - c/2) / c, truncated; that is the sign of sum times
 * floor(n / c) with n = |sum| + floor(c/2). Here floor(n / c) = (n M) >> 32 with
 * M = floor(2^32 / c) + 1 (c >= 2): M c = 2^32 + t with 0 < t <= c, so n M / 2^32 exceeds n / c
 * by n t / (c 2^32) < n / 2^32 < 2^-17 (n < 2^15), less than the 1/c >= 1/255 that n / c's
 * fraction keeps below 1: the floor is the same. c = 1 is the sum itself. */
#include "fast/mve/fast_mve_pool.h"

#if FAST_MVE
#include <arm_mve.h>

/* Maxima of channels c..c+15 (the first n < 16 where p covers only them). */
static inline int8x16_t max16(const mak_pool_cells *pc, int32_t c, mve_pred16_t p) {
  int8x16_t m = vdupq_n_s8(INT8_MIN);
  const int8_t *row = pc->first + c;
  for (int32_t y = 0; y < pc->rows; ++y, row += pc->row_step)
    for (int32_t x = 0; x < pc->cols; ++x)
      m = vmaxq_s8(m, vldrbq_z_s8(row + (size_t)x * pc->col_step, p));
  return m;
}

static void max_pixel(const mak_pool_cells *pc, int32_t depth, int32_t lo, int32_t hi,
                      int8_t *out) {
  const int8x16_t vlo = vdupq_n_s8((int8_t)lo), vhi = vdupq_n_s8((int8_t)hi);
  for (int32_t c = 0; c < depth; c += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(depth - c));
    vstrbq_p_s8(out + c, vminq_s8(vmaxq_s8(max16(pc, c, p), vlo), vhi), p);
  }
}

/* TFLM's rounded quotient of four sums by the count (M as at the top, 0 for a count of 1;
 * half: the count / 2). */
static inline int32x4_t div4(int32x4_t sum, int32_t half, uint32_t m) {
  if (m == 0) return sum;
  const uint32x4_t n = vreinterpretq_u32_s32(vaddq_n_s32(vabsq_s32(sum), half));
  const int32x4_t q = vreinterpretq_s32_u32(vmulhq_u32(n, vdupq_n_u32(m)));
  return vpselq_s32(vnegq_s32(q), q, vcmpltq_n_s32(sum, 0));
}

static void avg_pixel(const mak_pool_cells *pc, int32_t depth, int32_t lo, int32_t hi,
                      int8_t *out) {
  const int32_t count = pc->rows * pc->cols;
  const uint32_t m = count == 1 ? 0 : UINT32_MAX / (uint32_t)count + 1;
  const int16x8_t vlo = vdupq_n_s16((int16_t)lo), vhi = vdupq_n_s16((int16_t)hi);
  for (int32_t c = 0; c < depth; c += 8) {
    const mve_pred16_t p = vctp16q((uint32_t)(depth - c));
    int16x8_t s = vdupq_n_s16(0);
    const int8_t *row = pc->first + c;
    for (int32_t y = 0; y < pc->rows; ++y, row += pc->row_step)
      for (int32_t x = 0; x < pc->cols; ++x)
        s = vaddq_s16(s, vldrbq_z_s16(row + (size_t)x * pc->col_step, p));
    /* even and odd lanes apart, then narrowed back in order */
    int16x8_t r = vmovnbq_s32(vdupq_n_s16(0), div4(vmovlbq_s16(s), count / 2, m));
    r = vmovntq_s32(r, div4(vmovltq_s16(s), count / 2, m));
    vstrbq_p_s16(out + c, vminq_s16(vmaxq_s16(r, vlo), vhi), p);
  }
}

static inline int32_t min32(int32_t a, int32_t b) { return a < b ? a : b; }

int mak_mve_pool_s8(const mak_window_geom *g, const int8_t *in, int8_t *out, int32_t depth,
                    bool is_max, int32_t lo, int32_t hi) {
  if (!is_max && g->kh * g->kw > 255) return 0;
  const size_t row_step = (size_t)g->in_w * (size_t)depth;
  for (int32_t b = 0; b < g->batches; ++b) {
    for (int32_t oy = 0; oy < g->out_h; ++oy) {
      const int32_t iy = oy * g->stride_h - g->pad_h;
      const int32_t y0 = iy < 0 ? 0 : iy, y1 = min32(iy + g->kh, g->in_h);
      for (int32_t ox = 0; ox < g->out_w; ++ox, out += depth) {
        const int32_t ix = ox * g->stride_w - g->pad_w;
        const int32_t x0 = ix < 0 ? 0 : ix, x1 = min32(ix + g->kw, g->in_w);
        if (y1 <= y0 || x1 <= x0) return -1;
        const mak_pool_cells pc = {in + ((size_t)b * g->in_h + (size_t)y0) * row_step +
                                       (size_t)x0 * (size_t)depth,
                                   y1 - y0, x1 - x0, (size_t)depth, row_step};
        if (is_max) max_pixel(&pc, depth, lo, hi, out);
        else avg_pixel(&pc, depth, lo, hi, out);
      }
    }
  }
  return 1;
}
#endif
