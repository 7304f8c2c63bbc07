/* AVERAGE_POOL_2D and MAX_POOL_2D (float32, int8, int16) and L2_POOL_2D (float32, as TFLM),
 * NHWC.
 *
 * Integer average pooling rounds the int32 sum half away from zero when dividing by the
 * number of cells inside the image, as TFLM's reference does; padding cells never count.
 * L2 pooling is sqrt(sum of squares / cells), summed in TFLM's order.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "fast/dsp/fast_dsp_pool.h"
#include "fast/mve/fast_mve_pool.h"
#include "fast/fast_s8_core.h"
#include "kernel_util.h"
#include "kernels.h"
#include "pooling.h"

typedef struct {
  int16_t stride_w, stride_h, filter_w, filter_h, pad_w, pad_h;
  int32_t act_min, act_max;
  float f_min, f_max;
} pool_data;

/* node->variant: which pool. */
enum { POOL_AVG, POOL_MAX, POOL_L2 };

static const char *pool_name(const ma_node *node) {
  static const char *const names[] = {"AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"};
  return names[node->variant];
}

static ma_status pool_prepare(struct ma_context *ctx, ma_node *node) {
  const char *op = pool_name(node);
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (in->ndims != 4 || out->ndims != 4 || in->dims[0] != out->dims[0] ||
      in->dims[3] != out->dims[3])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output must be 4-D with equal N and C", op);
  const bool integer = in->type == MA_INT8 || in->type == MA_INT16;
  if (in->type != MA_FLOAT32 && (!integer || node->variant == POOL_L2))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s", op, mak_type_name(in->type));
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  /* As TFLM's pooling Prepare: integer pooling never requantizes (scales within 1e-6). */
  if (integer && (fabs((double)mak_scale(in, 0) - (double)mak_scale(out, 0)) > 1.0e-6 ||
                  mak_zero_point(in, 0) != mak_zero_point(out, 0)))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input and output quantization differ "
                   "(TFLM refuses it too)", op);
  const ma_options *o = &node->options;
  const int32_t padding = ma_opt_i32(o, 0, 0), stride_w = ma_opt_i32(o, 1, 0);
  const int32_t stride_h = ma_opt_i32(o, 2, 0), filter_w = ma_opt_i32(o, 3, 0);
  const int32_t filter_h = ma_opt_i32(o, 4, 0), act = ma_opt_i32(o, 5, 0);
  pool_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  if ((st = mak_conv_geometry(ctx, op, padding, in->dims[1], filter_h, stride_h, 1, out->dims[1],
                              &d->pad_h)) != MA_OK ||
      (st = mak_conv_geometry(ctx, op, padding, in->dims[2], filter_w, stride_w, 1, out->dims[2],
                              &d->pad_w)) != MA_OK)
    return st;
  d->stride_w = (int16_t)stride_w;
  d->stride_h = (int16_t)stride_h;
  d->filter_w = (int16_t)filter_w;
  d->filter_h = (int16_t)filter_h;
  node->user_data = d;
  if (in->type == MA_FLOAT32) return mak_act_range_f(ctx, op, act, &d->f_min, &d->f_max);
  return mak_act_range_q(ctx, op, act, out, &d->act_min, &d->act_max);
}

/* ---------------------------------------------------------------- int8, four channels a step
 *
 * Where the fast paths pay (fast_s8_core.h), int8 pools take one output pixel's channels four
 * at a time: the window's cells are read for the four, then the four outputs are written. The
 * reference loop reads and writes one channel at a time in the same pixel order, so every
 * read still precedes the writes that could reach its byte, and overlap.c's pooling rule holds.
 * On the DSP (fast/dsp/fast_dsp_pool.h) an average sums two channels per SXTAB16 in 16-bit
 * lanes (exact for windows of at most 255 cells) and a maximum takes four per SSUB8 + SEL;
 * TFLM's int32 sum and its rounding division are unchanged. On Helium fast_mve_pool.c walks
 * the whole node, 16 (maximum) or 8 (average) channels a step, in the same order of reads and
 * writes. */
