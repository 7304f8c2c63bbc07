/* LOG_SOFTMAX over the last dimension, float32: x - max - log(sum exp(x - max)).
 * (int8, TFLM's fixed-point log path, is not implemented and is refused at prepare.) */
#include <float.h>
#include <math.h>

#include "kernel_util.h"
#include "kernels.h"

static ma_status log_softmax_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "LOG_SOFTMAX";
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if ((st = mak_check_input_type(ctx, op, in, MAK_TYPE_BIT(MA_FLOAT32), "float32")) != MA_OK)
    return st;
  if ((st = mak_check_type(ctx, op, "output", out, MA_FLOAT32)) != MA_OK) return st;
  if (in->ndims < 1 || ma_num_elements(in) != ma_num_elements(out) ||
      in->dims[in->ndims - 1] != out->dims[out->ndims - 1])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output shapes differ", op);
  return MA_OK;
}

static ma_status log_softmax_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *in = node->inputs[0];
  const int32_t depth = in->dims[in->ndims - 1];
  const int32_t rows = depth > 0 ? ma_num_elements(in) / depth : 0;
  for (int32_t r = 0; r < rows; ++r) {
    const float *x = (const float *)in->data + (size_t)r * depth;
    float *y = (float *)node->outputs[0]->data + (size_t)r * depth;
    float max = -FLT_MAX;
    for (int32_t c = 0; c < depth; ++c) max = x[c] > max ? x[c] : max;
    float sum = 0.0f;
    for (int32_t c = 0; c < depth; ++c) sum += expf(x[c] - max);
    const float log_sum = logf(sum);
    for (int32_t c = 0; c < depth; ++c) y[c] = x[c] - max - log_sum;
  }
  return MA_OK;
}

const ma_kernel mak_log_softmax = {log_softmax_prepare, log_softmax_eval, 0};
