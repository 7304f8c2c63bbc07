/* FULLY_CONNECTED, float32, int8 and 16x8 (int16 activations, int8 weights), per-tensor or
 * per-channel weights.
 *
 * Integers follow TFLM's reference FullyConnected: acc = sum (w - w_zp) * (x - x_zp) + bias
 * (per-channel weights: no weight zero point), requantized with MultiplyByQuantizedMultiplier.
 * TFLM computes the per-tensor multiplier from the float product input_scale * filter_scale
 * (then widened to double), and the per-channel ones in double: both are reproduced here
 * since they can round differently. 16x8 sums in int64 with an int64 bias and in int32 with
 * an int32 one (mak_requantize16).
 */
#include <math.h>
#include <string.h>

#include "fast/fast_s8.h"
#include "fast/mve/fast_mve_s8.h"
#include "kernel_util.h"
#include "kernels.h"

/* Everything eval needs but the operands' data (eval_data_only, except for 16x8, which reads
 * its bias's type and options): no pointers, so the op data has the same size on every ABI
 * (the host predicts it), and no larger than before the shapes moved in (the tail must not
 * grow: the offsets and the clamp fit 16 bits for int8 and int16 tensors). */
typedef struct {
  int32_t units, depth, batches;
  int32_t n_mult;
  union {
    struct {
      float min, max;
    } f; /* float32: the activation range */
    struct {
      int32_t input_offset;
      int16_t filter_offset, output_offset, act_min, act_max;
    } q; /* int8, int16 */
  } u;
  uint8_t type; /* the input's */
  int32_t mult[]; /* n_mult multipliers, then n_mult int8 shifts */
} fc_data;
_Static_assert(sizeof(fc_data) == 32, "FULLY_CONNECTED's op data: 32 bytes, as planned");

static int8_t *shifts(fc_data *d) { return (int8_t *)(d->mult + d->n_mult); }

static const char OP[] = "FULLY_CONNECTED";
enum { SLOT_QUANTIZED_BIAS_TYPE = 4 }; /* FullyConnectedOptions */

static ma_status fc_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 2, 3, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *filter = node->inputs[1];
  const ma_tensor *bias = mak_input(node, 2), *out = node->outputs[0];
  const int32_t act = ma_opt_i32(&node->options, 0, 0);
  if (ma_opt_i32(&node->options, 1, 0) != 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: shuffled weights format", OP);
  if (filter->ndims != 2 || filter->dims[1] <= 0 || filter->dims[0] <= 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: filter must be 2-D and non-empty", OP);
  const int32_t units = filter->dims[0], depth = filter->dims[1];
  const int32_t n_in = ma_num_elements(in);
  if (n_in % depth != 0 || out->ndims < 1 || out->dims[out->ndims - 1] != units ||
      ma_num_elements(out) != (n_in / depth) * units)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: shapes do not match (%d inputs of depth %d, %d units)",
                   OP, (int)n_in, (int)depth, (int)units);
  if (bias != NULL && ma_num_elements(bias) != units)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: bias has %d values for %d units", OP,
                   (int)ma_num_elements(bias), (int)units);

  if ((st = mak_check_weighted_types(ctx, OP, in, filter, bias, out, MA_INT64, MA_INT32)) != MA_OK)
    return st;
  const bool is_f32 = in->type == MA_FLOAT32;

  const int32_t n_mult = is_f32 ? 0 : (filter->quant.count > 1 ? units : 1);
  fc_data *d = ma_persistent(ctx, sizeof(fc_data) + (size_t)n_mult * 5);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  d->units = units;
  d->depth = depth;
  d->batches = n_in / depth;
  d->n_mult = n_mult;
  d->type = in->type;
  node->user_data = d;
  node->eval_data_only = in->type != MA_INT16;
  if (is_f32) return mak_act_range_f(ctx, OP, act, &d->u.f.min, &d->u.f.max);

  const float in_scale = mak_scale(in, 0), out_scale = mak_scale(out, 0);
  if (!(in_scale > 0.0f) || !(out_scale > 0.0f) || !mak_is_quantized(filter))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %s tensors need quantization scales", OP,
                   mak_type_name(in->type));
  if (filter->quant.count != 1 && filter->quant.count != units)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d filter scales for %d units", OP,
                   (int)filter->quant.count, (int)units);
  /* TFLM's Prepare (per-tensor filters): the bias on about the input x filter scale, off by
   * at most 2% of the output scale (the runtime adds the bias as if it were exactly on it). */
  if (n_mult == 1 && bias != NULL) {
    const double product = (double)in_scale * (double)mak_scale(filter, 0);
    if (!(fabs(product - (double)mak_scale(bias, 0)) / (double)out_scale <= 0.02))
      return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                     "%s: bias scale %g is not the input x filter scale %g (within 2%% of the "
                     "output scale), which TFLM refuses",
                     OP, (double)mak_scale(bias, 0), product);
  }
  d->u.q.input_offset = -mak_zero_point(in, 0);
  /* int8 weights: -zero point fits 16 bits; per-channel weights have none (as TFLM) */
  d->u.q.filter_offset = (int16_t)(n_mult == 1 ? -mak_zero_point(filter, 0) : 0);
  d->u.q.output_offset = (int16_t)mak_zero_point(out, 0);
  for (int32_t c = 0; c < n_mult; ++c) {
    /* In double, also per-tensor: TFLM's source forms that product in float, but the pip
     * TFLM's outputs are those of double (tools/sweep_requant.py found int16 and int8 cases). */
    const double m = (double)in_scale * (double)mak_scale(filter, c) / (double)out_scale;
    int shift;
    mak_quantize_multiplier(m, &d->mult[c], &shift);
    shifts(d)[c] = (int8_t)shift;
  }
  int32_t act_min, act_max; /* within the output type's range: 16 bits */
  st = mak_act_range_q(ctx, OP, act, out, &act_min, &act_max);
  d->u.q.act_min = (int16_t)act_min;
  d->u.q.act_max = (int16_t)act_max;
  return st;
}

