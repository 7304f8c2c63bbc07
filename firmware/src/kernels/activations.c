/* RELU, LOGISTIC and LEAKY_RELU, float32 and int8.
 *
 * int8 RELU and LEAKY_RELU requantize with MultiplyByQuantizedMultiplier (input to output
 * scale, times alpha on the negative side) as TFLM does; int8 LOGISTIC evaluates gemmlowp's
 * fixed-point logistic on a Q4.27 input and saturates beyond the input radius.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  int32_t input_zp, output_zp, act_min, act_max;
  int32_t mult, mult_alpha; /* identity and negative-side multipliers */
  int8_t shift, shift_alpha;
  int32_t radius;           /* LOGISTIC: |input| beyond which the output saturates */
  float alpha;
} act_data;

enum { K_RELU, K_LOGISTIC, K_LEAKY };
static const char *const NAMES[] = {"RELU", "LOGISTIC", "LEAKY_RELU"};

static ma_status act_prepare(struct ma_context *ctx, ma_node *node, int kind) {
  const char *op = NAMES[kind];
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (ma_num_elements(in) != ma_num_elements(out))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", op);
  if (in->type != MA_FLOAT32 && in->type != MA_INT8)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s", op, mak_type_name(in->type));
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  act_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->alpha = kind == K_LEAKY ? ma_opt_f32(&node->options, 0, 0.0f) : 0.0f;
  if (in->type == MA_FLOAT32) return MA_OK;

  const float si = mak_scale(in, 0), so = mak_scale(out, 0);
  if (!(si > 0.0f) || !(so > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: int8 tensors need quantization scales", op);
  d->input_zp = mak_zero_point(in, 0);
  d->output_zp = mak_zero_point(out, 0);
  int shift;
  if (kind == K_LOGISTIC) {
    if (d->output_zp != -128 || fabsf(so - 1.0f / 256) > 0.001f / 256)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                     "%s: int8 output must have zero point -128 and scale 1/256", op);
    /* Input in Q4.27: frexp of scale * 2^27, without QuantizeMultiplier's adjustments. */
    const double real = (double)si * (double)(INT32_C(1) << 27);
    if (!(real > 0.0) || real > 1e300)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input scale out of range", op);
    const double q = frexp(real, &shift);
    const double m = round(q * (double)(INT64_C(1) << 31));
    d->mult = m >= 2147483647.0 ? INT32_MAX : (int32_t)m;
    if (shift > 31 || shift < -31)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input scale out of range", op);
    d->shift = (int8_t)shift;
    d->radius = mak_input_radius(4, shift);
    return MA_OK;
  }
  mak_quantize_multiplier((double)si / (double)so, &d->mult, &shift);
  d->shift = (int8_t)shift;
  if (kind == K_LEAKY) {
    /* TFLM forms input_scale * alpha / output_scale in float. */
    mak_quantize_multiplier((double)(si * d->alpha / so), &d->mult_alpha, &shift);
    d->shift_alpha = (int8_t)shift;
    d->act_min = INT8_MIN;
    d->act_max = INT8_MAX;
  } else {
    const int32_t zero = d->output_zp + (int32_t)roundf(0.0f / so);
    d->act_min = zero > INT8_MIN ? zero : INT8_MIN;
    d->act_max = INT8_MAX;
  }
  return MA_OK;
}

static int8_t logistic_q(const act_data *d, int32_t x) {
  const int32_t v = x - d->input_zp;
  if (v <= -d->radius) return INT8_MIN;
  if (v >= d->radius) return INT8_MAX;
  const int32_t q4 = mak_mbqm(v, d->mult, d->shift);
  const int32_t q0 = mak_logistic_fp(q4, 4);
  return (int8_t)mak_clamp(mak_rdbpot(q0, 23) - 128, INT8_MIN, INT8_MAX);
}

static float logistic_f(float x) {
  /* TFLM's reference cut-offs: beyond them the float result is exactly 1 or exp(x). */
  if (x > 16.619047164916992188f) return 1.0f;
  if (x < -9.0f) return expf(x);
  return 1.0f / (1.0f + expf(-x));
}

static ma_status act_eval(struct ma_context *ctx, ma_node *node, int kind) {
  (void)ctx;
  const act_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t n = ma_num_elements(in);
  if (in->type == MA_FLOAT32) {
    const float *x = in->data;
    float *y = out->data;
    for (int32_t i = 0; i < n; ++i) {
      if (kind == K_RELU) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      else if (kind == K_LOGISTIC) y[i] = logistic_f(x[i]);
      else y[i] = x[i] > 0.0f ? x[i] : x[i] * d->alpha;
    }
    return MA_OK;
  }
  const int8_t *x = in->data;
  int8_t *y = out->data;
  for (int32_t i = 0; i < n; ++i) {
    if (kind == K_LOGISTIC) {
      y[i] = logistic_q(d, x[i]);
      continue;
    }
    const int32_t v = x[i] - d->input_zp;
    const int32_t r = (kind == K_LEAKY && v < 0) ? mak_mbqm(v, d->mult_alpha, d->shift_alpha)
                                                 : mak_mbqm(v, d->mult, d->shift);
    y[i] = (int8_t)mak_clamp(mak_add_sat(r, d->output_zp), d->act_min, d->act_max);
  }
  return MA_OK;
}

static ma_status relu_prepare(struct ma_context *c, ma_node *n) {
  return act_prepare(c, n, K_RELU);
}
static ma_status relu_eval(struct ma_context *c, ma_node *n) { return act_eval(c, n, K_RELU); }
static ma_status logistic_prepare(struct ma_context *c, ma_node *n) {
  return act_prepare(c, n, K_LOGISTIC);
}
static ma_status logistic_eval(struct ma_context *c, ma_node *n) {
  return act_eval(c, n, K_LOGISTIC);
}
static ma_status leaky_prepare(struct ma_context *c, ma_node *n) {
  return act_prepare(c, n, K_LEAKY);
}
static ma_status leaky_eval(struct ma_context *c, ma_node *n) { return act_eval(c, n, K_LEAKY); }

const ma_kernel mak_relu = {relu_prepare, relu_eval, 0};
const ma_kernel mak_logistic = {logistic_prepare, logistic_eval, 0};
const ma_kernel mak_leaky_relu = {leaky_prepare, leaky_eval, 0};
