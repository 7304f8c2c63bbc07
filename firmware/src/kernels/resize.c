/* RESIZE_NEAREST_NEIGHBOR (any type: byte copies) and RESIZE_BILINEAR (float32, int8), NHWC.
 *
 * Coordinates as TFLite's reference: the scale is in / out, or (in - 1) / (out - 1) with
 * align_corners; half_pixel_centers samples at (x + 0.5) * scale - 0.5. Bilinear float
 * weights the four neighbours in float in TFLite's order; int8 works in 10-bit fixed point
 * (scale rounded to 1/1024, source position truncated toward zero) and rounds the 20-bit
 * weighted sum half away from zero. No op data: options and shapes are read at eval.
 */
#include <math.h>

#include "kernel_util.h"
#include "kernels.h"

/* Options slots of align_corners and half_pixel_centers: ResizeNearestNeighborOptions has
 * them first, ResizeBilinearOptions after two deprecated fields (node->variant 1). */
static int32_t flag(const ma_node *node, int32_t slot) {
  return ma_opt_i32(&node->options, slot + (node->variant == 1 ? 2 : 0), 0) != 0;
}
enum { OPT_ALIGN_CORNERS, OPT_HALF_PIXEL };

/* Checks shared by both: 4-D input and output with equal N and C; a two-value INT32 size
 * that, when constant, is the output's height and width. */
static ma_status resize_check(struct ma_context *ctx, const ma_node *node, const char *op) {
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *size = node->inputs[1], *out = node->outputs[0];
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK ||
      (st = mak_check_type(ctx, op, "size", size, MA_INT32)) != MA_OK)
    return st;
  if (in->ndims != 4 || out->ndims != 4 || in->dims[0] != out->dims[0] ||
      in->dims[3] != out->dims[3])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output must be 4-D with equal N and C", op);
  if (size->ndims != 1 || size->dims[0] != 2)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: size must hold 2 values", op);
  if (size->is_const && (((const int32_t *)size->data)[0] != out->dims[1] ||
                         ((const int32_t *)size->data)[1] != out->dims[2]))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: size differs from the output's height and width", op);
  return MA_OK;
}

/* TFLite's GetNearestNeighbor. */
static int32_t nearest(int32_t v, int32_t in_size, int32_t out_size, bool align, bool half) {
  const float scale = (align && out_size > 1) ? (float)(in_size - 1) / (float)(out_size - 1)
                                              : (float)in_size / (float)out_size;
  const float offset = half ? 0.5f : 0.0f;
  const float f = ((float)v + offset) * scale;
  int32_t r = align ? (int32_t)roundf(f) : (int32_t)floorf(f);
  if (r > in_size - 1) r = in_size - 1;
  if (half && r < 0) r = 0;
  return r;
}

static ma_status nearest_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const bool align = flag(node, OPT_ALIGN_CORNERS), half = flag(node, OPT_HALF_PIXEL);
  const int32_t batches = in->dims[0], in_h = in->dims[1], in_w = in->dims[2];
  const int32_t out_h = out->dims[1], out_w = out->dims[2];
  const size_t row = (size_t)in->dims[3] * ma_type_size(in->type);
  const uint8_t *src = in->data;
  uint8_t *dst = out->data;
  for (int32_t b = 0; b < batches; ++b) {
    for (int32_t y = 0; y < out_h; ++y) {
      const int32_t iy = nearest(y, in_h, out_h, align, half);
      for (int32_t x = 0; x < out_w; ++x) {
        const int32_t ix = nearest(x, in_w, out_w, align, half);
        mak_move(dst, src + (((size_t)b * in_h + iy) * in_w + ix) * row, row);
        dst += row;
      }
    }
  }
  return MA_OK;
}

static ma_status nearest_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "RESIZE_NEAREST_NEIGHBOR";
  const ma_status st = resize_check(ctx, node, op);
  if (st != MA_OK || ma_type_size(node->inputs[0]->type) > 0) return st;
  return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s", op,
                 mak_type_name(node->inputs[0]->type));
}

/* ------------------------------------------------------------------ RESIZE_BILINEAR */

static const char BL[] = "RESIZE_BILINEAR";

static ma_status bilinear_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = resize_check(ctx, node, BL);
  if (st != MA_OK) return st;
  if (flag(node, OPT_ALIGN_CORNERS) && flag(node, OPT_HALF_PIXEL))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: align_corners and half_pixel_centers both set", BL);
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  return mak_check_input_type(ctx, BL, node->inputs[0], types, "float32, int8");
}

