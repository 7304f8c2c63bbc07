/* SOFTMAX over the last dimension: float32, int8 input with int8 or int16 output, and int16.
 *
 * int8 uses the same fixed-point method as TFLM's reference Softmax: differences to the row
 * maximum are scaled by beta * input_scale into Q5.26, exponentiated with gemmlowp's
 * exp_on_negative_values, summed in Q12.19 and divided through a fixed-point reciprocal.
 * Differences below diff_min contribute nothing and give the minimum output.
 *
 * int16 follows TFLM's SoftmaxInt16: differences to the row maximum rescaled so that
 * [-65535, 0] spans exp's table on [-10, 0], exps summed in Q16.15, the sum normalised and
 * inverted through the 1 / (1 + x) table; both tables interpolate 513 int16 entries.
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

/* TFLM's conditions on int16: zero points 0, output scale 1/32768; the input difference
 * scaled by beta * input scale / (10 / 65535). */
static ma_status prepare_int16(struct ma_context *ctx, softmax_data *d, const ma_tensor *in,
                               const ma_tensor *out) {
  const float want = 1.0f / 32768;
  if (mak_zero_point(in, 0) != 0 || mak_zero_point(out, 0) != 0 ||
      fabsf(mak_scale(out, 0) - want) > 0.001f * want)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: int16 needs zero points 0 and output scale 1/32768", OP);
  int shift;
  mak_quantize_multiplier((double)mak_scale(in, 0) * (double)d->beta / (10.0 / 65535.0),
                          &d->input_multiplier, &shift);
  d->input_left_shift = shift;
  return MA_OK;
}

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
  if (in->type == MA_INT16 && out->type == MA_INT16) return prepare_int16(ctx, d, in, out);
  if (in->type != MA_INT8 || (out->type != MA_INT8 && out->type != MA_INT16))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: %s input with %s output", OP,
                   mak_type_name(in->type), mak_type_name(out->type));
  const float in_scale = mak_scale(in, 0);
  if (!(in_scale > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: int8 input needs a quantization scale", OP);
  /* TFLM requires the fixed output quantization the integer method produces. */
  const int32_t want_zp = out->type == MA_INT8 ? INT8_MIN : INT16_MIN;
  const float want_scale = out->type == MA_INT8 ? 1.0f / 256 : 1.0f / 65536;
  /* An int8 output's scale exactly (TFLM compares with ==), an int16 one's within 0.1%. */
  const bool scale_off = out->type == MA_INT8
                             ? mak_scale(out, 0) != want_scale
                             : fabsf(mak_scale(out, 0) - want_scale) > 0.001f * want_scale;
  if (mak_zero_point(out, 0) != want_zp || scale_off)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: output must have zero point %d and scale 1/%d",
                   OP, (int)want_zp, out->type == MA_INT8 ? 256 : 65536);
  /* PreprocessSoftmaxScaling: beta * scale in Q5.26, as a multiplier >= 1. */
  double real = (double)d->beta * (double)in_scale *
                (double)(INT32_C(1) << (31 - SCALED_DIFF_INT_BITS));
  if (real > (double)INT32_MAX) real = (double)INT32_MAX;
  /* TFLM stops on a failed check unless the multiplier is above 1 (beta 0 or negative too). */
  if (!(real > 1.0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: beta * input scale * 2^26 is %g, TFLM wants it above 1", OP, real);
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

/* TFLM's int16 table look-up: entry 256 + x / 128, interpolated by the low 7 bits. */
static int16_t lut_lookup16(int16_t x, const int16_t *lut) {
  const int32_t index = 256 + (x >> 7), offset = x & 0x7f;
  const int16_t slope = (int16_t)(lut[index + 1] - lut[index]);
  return (int16_t)(lut[index] + ((slope * offset + 64) >> 7));
}

static void softmax_row_16(const softmax_data *d, const int16_t *in, int16_t *out,
                           int32_t depth) {
  int32_t max = INT16_MIN;
  for (int32_t c = 0; c < depth; ++c)
    if (in[c] > max) max = in[c];
  uint32_t sum = 0; /* Q16.15; wraps (as TFLM's int32 would overflow) on huge rows */
  for (int32_t c = 0; c < depth; ++c) { /* exps kept in the output, as TFLM does */
    const int32_t scaled = mak_mbqm(in[c] - max, d->input_multiplier, d->input_left_shift);
    out[c] = lut_lookup16((int16_t)mak_clamp(mak_add_sat(scaled, 32767), INT16_MIN, INT16_MAX),
                          mak_softmax_exp_lut);
    sum += (uint32_t)out[c];
  }
  int headroom_plus_one = 0; /* leading zeros of the sum */
  while (headroom_plus_one < 32 && !((sum << headroom_plus_one) & 0x80000000u))
    ++headroom_plus_one;
  /* A row's sum is at least one exp(0) (about 32767), so 1 <= headroom_plus_one <= 17. */
  if (headroom_plus_one < 1 || headroom_plus_one > 17) headroom_plus_one = 17;
  const int32_t shifted =
      (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
  const int32_t x = mak_clamp(shifted - ((1 << 15) + (1 << 16)), INT16_MIN, INT16_MAX);
  const int64_t recip = lut_lookup16((int16_t)x, mak_softmax_recip_lut);
  const int right_shift = 31 - headroom_plus_one;
  for (int32_t c = 0; c < depth; ++c) {
    const int64_t v = (out[c] * recip + ((int64_t)1 << (right_shift - 1))) >> right_shift;
    out[c] = (int16_t)(v < 0 ? 0 : (v > INT16_MAX ? INT16_MAX : v));
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
    } else if (in->type == MA_INT16) {
      softmax_row_16(d, (const int16_t *)in->data + base, (int16_t *)out->data + base, depth);
    } else if (out->type == MA_INT16) {
      softmax_row_q(d, (const int8_t *)in->data + base, (int16_t *)out->data + base, depth, true);
    } else {
      softmax_row_q(d, (const int8_t *)in->data + base, (int8_t *)out->data + base, depth, false);
    }
  }
  return MA_OK;
}

const ma_kernel mak_softmax = {softmax_prepare, softmax_eval, 0};
