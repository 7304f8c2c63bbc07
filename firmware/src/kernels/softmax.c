/* SOFTMAX over the last dimension: float32, and int8 input with int8 or int16 output.
 *
 * int8 uses the same fixed-point method as TFLM's reference Softmax: differences to the row
 * maximum are scaled by beta * input_scale into Q5.26, exponentiated with gemmlowp's
 * exp_on_negative_values, summed in Q12.19 and divided through a fixed-point reciprocal.
 * Differences below diff_min contribute nothing and give the minimum output.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  float beta;
  int32_t input_multiplier, input_left_shift, diff_min;
} softmax_data;

static const char OP[] = "SOFTMAX";
enum { SCALED_DIFF_INT_BITS = 5, ACCUM_INT_BITS = 12 };

static ma_status softmax_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (in->ndims < 1 || ma_num_elements(in) != ma_num_elements(out) ||
      out->dims[out->ndims - 1] != in->dims[in->ndims - 1] || in->dims[in->ndims - 1] <= 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output shapes differ", OP);
  softmax_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->beta = ma_opt_f32(&node->options, 0, 0.0f);
  if (in->type == MA_FLOAT32) return mak_check_type(ctx, OP, "output", out, MA_FLOAT32);
  if (in->type != MA_INT8 || (out->type != MA_INT8 && out->type != MA_INT16))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: %s input with %s output", OP,
                   mak_type_name(in->type), mak_type_name(out->type));
  const float in_scale = mak_scale(in, 0);
  if (!(in_scale > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: int8 input needs a quantization scale", OP);
  /* TFLM requires the fixed output quantization the integer method produces. */
  const int32_t want_zp = out->type == MA_INT8 ? INT8_MIN : INT16_MIN;
  const float want_scale = out->type == MA_INT8 ? 1.0f / 256 : 1.0f / 65536;
  if (mak_zero_point(out, 0) != want_zp || 
      fabsf(mak_scale(out, 0) - want_scale) > 0.001f * want_scale)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: output must have zero point %d and scale 1/%d",
                   OP, (int)want_zp, out->type == MA_INT8 ? 256 : 65536);
  /* PreprocessSoftmaxScaling: beta * scale in Q5.26, as a multiplier >= 1. */
  double real = (double)d->beta * (double)in_scale *
                (double)(INT32_C(1) << (31 - SCALED_DIFF_INT_BITS));
  if (real > (double)INT32_MAX) real = (double)INT32_MAX;
  int shift;
  mak_quantize_multiplier(real, &d->input_multiplier, &shift);
  if (shift < 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: beta * input scale too small", OP);
  d->input_left_shift = shift;
  d->diff_min = -mak_input_radius(SCALED_DIFF_INT_BITS, shift);
  return MA_OK;
}

/* Q5.26 scaled difference -> exp in Q0.31 (MultiplyByQuantizedMultiplierGreaterThanOne). */
static int32_t scaled_exp(const softmax_data *d, int32_t diff) {
  const int32_t rescaled =
      mak_srdhm(mak_shl_wrap(diff, d->input_left_shift), d->input_multiplier);
  return mak_exp_on_negative_values(rescaled, SCALED_DIFF_INT_BITS);
}

static void softmax_row_q(const softmax_data *d, const int8_t *in, void *out, int32_t depth,
                          bool out16) {
  int32_t max = INT8_MIN;
  for (int32_t c = 0; c < depth; ++c)
    if (in[c] > max) max = in[c];
  int32_t sum = 0; /* Q12.19 */
  for (int32_t c = 0; c < depth; ++c) {
    const int32_t diff = in[c] - max;
    if (diff >= d->diff_min)
      sum = (int32_t)((uint32_t)sum +
                      (uint32_t)mak_rdbpot(scaled_exp(d, diff), ACCUM_INT_BITS));
  }
  /* GetReciprocal: normalise the sum to [1, 2) and take 1 / (1 + x). */
  int headroom = 0;
  while (headroom < 32 && !(((uint32_t)sum << headroom) & 0x80000000u)) ++headroom;
  const int bits_over_unit = ACCUM_INT_BITS - headroom;
  const int32_t shifted_minus_one =
      (int32_t)(((uint32_t)sum << headroom) - ((uint32_t)1 << 31));
  const int32_t scale = mak_one_over_one_plus_x(shifted_minus_one);
  const int out_bits = out16 ? 16 : 8;
  const int32_t lo = out16 ? INT16_MIN : INT8_MIN, hi = out16 ? INT16_MAX : INT8_MAX;
  for (int32_t c = 0; c < depth; ++c) {
    const int32_t diff = in[c] - max;
    int32_t v = lo;
    if (diff >= d->diff_min) {
      const int32_t e = scaled_exp(d, diff);
      const int32_t unsat = mak_rdbpot(mak_srdhm(scale, e), bits_over_unit + 31 - out_bits);
      v = mak_clamp(unsat + lo, lo, hi);
    }
    if (out16) ((int16_t *)out)[c] = (int16_t)v;
    else ((int8_t *)out)[c] = (int8_t)v;
  }
}

static ma_status softmax_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const softmax_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t depth = in->dims[in->ndims - 1];
  const int32_t rows = ma_num_elements(in) / depth;
  for (int32_t r = 0; r < rows; ++r) {
    const size_t base = (size_t)r * depth;
    if (in->type == MA_FLOAT32) {
      const float *x = (const float *)in->data + base;
      float *y = (float *)out->data + base;
      float max = x[0];
      for (int32_t c = 1; c < depth; ++c)
        if (x[c] > max) max = x[c];
      float sum = 0.0f;
      for (int32_t c = 0; c < depth; ++c) {
        y[c] = expf((x[c] - max) * d->beta);
        sum += y[c];
      }
      for (int32_t c = 0; c < depth; ++c) y[c] /= sum;
    } else if (out->type == MA_INT16) {
      softmax_row_q(d, (const int8_t *)in->data + base, (int16_t *)out->data + base, depth, true);
    } else {
      softmax_row_q(d, (const int8_t *)in->data + base, (int8_t *)out->data + base, depth, false);
    }
  }
  return MA_OK;
}

const ma_kernel mak_softmax = {softmax_prepare, softmax_eval, 0};