/* TFLite's ComputeInterpolationValues: source position and the two neighbours. */
static void source_f(int32_t v, float scale, bool half, int32_t in_size, float *pos,
                     int32_t *lo, int32_t *hi) {
  *pos = half ? ((float)v + 0.5f) * scale - 0.5f : (float)v * scale;
  const int32_t fl = (int32_t)floorf(*pos), ce = (int32_t)ceilf(*pos);
  *lo = fl > 0 ? fl : 0;
  *hi = ce < in_size - 1 ? ce : in_size - 1;
}

/* ComputeInterpolationValuesInteger: the same in 10-bit fixed point. */
static void source_q(int32_t v, int32_t scale_10, bool half, int32_t in_size, int32_t *pos,
                     int32_t *lo, int32_t *hi) {
  *pos = half ? v * scale_10 + scale_10 / 2 - (1 << 9) : v * scale_10;
  const int32_t fl = *pos / (1 << 10), ce = (*pos + (1 << 10) - 1) / (1 << 10);
  *lo = fl > 0 ? fl : 0;
  *hi = ce < in_size - 1 ? ce : in_size - 1;
}

static int32_t scale_10(int32_t in, int32_t out, bool align) {
  if (align && out > 1) return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  return ((1 << 10) * in + out / 2) / out;
}

static float scale_f(int32_t in, int32_t out, bool align) {
  if (align && out > 1) return (float)(in - 1) / (float)(out - 1);
  return (float)in / (float)out;
}

static ma_status bilinear_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const bool align = flag(node, OPT_ALIGN_CORNERS), half = flag(node, OPT_HALF_PIXEL);
  const int32_t in_h = in->dims[1], in_w = in->dims[2], depth = in->dims[3];
  const int32_t out_h = out->dims[1], out_w = out->dims[2];
  const bool is_f32 = in->type == MA_FLOAT32;
  const float sy = scale_f(in_h, out_h, align), sx = scale_f(in_w, out_w, align);
  const int32_t qy = scale_10(in_h, out_h, align), qx = scale_10(in_w, out_w, align);
  size_t oi = 0;
  for (int32_t b = 0; b < in->dims[0]; ++b) {
    for (int32_t y = 0; y < out_h; ++y) {
      float fy;
      int32_t py = 0, y0, y1;
      source_f(y, sy, half, in_h, &fy, &y0, &y1);
      if (!is_f32) source_q(y, qy, half, in_h, &py, &y0, &y1);
      for (int32_t x = 0; x < out_w; ++x) {
        float fx;
        int32_t px = 0, x0, x1;
        source_f(x, sx, half, in_w, &fx, &x0, &x1);
        if (!is_f32) source_q(x, qx, half, in_w, &px, &x0, &x1);
        const size_t r0 = ((size_t)b * in_h + y0) * in_w, r1 = ((size_t)b * in_h + y1) * in_w;
        const size_t i00 = (r0 + x0) * depth, i10 = (r1 + x0) * depth;
        const size_t i01 = (r0 + x1) * depth, i11 = (r1 + x1) * depth;
        for (int32_t c = 0; c < depth; ++c, ++oi) {
          if (is_f32) {
            const float *p = in->data;
            const float dy = fy - (float)y0, dx = fx - (float)x0;
            ((float *)out->data)[oi] = p[i00 + c] * (1 - dy) * (1 - dx) +
                                       p[i10 + c] * dy * (1 - dx) + p[i01 + c] * (1 - dy) * dx +
                                       p[i11 + c] * dy * dx;
          } else {
            const int8_t *p = in->data;
            const int64_t dy = py - (1 << 10) * y0, dx = px - (1 << 10) * x0;
            const int64_t sum = p[i00 + c] * ((1 << 10) - dy) * ((1 << 10) - dx) +
                                p[i10 + c] * dy * ((1 << 10) - dx) +
                                p[i01 + c] * ((1 << 10) - dy) * dx + p[i11 + c] * dy * dx;
            const int64_t round = sum > 0 ? (1 << 19) : -(1 << 19);
            ((int8_t *)out->data)[oi] = (int8_t)((sum + round) / (1 << 20));
          }
        }
      }
    }
  }
  return MA_OK;
}

const ma_kernel mak_resize_nearest_neighbor = {nearest_prepare, nearest_eval, 0};
const ma_kernel mak_resize_bilinear = {bilinear_prepare, bilinear_eval, 1};
