/* Sums of many values: CUMSUM along one axis (exclusive and/or reverse) and ADD_N (of
 * same-shape tensors), float32 and int8.
 *
 * int8 as TFLM: values rescaled like ADD's inputs (zero point removed, 20 bits of headroom,
 * times 1/2), summed in int32 and requantized. TFLM's sums do not start at zero but at the
 * rescaled negated input zero point; this is reproduced. ADD_N needs no scratch (TFLM's holds
 * the input pointers).
 */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

enum { LEFT_SHIFT = 20 };

typedef struct {
  int32_t in_offset, out_offset, in_mult, out_mult;
  int8_t in_shift, out_shift;
  uint8_t exclusive, reverse;
} sum_data;

static ma_status axis_of(struct ma_context *ctx, const ma_tensor *in, const ma_tensor *axis,
                         int32_t *out) {
  int32_t a = 0;
  memcpy(&a, axis->data, sizeof a);
  if (a < 0) a += in->ndims;
  if (a < 0 || a >= in->ndims)
    return ma_fail(ctx, MA_ERR_KERNEL, "CUMSUM: axis %d out of range for rank %d", (int)a,
                   (int)in->ndims);
  *out = a;
  return MA_OK;
}

static ma_status int8_params(struct ma_context *ctx, const char *op, const ma_tensor *in,
                             const ma_tensor *out, sum_data *d);

static ma_status cumsum_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "CUMSUM";
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *axis = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  if ((st = mak_check_input_type(ctx, op, in, types, "float32, int8")) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "axis", axis, MA_INT32)) != MA_OK) return st;
  if (ma_num_elements(axis) != 1 || in->ndims < 1)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: needs one axis and a rank of 1 or more", op);
  /* TFLM's Prepare wants the same shape, not only as many elements (an output of another
   * shape would be filled along the input's axis). */
  if ((st = mak_check_same_shape(ctx, op, in, out)) != MA_OK) return st;
  int32_t a = 0;
  if (axis->is_const && (st = axis_of(ctx, in, axis, &a)) != MA_OK) return st;
  sum_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->exclusive = ma_opt_i32(&node->options, 0, 0) != 0;
  d->reverse = ma_opt_i32(&node->options, 1, 0) != 0;
  return in->type == MA_INT8 ? int8_params(ctx, op, in, out, d) : MA_OK;
}

