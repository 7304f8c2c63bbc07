/* One-input element-wise math: ABS (float32, int8, int16), RSQRT (float32, int8), NEG, SQRT,
 * EXP, LOG, SIN, COS, SQUARE, FLOOR, CEIL, ROUND (float32), LOGICAL_NOT (bool).
 *
 * prepare picks one typed loop; the element function is inlined (no per-element dispatch).
 * ABS int8/int16 requantizes |x - zp| by input/output scale (a ratio formed in double) only when
 * the scales differ; an unquantized int16 ABS is plain (|-32768| wraps, as TFLM's cast).
 * RSQRT int8 is TFLM's integer path: 1/sqrt(x - zp) from the fixed-point
 * Newton-Raphson of GetInvSqrtQuantizedMultiplierExp, shifted 20 bits up, then requantized by
 * 1 / (sqrt(input scale) * output scale); an input below the zero point fails at eval, as in
 * TFLM. ROUND rounds half to even.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

enum {
  U_ABS_F, U_ABS_Q8, U_ABS_Q16, U_ABS_I16, U_RSQRT_F, U_RSQRT_Q8, U_NEG_F, U_SQRT_F, U_EXP_F,
  U_LOG_F,
  U_SIN_F, U_COS_F, U_SQUARE_F, U_FLOOR_F, U_CEIL_F, U_ROUND_F, U_NOT_B
};

typedef struct {
  int32_t input_zp, output_zp, mult;
  int8_t shift;
  uint8_t path, rescale;
} unary_data;

/* One input, one output of the same type and size; `types` is a bit set of ma_type. */
static ma_status unary_begin(struct ma_context *ctx, ma_node *node, const char *op,
                             uint32_t types, const char *type_list, unary_data **out_d) {
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (ma_num_elements(in) != ma_num_elements(out))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", op);
  if ((st = mak_check_input_type(ctx, op, in, types, type_list)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  unary_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->input_zp = mak_zero_point(in, 0);
  d->output_zp = mak_zero_point(out, 0);
  *out_d = d;
  return MA_OK;
}

static ma_status need_scales(struct ma_context *ctx, const char *op, const ma_node *node) {
  if (!(mak_scale(node->inputs[0], 0) > 0.0f) || !(mak_scale(node->outputs[0], 0) > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %s tensors need quantization scales", op,
                   mak_type_name(node->inputs[0]->type));
  return MA_OK;
}

#define F32_ONLY MAK_TYPE_BIT(MA_FLOAT32)

/* Float-only operators: the kernel's variant is the path. */
static const char *float_op_name(int32_t path) {
  static const char *const names[] = {"NEG", "SQRT", "EXP", "LOG", "SIN", "COS", "SQUARE",
                                      "FLOOR", "CEIL", "ROUND"};
  return path >= U_NEG_F && path <= U_ROUND_F ? names[path - U_NEG_F] : "?";
}

static ma_status float_prepare(struct ma_context *ctx, ma_node *node) {
  unary_data *d;
  ma_status st = unary_begin(ctx, node, float_op_name(node->variant), F32_ONLY, "float32", &d);
  if (st != MA_OK) return st;
  d->path = (uint8_t)node->variant;
  return MA_OK;
}

static ma_status abs_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "ABS";
  unary_data *d;
  const uint32_t types = F32_ONLY | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT16);
  ma_status st = unary_begin(ctx, node, op, types, "float32, int8, int16", &d);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0];
  if (in->type == MA_FLOAT32 || (in->type == MA_INT16 && !mak_is_quantized(in))) {
    d->path = in->type == MA_FLOAT32 ? U_ABS_F : U_ABS_I16; /* plain int16: no rescaling */
    return MA_OK;
  }
  if ((st = need_scales(ctx, op, node)) != MA_OK) return st;
  if (in->type == MA_INT16 && (d->input_zp != 0 || d->output_zp != 0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 needs zero points 0", op);
  const float si = mak_scale(in, 0), so = mak_scale(node->outputs[0], 0);
  d->rescale = si != so;
  int shift;
  mak_quantize_multiplier((double)si / so, &d->mult, &shift); /* double, as the pip TFLM */
  d->shift = (int8_t)shift;
  d->path = in->type == MA_INT8 ? U_ABS_Q8 : U_ABS_Q16;
  return MA_OK;
}

static ma_status rsqrt_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "RSQRT";
  unary_data *d;
  ma_status st = unary_begin(ctx, node, op, F32_ONLY | MAK_TYPE_BIT(MA_INT8), "float32, int8", &d);
  if (st != MA_OK) return st;
  if (node->inputs[0]->type == MA_FLOAT32) {
    d->path = U_RSQRT_F;
    return MA_OK;
  }
  if ((st = need_scales(ctx, op, node)) != MA_OK) return st;
  /* TFLM: 1 / (sqrtf(input scale) * output scale), the product in float. */
  const float denom = sqrtf(mak_scale(node->inputs[0], 0)) * mak_scale(node->outputs[0], 0);
  int shift;
  mak_quantize_multiplier(1.0 / (double)denom, &d->mult, &shift);
  d->shift = (int8_t)shift;
  d->path = U_RSQRT_Q8;
  return MA_OK;
}

static ma_status not_prepare(struct ma_context *ctx, ma_node *node) {
  unary_data *d;
  ma_status st = unary_begin(ctx, node, "LOGICAL_NOT", MAK_TYPE_BIT(MA_BOOL), "bool", &d);
  if (st != MA_OK) return st;
  d->path = U_NOT_B;
  return MA_OK;
}


/* ---------------------------------------------------------------- element functions */

static inline int32_t abs_q(const unary_data *d, int32_t x, int32_t lo, int32_t hi) {
  const int32_t v = x - d->input_zp;
  const int32_t a = v < 0 ? -v : v;
  const int32_t r = d->rescale ? mak_add_sat(mak_mbqm(a, d->mult, d->shift), d->output_zp)
                               : a + d->output_zp;
  return mak_clamp(r, lo, hi);
}

static inline int8_t rsqrt_q8(const unary_data *d, int32_t x) {
  const int32_t v = x - d->input_zp;
  if (v == 0) return INT8_MAX;
  int32_t m;
  int s;
  mak_inv_sqrt(v, &m, &s);
  const int32_t r = mak_mbqm(mak_mbqm(1, m, s + 20), d->mult, d->shift - 20);
  return (int8_t)mak_clamp(mak_add_sat(r, d->output_zp), INT8_MIN, INT8_MAX);
}

static inline float round_half_even(float v) {
  const float f = floorf(v);
  const float diff = v - f;
  if (diff < 0.5f || (diff == 0.5f && fmodf(f, 2.0f) == 0.0f)) return f;
  return f + 1.0f;
}

#define MAP(TIN, TOUT, EXPR) MAK_MAP(TIN, TOUT, in, out, n, EXPR)

static ma_status unary_eval(struct ma_context *ctx, ma_node *node) {
  const unary_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t n = ma_num_elements(in);
  switch (d->path) {
    case U_ABS_F: MAP(float, float, fabsf(x[i])); break;
    case U_ABS_Q8: MAP(int8_t, int8_t, (int8_t)abs_q(d, x[i], INT8_MIN, INT8_MAX)); break;
    case U_ABS_Q16: MAP(int16_t, int16_t, (int16_t)abs_q(d, x[i], INT16_MIN, INT16_MAX)); break;
    case U_ABS_I16: MAP(int16_t, int16_t, (int16_t)(x[i] < 0 ? -x[i] : x[i])); break; /* wraps */
    case U_RSQRT_F: MAP(float, float, 1.0f / sqrtf(x[i])); break;
    case U_RSQRT_Q8: {
      const int8_t *x = in->data;
      for (int32_t i = 0; i < n; ++i)
        if (x[i] < d->input_zp)
          return ma_fail(ctx, MA_ERR_KERNEL, "RSQRT: input %d is below the zero point (negative)",
                         (int)x[i]);
      MAP(int8_t, int8_t, rsqrt_q8(d, x[i]));
      break;
    }
    case U_NEG_F: MAP(float, float, -x[i]); break;
    case U_SQRT_F: MAP(float, float, sqrtf(x[i])); break;
    case U_EXP_F: MAP(float, float, expf(x[i])); break;
    case U_LOG_F: MAP(float, float, logf(x[i])); break;
    case U_SIN_F: MAP(float, float, sinf(x[i])); break;
    case U_COS_F: MAP(float, float, cosf(x[i])); break;
    case U_SQUARE_F: MAP(float, float, x[i] * x[i]); break;
    case U_FLOOR_F: MAP(float, float, floorf(x[i])); break;
    case U_CEIL_F: MAP(float, float, ceilf(x[i])); break;
    case U_ROUND_F: MAP(float, float, round_half_even(x[i])); break;
    default: MAP(uint8_t, uint8_t, (uint8_t)!x[i]); break;
  }
  return MA_OK;
}

const ma_kernel mak_abs = {abs_prepare, unary_eval, 0};
const ma_kernel mak_rsqrt = {rsqrt_prepare, unary_eval, 0};
const ma_kernel mak_neg = {float_prepare, unary_eval, U_NEG_F};
const ma_kernel mak_sqrt = {float_prepare, unary_eval, U_SQRT_F};
const ma_kernel mak_exp = {float_prepare, unary_eval, U_EXP_F};
const ma_kernel mak_log = {float_prepare, unary_eval, U_LOG_F};
const ma_kernel mak_sin = {float_prepare, unary_eval, U_SIN_F};
const ma_kernel mak_cos = {float_prepare, unary_eval, U_COS_F};
const ma_kernel mak_square = {float_prepare, unary_eval, U_SQUARE_F};
const ma_kernel mak_floor = {float_prepare, unary_eval, U_FLOOR_F};
const ma_kernel mak_ceil = {float_prepare, unary_eval, U_CEIL_F};
const ma_kernel mak_round = {float_prepare, unary_eval, U_ROUND_F};
const ma_kernel mak_logical_not = {not_prepare, unary_eval, 0};
