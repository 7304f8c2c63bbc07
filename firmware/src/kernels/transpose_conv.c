/* TRANSPOSE_CONV, NHWC: float32, int8 (per-channel) and int16 activations with int8 weights.
 *
 * TFLM's reference scatters every input pixel times the filter into the output (int8: into an
 * int32 scratch buffer the size of the output, int16: int64), then adds the bias and
 * requantizes. This kernel gathers instead: output pixel (oy, ox) sums input pixels (iy, ix)
 * with oy = iy * stride - pad + fy. Each (iy, ix) meets a pixel through one filter tap, so
 * visiting iy, ix, then input channels in ascending order adds the same terms in the same
 * order as the scatter: float results are identical and integer sums are exact, and no
 * scratch buffer is needed. TFLM's integer arithmetic: int8 adds the input offset (the
 * filter is symmetric, its zero point unused) and requantizes per channel; int16 uses no
 * offsets, an int64 bias (or int16, widened) and the 64-bit MultiplyByQuantizedMultiplier.
 */
#include "fast_dot_s8.h"
#include "kernel_util.h"
#include "kernels.h"

static const char OP[] = "TRANSPOSE_CONV";

/* Inputs and TransposeConvOptions slots. */
enum { IN_SHAPE, IN_FILTER, IN_INPUT, IN_BIAS };
enum { OPT_PADDING, OPT_STRIDE_W, OPT_STRIDE_H, OPT_ACTIVATION };