/* int8 rescaling: inputs times 1/2 after 20 bits of headroom, output back by 2 / 2^20. */
static ma_status int8_params(struct ma_context *ctx, const char *op, const ma_tensor *in,
                             const ma_tensor *out, sum_data *d) {
  const double si = mak_scale(in, 0), so = mak_scale(out, 0);
  if (!(si > 0.0) || !(so > 0.0))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: int8 tensors need quantization scales", op);
  /* TFLM's Prepare stops (a failed check) on an output multiplier of 1 or more. */
  const double ratio = 2.0 * si / ((double)(1 << LEFT_SHIFT) * so);
  if (!(ratio < 1.0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: output scale %g too small for the input scale (multiplier %g, TFLM "
                   "stops at 1 or more)",
                   op, so, ratio);
  d->in_offset = -mak_zero_point(in, 0);
  d->out_offset = mak_zero_point(out, 0);
  int s;
  mak_quantize_multiplier(si / (2.0 * si), &d->in_mult, &s);
  d->in_shift = (int8_t)s;
  mak_quantize_multiplier(2.0 * si / ((double)(1 << LEFT_SHIFT) * so), &d->out_mult, &s);
  d->out_shift = (int8_t)s;
  return MA_OK;
}

static inline int32_t rescale_in(const sum_data *d, int32_t v) {
  return mak_mbqm(mak_shl_wrap(v + d->in_offset, LEFT_SHIFT), d->in_mult, d->in_shift);
}

/* One line of `depth` values `stride` apart, in order or reversed. */
static void line_f(const sum_data *d, const float *x, float *y, int32_t depth,
                   int32_t stride) {
  float acc = 0.0f;
  for (int32_t j = 0; j < depth; ++j) {
    const size_t at = (size_t)(d->reverse ? depth - 1 - j : j) * stride;
    const float v = x[at];
    if (!d->exclusive) acc += v;
    y[at] = acc;
    if (d->exclusive) acc += v;
  }
}

static void line_q8(const sum_data *d, const int8_t *x, int8_t *y, int32_t depth,
                    int32_t stride) {
  int32_t acc = rescale_in(d, 0); /* TFLM's start: the rescaled "-zero point" */
  for (int32_t j = 0; j < depth; ++j) {
    const size_t at = (size_t)(d->reverse ? depth - 1 - j : j) * stride;
    const int32_t v = rescale_in(d, x[at]);
    if (!d->exclusive) acc = mak_wrap_add(acc, v);
    const int32_t r = mak_add_sat(mak_mbqm(acc, d->out_mult, d->out_shift), d->out_offset);
    y[at] = (int8_t)mak_clamp(r, INT8_MIN, INT8_MAX);
    if (d->exclusive) acc = mak_wrap_add(acc, v);
  }
}

static ma_status cumsum_eval(struct ma_context *ctx, ma_node *node) {
  const sum_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  int32_t a = 0;
  ma_status st = axis_of(ctx, in, node->inputs[1], &a);
  if (st != MA_OK) return st;
  const int32_t outer = mak_dims_product(in, 0, a), depth = in->dims[a];
  const int32_t inner = mak_dims_product(in, a + 1, in->ndims);
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t k = 0; k < inner; ++k) {
      const size_t base = (size_t)o * depth * inner + k;
      if (in->type == MA_FLOAT32)
        line_f(d, (const float *)in->data + base, (float *)out->data + base, depth, inner);
      else
        line_q8(d, (const int8_t *)in->data + base, (int8_t *)out->data + base, depth, inner);
    }
  return MA_OK;
}

static ma_status add_n_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "ADD_N";
  ma_status st = mak_check_node(ctx, node, op, 2, INT32_MAX, node->n_inputs, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  if ((st = mak_check_input_type(ctx, op, in, types, "float32, int8")) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  for (int32_t j = 1; j < node->n_inputs; ++j) {
    const ma_tensor *t = node->inputs[j];
    if ((st = mak_check_type(ctx, op, "input", t, in->type)) != MA_OK) return st;
    if (t->ndims != in->ndims || memcmp(t->dims, in->dims, sizeof(int32_t) * (size_t)in->ndims))
      return ma_fail(ctx, MA_ERR_MODEL, "%s: inputs differ in shape", op);
    if (in->type == MA_INT8 &&
        (mak_scale(t, 0) != mak_scale(in, 0) || mak_zero_point(t, 0) != mak_zero_point(in, 0)))
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int8 inputs need the same quantization", op);
  }
  if (ma_num_elements(out) != ma_num_elements(in))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output size differs from the inputs'", op);
  sum_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  return in->type == MA_INT8 ? int8_params(ctx, op, in, out, d) : MA_OK;
}

static ma_status add_n_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const sum_data *d = node->user_data;
  const ma_tensor *out = node->outputs[0];
  const int32_t n = ma_num_elements(out), k = node->n_inputs;
  if (out->type == MA_FLOAT32) {
    float *y = out->data;
    for (int32_t i = 0; i < n; ++i) {
      float acc = 0.0f;
      for (int32_t j = 0; j < k; ++j) acc += ((const float *)node->inputs[j]->data)[i];
      y[i] = acc;
    }
    return MA_OK;
  }
  int8_t *y = out->data;
  for (int32_t i = 0; i < n; ++i) {
    int32_t acc = rescale_in(d, 0);
    for (int32_t j = 0; j < k; ++j)
      acc = mak_wrap_add(acc, rescale_in(d, ((const int8_t *)node->inputs[j]->data)[i]));
    const int32_t r = mak_add_sat(mak_mbqm(acc, d->out_mult, d->out_shift), d->out_offset);
    y[i] = (int8_t)mak_clamp(r, INT8_MIN, INT8_MAX);
  }
  return MA_OK;
}

const ma_kernel mak_cumsum = {cumsum_prepare, cumsum_eval, 0};
const ma_kernel mak_add_n = {add_n_prepare, add_n_eval, 0};