/* int16 activations, int8 weights: exact int64 sums (|w * x| < 2^23), then mak_requantize16. */
static void eval_16x8(const ma_node *node, const fc_data *d) {
  const ma_tensor *bias_t = mak_input(node, 2);
  const bool acc64 = mak_acc64(bias_t, ma_opt_i32(&node->options, SLOT_QUANTIZED_BIAS_TYPE, 0));
  const int16_t *in = node->inputs[0]->data;
  const int8_t *w = node->inputs[1]->data;
  const int8_t *shift = (const int8_t *)(d->mult + d->n_mult);
  int16_t *out = node->outputs[0]->data;
  const int32_t units = d->units, depth = d->depth;
  for (int32_t b = 0; b < d->batches; ++b) {
    for (int32_t u = 0; u < units; ++u) {
      const int16_t *x = in + (size_t)b * depth;
      const int8_t *wr = w + (size_t)u * depth;
      uint64_t acc = 0; /* wraps on hostile biases instead of overflowing */
      for (int32_t k = 0; k < depth; ++k)
        acc += (uint64_t)((int64_t)(wr[k] + d->u.q.filter_offset) * (x[k] + d->u.q.input_offset));
      acc += (uint64_t)mak_bias16(bias_t, u);
      const int32_t mi = d->n_mult > 1 ? u : 0;
      out[(size_t)b * units + u] = (int16_t)mak_requantize16(
          (int64_t)acc, acc64, d->mult[mi], shift[mi], d->u.q.output_offset, d->u.q.act_min,
          d->u.q.act_max);
    }
  }
}

static void eval_f32(const ma_node *node, const fc_data *d) {
  const ma_tensor *bias_t = mak_input(node, 2);
  const float *in = node->inputs[0]->data, *w = node->inputs[1]->data;
  const float *bias = bias_t ? bias_t->data : NULL;
  float *out = node->outputs[0]->data;
  const int32_t units = d->units, depth = d->depth;
  for (int32_t b = 0; b < d->batches; ++b) {
    for (int32_t u = 0; u < units; ++u) {
      const float *x = in + (size_t)b * depth, *wr = w + (size_t)u * depth;
      float total = 0.0f;
      for (int32_t k = 0; k < depth; ++k) total += x[k] * wr[k];
      const float v = total + (bias ? bias[u] : 0.0f);
      out[(size_t)b * units + u] = mak_clampf(v, d->u.f.min, d->u.f.max);
    }
  }
}

/* Reads of the node: its operands' data only (eval_data_only), except in eval_16x8. */
static ma_status fc_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const fc_data *d = node->user_data;
  const ma_tensor *bias_t = mak_input(node, 2);
  if (d->type == MA_FLOAT32) {
    eval_f32(node, d);
    return MA_OK;
  }
  if (d->type == MA_INT16) {
    eval_16x8(node, d);
    return MA_OK;
  }
  const mak_fc_s8_job fc = {node->inputs[0]->data,
                            node->inputs[1]->data,
                            bias_t ? bias_t->data : NULL,
                            node->outputs[0]->data,
                            d->units,
                            d->depth,
                            d->batches,
                            d->u.q.input_offset,
                            d->u.q.output_offset,
                            d->u.q.act_min,
                            d->u.q.act_max,
                            d->n_mult,
                            d->mult,
                            (const int8_t *)(d->mult + d->n_mult)};
  if (d->u.q.filter_offset == 0 && (mak_mve_fc_s8(&fc) || mak_fast_fc_s8(&fc))) return MA_OK;
  const int32_t units = d->units, depth = d->depth, filter_offset = d->u.q.filter_offset;
  for (int32_t b = 0; b < d->batches; ++b) {
    for (int32_t u = 0; u < units; ++u) {
      const int8_t *x = fc.in + (size_t)b * depth, *wr = fc.w + (size_t)u * depth;
      uint32_t acc = 0; /* wraps like TFLM's int32 on hostile weights, without UB */
      for (int32_t k = 0; k < depth; ++k)
        acc += (uint32_t)((wr[k] + filter_offset) * (x[k] + fc.input_offset));
      if (fc.bias) acc += (uint32_t)fc.bias[u];
      const int32_t mi = d->n_mult > 1 ? u : 0;
      fc.out[(size_t)b * units + u] = (int8_t)mak_requantize(
          (int32_t)acc, d->mult[mi], fc.shift[mi], fc.output_offset, fc.act_min, fc.act_max);
    }
  }
  return MA_OK;
}

const ma_kernel mak_fully_connected = {fc_prepare, fc_eval, 0};