static ma_status tconv_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 3, 4, 3, 1);
  if (st != MA_OK) return st;
  const ma_tensor *filter = node->inputs[IN_FILTER], *in = node->inputs[IN_INPUT];
  const ma_tensor *bias = mak_input(node, IN_BIAS), *out = node->outputs[0];
  if ((st = mak_check_weighted_types(ctx, OP, in, filter, bias, out, MA_INT64, MA_INT16)) != MA_OK)
    return st;
  if (in->ndims != 4 || filter->ndims != 4 || out->ndims != 4)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input, filter and output must be 4-D", OP);
  const int32_t cout = out->dims[3];
  if (in->dims[0] != out->dims[0] || filter->dims[0] != cout || filter->dims[3] != in->dims[3])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: filter %dx%dx%dx%d does not map %d to %d channels",
                   OP, (int)filter->dims[0], (int)filter->dims[1], (int)filter->dims[2],
                   (int)filter->dims[3], (int)in->dims[3], (int)cout);
  if (bias != NULL && ma_num_elements(bias) != cout)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: bias has %d values for %d channels", OP,
                   (int)ma_num_elements(bias), (int)cout);
  const bool is_f32 = in->type == MA_FLOAT32;
  mak_conv_data *d = mak_conv_data_alloc(ctx, is_f32 ? 0 : (filter->quant.count > 1 ? cout : 1));
  if (d == NULL) return MA_ERR_ARENA;
  node->user_data = d;
  /* TFLM computes the padding as for a convolution from the output to the input size. */
  const ma_options *o = &node->options;
  const int32_t padding = ma_opt_i32(o, OPT_PADDING, 0), act = ma_opt_i32(o, OPT_ACTIVATION, 0);
  const int32_t stride_w = ma_opt_i32(o, OPT_STRIDE_W, 0), stride_h = ma_opt_i32(o, OPT_STRIDE_H, 0);
  int32_t unused;
  if ((st = mak_padding(ctx, OP, padding, out->dims[1], filter->dims[1], stride_h, 1, &unused,
                        &d->pad_h)) != MA_OK ||
      (st = mak_padding(ctx, OP, padding, out->dims[2], filter->dims[2], stride_w, 1, &unused,
                        &d->pad_w)) != MA_OK)
    return st;
  d->stride_w = (int16_t)stride_w;
  d->stride_h = (int16_t)stride_h;
  d->dil_w = d->dil_h = 1;
  if (is_f32) return mak_act_range_f(ctx, OP, act, &d->f_min, &d->f_max);
  if ((st = mak_conv_quantize(ctx, OP, d, in, filter, out, act, cout)) != MA_OK) return st;
  /* TFLM's int16 kernel applies no zero points at all: refuse models that have them. */
  if (in->type == MA_INT16 && (d->input_offset != 0 || d->output_offset != 0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 activations need zero points 0", OP);
  return MA_OK;
}

/* Input pixels [*first, *end) that reach output coordinate o through a tap in [0, taps). */
static void source_range(int32_t o, int32_t pad, int32_t stride, int32_t taps, int32_t size,
                         int32_t *first, int32_t *end) {
  const int32_t hi = o + pad; /* i * stride <= hi and i * stride > hi - taps */
  int32_t f = hi - taps + 1 <= 0 ? 0 : (hi - taps + stride) / stride;
  int32_t e = hi < 0 ? 0 : hi / stride + 1;
  if (e > size) e = size;
  if (f > e) f = e;
  *first = f;
  *end = e;
}

typedef struct {
  int32_t in_h, in_w, cin, kh, kw;
} tconv_shape;

/* The sum for output channel oc at output pixel (oy, ox) of batch b: float in *fsum,
 * integers (int8 with the input offset, int16 without) in *isum. */
static void gather(const ma_node *node, const mak_conv_data *d, const tconv_shape *s, int32_t b,
                   int32_t oy, int32_t ox, int32_t oc, float *fsum, int64_t *isum) {
  const ma_tensor *in = node->inputs[IN_INPUT], *filter = node->inputs[IN_FILTER];
  int32_t y0, y1, x0, x1;
  source_range(oy, d->pad_h, d->stride_h, s->kh, s->in_h, &y0, &y1);
  source_range(ox, d->pad_w, d->stride_w, s->kw, s->in_w, &x0, &x1);
  float f = 0.0f;
  uint32_t acc32 = 0; /* int8: wraps like TFLM's int32 scratch */
  int64_t acc64 = 0;
  for (int32_t iy = y0; iy < y1; ++iy) {
    const int32_t fy = oy + d->pad_h - iy * d->stride_h;
    for (int32_t ix = x0; ix < x1; ++ix) {
      const int32_t fx = ox + d->pad_w - ix * d->stride_w;
      const size_t ii = (((size_t)b * s->in_h + iy) * s->in_w + ix) * s->cin;
      const size_t fi = (((size_t)oc * s->kh + fy) * s->kw + fx) * s->cin;
      if (in->type == MA_FLOAT32) {
        const float *ip = (const float *)in->data + ii, *fp = (const float *)filter->data + fi;
        for (int32_t c = 0; c < s->cin; ++c) f += ip[c] * fp[c];
      } else if (in->type == MA_INT8) {
        const int8_t *ip = (const int8_t *)in->data + ii, *fp = (const int8_t *)filter->data + fi;
        acc32 += (uint32_t)mak_dot_s8(fp, ip, s->cin, d->input_offset);
      } else {
        const int16_t *ip = (const int16_t *)in->data + ii;
        const int8_t *fp = (const int8_t *)filter->data + fi;
        for (int32_t c = 0; c < s->cin; ++c) acc64 += (int64_t)ip[c] * fp[c];
      }
    }
  }
  *fsum = f;
  *isum = in->type == MA_INT8 ? (int64_t)(int32_t)acc32 : acc64;
}

/* Bias, requantization and clamp of one output value. */
static void store(const ma_node *node, const mak_conv_data *d, size_t oi, int32_t oc, float fsum,
                  int64_t isum) {
  const ma_tensor *bias = mak_input(node, IN_BIAS), *out = node->outputs[0];
  const int32_t mi = d->n_mult > 1 ? oc : 0; /* integer types only: float has none */
  switch (out->type) {
    case MA_FLOAT32: {
      const float v = bias != NULL ? fsum + ((const float *)bias->data)[oc] : fsum;
      ((float *)out->data)[oi] = mak_clampf(v, d->f_min, d->f_max);
      break;
    }
    case MA_INT8: {
      uint32_t acc = (uint32_t)isum;
      if (bias != NULL) acc += (uint32_t)((const int32_t *)bias->data)[oc];
      ((int8_t *)out->data)[oi] = (int8_t)mak_requantize((int32_t)acc, d->mult[mi], mak_conv_shifts(d)[mi],
                                                         d->output_offset, d->act_min, d->act_max);
      break;
    }
    default: {
      uint64_t acc = (uint64_t)isum; /* wraps on hostile biases instead of overflowing */
      if (bias != NULL)
        acc += (uint64_t)(bias->type == MA_INT16 ? ((const int16_t *)bias->data)[oc]
                                                 : mak_load_i64(bias->data, oc));
      const int32_t v = mak_mbqm64((int64_t)acc, d->mult[mi], mak_conv_shifts(d)[mi]);
      ((int16_t *)out->data)[oi] = (int16_t)mak_clamp(v, d->act_min, d->act_max);
      break;
    }
  }
}

static ma_status tconv_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const mak_conv_data *d = node->user_data;
  const ma_tensor *in = node->inputs[IN_INPUT], *filter = node->inputs[IN_FILTER];
  const ma_tensor *out = node->outputs[0];
  const tconv_shape s = {in->dims[1], in->dims[2], in->dims[3], filter->dims[1], filter->dims[2]};
  const int32_t out_h = out->dims[1], out_w = out->dims[2], cout = out->dims[3];
  size_t oi = 0;
  for (int32_t b = 0; b < out->dims[0]; ++b)
    for (int32_t oy = 0; oy < out_h; ++oy)
      for (int32_t ox = 0; ox < out_w; ++ox)
        for (int32_t oc = 0; oc < cout; ++oc, ++oi) {
          float fsum;
          int64_t isum;
          gather(node, d, &s, b, oy, ox, oc, &fsum, &isum);
          store(node, d, oi, oc, fsum, isum);
        }
  return MA_OK;
}

const ma_kernel mak_transpose_conv = {tconv_prepare, tconv_eval, 0};
