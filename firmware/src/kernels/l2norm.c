/* L2_NORMALIZATION over the last dimension (float32, int8).
 *
 * float: x / max(sqrt(sum x^2), 1e-6). int8 as TFLM: the sum of squared zero-point-corrected
 * values in int32, its inverse square root from GetInvSqrtQuantizedMultiplierExp, the result
 * in units of 1/128 without output zero point (TFLM assumes that output quantization).
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  int32_t input_zp;
} l2norm_data;

static ma_status l2norm_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "L2_NORMALIZATION";
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  if ((st = mak_check_input_type(ctx, op, in, types, "float32, int8")) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  if (in->ndims < 1 || in->ndims > 4 || ma_num_elements(in) != ma_num_elements(out) ||
      in->dims[in->ndims - 1] != out->dims[out->ndims - 1])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: needs rank 1 to 4 and equal input and output shapes",
                   op);
  if (ma_opt_i32(&node->options, 0, MAK_ACT_NONE) != MAK_ACT_NONE)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: fused activations are not supported", op);
  l2norm_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  d->input_zp = in->type == MA_INT8 ? mak_zero_point(in, 0) : 0;
  node->user_data = d;
  return MA_OK;
}

static void row_f(const float *x, float *y, int32_t depth) {
  float sum = 0.0f;
  for (int32_t c = 0; c < depth; ++c) sum += x[c] * x[c];
  float norm = sqrtf(sum);
  if (norm < 1e-6f) norm = 1e-6f;
  for (int32_t c = 0; c < depth; ++c) y[c] = x[c] / norm;
}

static void row_q8(int32_t zp, const int8_t *x, int8_t *y, int32_t depth) {
  int32_t sum = 0;
  for (int32_t c = 0; c < depth; ++c) sum = mak_wrap_add(sum, (x[c] - zp) * (x[c] - zp));
  int32_t mult;
  int shift;
  mak_inv_sqrt(sum, &mult, &shift);
  for (int32_t c = 0; c < depth; ++c)
    y[c] = (int8_t)mak_clamp(mak_mbqm(x[c] - zp, mult, shift + 7), INT8_MIN, INT8_MAX);
}

static ma_status l2norm_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const l2norm_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t depth = in->dims[in->ndims - 1];
  const int32_t rows = depth > 0 ? ma_num_elements(in) / depth : 0;
  for (int32_t r = 0; r < rows; ++r) {
    const size_t base = (size_t)r * depth;
    if (in->type == MA_FLOAT32)
      row_f((const float *)in->data + base, (float *)out->data + base, depth);
    else
      row_q8(d->input_zp, (const int8_t *)in->data + base, (int8_t *)out->data + base, depth);
  }
  return MA_OK;
}

const ma_kernel mak_l2_normalization = {l2norm_prepare, l2norm_eval, 0};