typedef mak_pool_cells pool_cells; /* pooling.h */

static int32_t round_div(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

/* The four channels' sums (avg) or maxima (max) over the window, from channel `c`. */
static void cells4(const pool_cells *pc, int32_t c, bool is_max, int32_t r[4]) {
  if (FAST_DSP && mak_dsp_cells4(pc, c, is_max, r)) return;
  const int8_t *row = pc->first + c;
  for (int k = 0; k < 4; ++k) r[k] = is_max ? INT8_MIN : 0;
  for (int32_t y = 0; y < pc->rows; ++y, row += pc->row_step) {
    for (int32_t x = 0; x < pc->cols; ++x) {
      const int8_t *p = row + (size_t)x * pc->col_step;
      for (int k = 0; k < 4; ++k) r[k] = is_max ? (p[k] > r[k] ? p[k] : r[k]) : r[k] + p[k];
    }
  }
}

/* One output pixel of an int8 pool (window checked non-empty), channels four at a time, the
 * last depth % 4 one at a time. */
static void pool_s8_pixel(const pool_data *d, const pool_cells *pc, bool is_max, int32_t depth,
                          int8_t *out) {
  if (FAST_DSP && is_max) {
    mak_dsp_max_pixel(pc, depth, d->act_min, d->act_max, out);
    return;
  }
  const int32_t count = pc->rows * pc->cols;
  int32_t c = 0;
  for (; c + 4 <= depth; c += 4) {
    int32_t r[4];
    cells4(pc, c, is_max, r);
    for (int k = 0; k < 4; ++k) {
      const int32_t v = is_max ? r[k] : round_div(r[k], count);
      out[c + k] = (int8_t)mak_clamp(v, d->act_min, d->act_max);
    }
  }
  for (; c < depth; ++c) {
    int32_t v = is_max ? INT8_MIN : 0;
    const int8_t *row = pc->first + c;
    for (int32_t y = 0; y < pc->rows; ++y, row += pc->row_step) {
      for (int32_t x = 0; x < pc->cols; ++x) {
        const int32_t e = row[(size_t)x * pc->col_step];
        v = is_max ? (e > v ? e : v) : v + e;
      }
    }
    out[c] = (int8_t)mak_clamp(is_max ? v : round_div(v, count), d->act_min, d->act_max);
  }
}

static int32_t min32(int32_t a, int32_t b) { return a < b ? a : b; }

/* The output pixels of an int8 pool in order (no dilation), each window's in-image cells
 * found by two comparisons per axis instead of mak_window_next's general steps (which took
 * as much as a pixel of few channels). -1 at a window with no cell in the image. On the DSP
 * cores and the host (which checks it); the other cores keep the walk below. */
static int pool_s8_walk(const pool_data *d, const mak_window_geom *g, const int8_t *in,
                        int8_t *out, int32_t depth, bool is_max) {
  const size_t row_step = (size_t)g->in_w * (size_t)depth;
  for (int32_t b = 0; b < g->batches; ++b) {
    for (int32_t oy = 0; oy < g->out_h; ++oy) {
      const int32_t iy = oy * g->stride_h - g->pad_h;
      const int32_t y0 = iy < 0 ? 0 : iy, y1 = min32(iy + g->kh, g->in_h);
      for (int32_t ox = 0; ox < g->out_w; ++ox, out += depth) {
        const int32_t ix = ox * g->stride_w - g->pad_w;
        const int32_t x0 = ix < 0 ? 0 : ix, x1 = min32(ix + g->kw, g->in_w);
        if (y1 <= y0 || x1 <= x0) return -1;
        const pool_cells pc = {in + ((size_t)b * g->in_h + (size_t)y0) * row_step +
                                   (size_t)x0 * (size_t)depth,
                               y1 - y0, x1 - x0, (size_t)depth, row_step};
        pool_s8_pixel(d, &pc, is_max, depth, out);
      }
    }
  }
  return 1;
}

static ma_status pool_eval(struct ma_context *ctx, ma_node *node) {
  const int32_t kind = node->variant;
  const pool_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t depth = in->dims[3];
  const mak_window_geom g = {in->dims[0], in->dims[1], in->dims[2], out->dims[1], out->dims[2],
                             d->filter_h, d->filter_w, d->stride_h, d->stride_w, 1, 1,
                             d->pad_h, d->pad_w};
  const bool is_f32 = in->type == MA_FLOAT32, is_i16 = in->type == MA_INT16;
  int done = in->type == MA_INT8 && kind != POOL_L2
                 ? mak_mve_pool_s8(&g, in->data, out->data, depth, kind == POOL_MAX,
                                   d->act_min, d->act_max)
                 : 0;
  if (FAST_ENABLED && done == 0 && in->type == MA_INT8 && kind != POOL_L2)
    done = pool_s8_walk(d, &g, in->data, out->data, depth, kind == POOL_MAX);
  if (done < 0)
    return ma_fail(ctx, MA_ERR_KERNEL, "%s: a window lies outside the input", pool_name(node));
  if (done > 0) return MA_OK;
  mak_window w;
  mak_window_start(&g, &w);
  while (mak_window_next(&g, &w)) {
    const int32_t count = (w.fy1 - w.fy0) * (w.fx1 - w.fx0);
    if (count <= 0)
      return ma_fail(ctx, MA_ERR_KERNEL, "%s: a window lies outside the input", pool_name(node));
    if (FAST_ENABLED && in->type == MA_INT8 && kind != POOL_L2) {
      const size_t row0 = (size_t)w.b * g.in_h + (size_t)(w.iy0 + w.fy0);
      const pool_cells pc = {(const int8_t *)in->data +
                                 (row0 * g.in_w + (size_t)(w.ix0 + w.fx0)) * (size_t)depth,
                             w.fy1 - w.fy0, w.fx1 - w.fx0, (size_t)depth,
                             (size_t)g.in_w * (size_t)depth};
      pool_s8_pixel(d, &pc, kind == POOL_MAX, depth,
                    (int8_t *)out->data + w.pixel * (size_t)depth);
      continue;
    }
    for (int32_t c = 0; c < depth; ++c) {
      const size_t oi = w.pixel * (size_t)depth + c;
      float fsum = 0.0f, fmax = -FLT_MAX, fsq = 0.0f;
      int64_t isum = 0; /* a hostile window cannot overflow it */
      int32_t imax = INT16_MIN;
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
          const size_t ii =
              (((size_t)w.b * g.in_h + w.iy0 + fy) * g.in_w + w.ix0 + fx) * depth + c;
          if (is_f32) {
            const float v = ((const float *)in->data)[ii];
            fsum += v;
            fsq += v * v;
            if (v > fmax) fmax = v;
          } else {
            const int32_t v = is_i16 ? ((const int16_t *)in->data)[ii]
                                     : ((const int8_t *)in->data)[ii];
            isum += v;
            if (v > imax) imax = v;
          }
        }
      }
      if (is_f32) {
        const float v = kind == POOL_MAX ? fmax
                        : kind == POOL_L2 ? sqrtf(fsq / (float)count)
                                          : fsum / (float)count;
        ((float *)out->data)[oi] = mak_clampf(v, d->f_min, d->f_max);
      } else {
        const int32_t v = kind == POOL_MAX ? imax
                          : (int32_t)(isum > 0 ? (isum + count / 2) / count
                                               : (isum - count / 2) / count);
        const int32_t clamped = mak_clamp(v, d->act_min, d->act_max);
        if (is_i16) ((int16_t *)out->data)[oi] = (int16_t)clamped;
        else ((int8_t *)out->data)[oi] = (int8_t)clamped;
      }
    }
  }
  return MA_OK;
}

const ma_kernel mak_average_pool_2d = {pool_prepare, pool_eval, POOL_AVG};
const ma_kernel mak_max_pool_2d = {pool_prepare, pool_eval, POOL_MAX};
const ma_kernel mak_l2_pool_2d = {pool_prepare, pool_eval, POOL_L2};
