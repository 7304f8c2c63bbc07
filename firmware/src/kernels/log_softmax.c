/* LOG_SOFTMAX over the last dimension.
 *
 * float32: x - max - log(sum exp(x - max)).
 * int8: TFLM's fixed-point method. Differences to the row maximum are scaled by the input
 * scale into Q5.26, exponentiated (gemmlowp's exp_on_negative_values) and summed in Q12.19;
 * the sum's log comes back in Q5.26 and is subtracted from each scaled difference, giving
 * the output in units of 1/16 below 127 (TFLM requires scale 16/256, zero point 127).
 * Differences below diff_min are left out of the sum; those whose result would fall below
 * the Q5.26 range (adjusted_diff_min, from the reverse scaling) give -128.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  int32_t input_multiplier, input_left_shift;
  int32_t reverse_multiplier, reverse_shift; /* Q5.26 back to input units, shift <= 0 */
  int32_t diff_min;
} log_softmax_data;

static const char OP[] = "LOG_SOFTMAX";
enum { DIFF_INT_BITS = 5, SUM_INT_BITS = 12, OUT_INT_BITS = 4 };

static ma_status prepare_int8(struct ma_context *ctx, ma_node *node) {
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  ma_status st = mak_check_type(ctx, OP, "output", out, MA_INT8);
  if (st != MA_OK) return st;
  /* TFLM compares the output quantization exactly; 16/256 is exact in float. */
  if (mak_scale(out, 0) != 16.0f / 256.0f || mak_zero_point(out, 0) != 127)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: int8 output must have scale 16/256 and zero point 127 (as TFLM)", OP);
  /* PreprocessLogSoftmaxScalingExp with beta 1: the input scale in Q5.26, capped below 2^31.
   * TFLM aborts unless the multiplier exceeds 1. */
  const double max_real = 2147483647.0;
  double real = (double)mak_scale(in, 0) * (double)(INT32_C(1) << (31 - DIFF_INT_BITS));
  if (real > max_real) real = max_real;
  if (!(real > 1.0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int8 input scale %g below 2^-26", OP,
                   (double)mak_scale(in, 0));
  log_softmax_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  /* Input scales of 16 and more saturate the shift at 30 where TFLM keeps 31: either way
   * every difference of 1 or more scales below -16 and gives -128. */
  int shift;
  mak_quantize_multiplier(real, &d->input_multiplier, &shift);
  d->input_left_shift = shift;
  const double reverse = ldexp(1.0, 31 - shift) / (double)d->input_multiplier;
  int reverse_shift;
  mak_quantize_multiplier(reverse, &d->reverse_multiplier, &reverse_shift);
  d->reverse_shift = reverse_shift;
  d->diff_min = -mak_input_radius(DIFF_INT_BITS, shift);
  return MA_OK;
}

static ma_status log_softmax_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  st = mak_check_input_type(ctx, OP, in, MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8),
                            "float32, int8");
  if (st != MA_OK) return st;
  if (in->ndims < 1 || ma_num_elements(in) != ma_num_elements(out) ||
      in->dims[in->ndims - 1] != out->dims[out->ndims - 1])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output shapes differ", OP);
  if (in->type == MA_INT8) return prepare_int8(ctx, node);
  return mak_check_type(ctx, OP, "output", out, MA_FLOAT32);
}

static void row_float(const float *x, float *y, int32_t depth) {
  float max = -FLT_MAX;
  for (int32_t c = 0; c < depth; ++c) max = x[c] > max ? x[c] : max;
  float sum = 0.0f;
  for (int32_t c = 0; c < depth; ++c) sum += expf(x[c] - max);
  const float log_sum = logf(sum);
  for (int32_t c = 0; c < depth; ++c) y[c] = x[c] - max - log_sum;
}

static void row_int8(const log_softmax_data *d, const int8_t *x, int8_t *y, int32_t depth) {
  int32_t max = INT8_MIN;
  for (int32_t c = 0; c < depth; ++c) max = x[c] > max ? x[c] : max;
  int32_t sum = 0; /* Q12.19, wrapping where TFLM's would overflow (rows over 4096) */
  for (int32_t c = 0; c < depth; ++c) {
    const int32_t diff = x[c] - max;
    if (diff < d->diff_min) continue;
    const int32_t scaled = mak_mbqm(diff, d->input_multiplier, d->input_left_shift);
    sum = mak_wrap_add(sum, mak_rdbpot(mak_exp_on_negative_values(scaled, DIFF_INT_BITS),
                                       SUM_INT_BITS));
  }
  const int32_t log_sum = mak_log_x_ge_1(sum, SUM_INT_BITS, DIFF_INT_BITS); /* Q5.26 */
  const int32_t floor_diff =
      mak_mbqm(mak_wrap_add(log_sum, INT32_MIN), d->reverse_multiplier, d->reverse_shift);
  const int32_t adjusted_min = d->diff_min - 1 > floor_diff ? d->diff_min - 1 : floor_diff;
  for (int32_t c = 0; c < depth; ++c) {
    const int32_t diff = x[c] - max;
    int32_t v = INT8_MIN;
    if (diff > adjusted_min) {
      const int32_t scaled = mak_mbqm(diff, d->input_multiplier, d->input_left_shift);
      v = mak_rdbpot(mak_wrap_sub(scaled, log_sum), 31 - DIFF_INT_BITS - OUT_INT_BITS);
      v = mak_clamp(v + INT8_MAX, INT8_MIN, INT8_MAX);
    }
    y[c] = (int8_t)v;
  }
}

static ma_status log_softmax_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t depth = in->dims[in->ndims - 1];
  const int32_t rows = depth > 0 ? ma_num_elements(in) / depth : 0;
  for (int32_t r = 0; r < rows; ++r) {
    const size_t base = (size_t)r * (size_t)depth;
    if (in->type == MA_INT8)
      row_int8(node->user_data, (const int8_t *)in->data + base, (int8_t *)out->data + base,
               depth);
    else
      row_float((const float *)in->data + base, (float *)out->data + base, depth);
  }
  return MA_OK;
}

const ma_kernel mak_log_softmax = {log_softmax_prepare, log_softmax_eval, 0};
