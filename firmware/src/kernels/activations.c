/* Element-wise activations: RELU, RELU_N1_TO_1, RELU6, LEAKY_RELU, LOGISTIC, TANH,
 * HARD_SWISH, ELU.
 *
 * Types follow TFLM's reference kernels: float32 and int8 for all; int16 for RELU, RELU6,
 * LEAKY_RELU, LOGISTIC and TANH. prepare picks one typed loop (`path`), so eval switches once
 * per call, never per element.
 *
 * RELU_N1_TO_1 follows TFLite's reference (TFLM has none): float32 and int8 only.
 *
 * int8 RELU, RELU_N1_TO_1 and LEAKY_RELU requantize with MultiplyByQuantizedMultiplier
 * (RELU_N1_TO_1 then clamps to -1 and 1 quantized on the output scale); RELU6 clamps to
 * the input's quantized 0 and 6 without rescaling; LOGISTIC and TANH int8 evaluate gemmlowp's
 * fixed-point functions on a Q4.27 input and saturate beyond the input radius; LOGISTIC and
 * TANH int16 interpolate the 256-entry sigmoid table; HARD_SWISH int8 is TFLM's int16
 * fixed-point algorithm; ELU int8 looks up a 256-entry table filled at prepare (as TFLM).
 */
#include <math.h>
#include <string.h>

#include "fast/mve/fast_mve_activations.h"
#include "kernel_util.h"
#include "kernels.h"

enum {
  P_RELU_F, P_RELU_N1_TO_1_F, P_RELU6_F, P_LEAKY_F, P_LOGISTIC_F, P_TANH_F, P_HSWISH_F, P_ELU_F,
  P_RESCALE_Q8, P_CLAMP_Q8, P_CLAMP_Q16, P_LOGISTIC_Q8, P_TANH_Q8, P_LOGISTIC_Q16,
  P_TANH_Q16, P_HSWISH_Q8, P_TABLE_Q8, P_RESCALE_Q16
};

/* Everything eval needs but the operands' data (eval_data_only), in the 44 bytes it took
 * before the count came in (radius and alpha share a place: no path reads both). */
typedef struct {
  int32_t input_zp, output_zp, act_min, act_max;
  int32_t mult, mult_alpha; /* identity and negative-side multipliers */
  union {
    int32_t radius; /* LOGISTIC/TANH int8: |input| beyond which the output saturates */
    float alpha;    /* LEAKY_RELU float32 (and its int8 prepare) */
  };
  int32_t count; /* the input's (and output's) values */
  int16_t hs_out_mult, hs_relu_mult; /* HARD_SWISH int16 multipliers */
  int8_t shift, shift_alpha, hs_out_exp, hs_relu_exp;
  uint8_t alpha_negative; /* LEAKY_RELU: negate the negative side's product */
  uint8_t path;
} act_data;
_Static_assert(sizeof(act_data) == 44, "the activations' op data: 44 bytes, as planned");

typedef struct {
  act_data d;
  int8_t table[256]; /* ELU int8: output for each input value */
} table_data;

/* Checks one input and one output of the same type and size; returns the op data. */
static ma_status act_begin(struct ma_context *ctx, ma_node *node, const char *op, size_t size,
                           bool int16_ok, act_data **out_d) {
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (ma_num_elements(in) != ma_num_elements(out))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", op);
  if (in->type != MA_FLOAT32 && in->type != MA_INT8 && !(int16_ok && in->type == MA_INT16))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s is not supported (float32, int8%s)",
                   op, mak_type_name(in->type), int16_ok ? ", int16" : "");
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  if (in->type != MA_FLOAT32 && (!(mak_scale(in, 0) > 0.0f) || !(mak_scale(out, 0) > 0.0f)))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %s tensors need quantization scales", op,
                   mak_type_name(in->type));
  act_data *d = ma_persistent(ctx, size);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, size);
  node->user_data = d;
  node->eval_data_only = 1;
  d->count = ma_num_elements(in);
  d->input_zp = mak_zero_point(in, 0);
  d->output_zp = mak_zero_point(out, 0);
  *out_d = d;
  return MA_OK;
}

static ma_status set_mult(act_data *d, double m, bool alpha) {
  int shift;
  mak_quantize_multiplier(m, alpha ? &d->mult_alpha : &d->mult, &shift);
  if (alpha) d->shift_alpha = (int8_t)shift;
  else d->shift = (int8_t)shift;
  return MA_OK;
}

/* ---------------------------------------------------------------- prepare */

/* RELU and RELU_N1_TO_1, as TFLite's QuantizedReluX: requantize to the output scale, then
 * clamp to the bounds quantized on the output's scale (a fused activation's range). TFLite
 * has no int16 RELU_N1_TO_1. */
static ma_status relu_x_prepare(struct ma_context *ctx, ma_node *node, const char *op,
                                int32_t act) {
  act_data *d;
  ma_status st = act_begin(ctx, node, op, sizeof *d, act == MAK_ACT_RELU, &d);
  if (st != MA_OK) return st;
  const uint8_t type = node->inputs[0]->type;
  if (type == MA_FLOAT32) {
    d->path = act == MAK_ACT_RELU ? P_RELU_F : P_RELU_N1_TO_1_F;
    return MA_OK;
  }
  if (type == MA_INT16 && (d->input_zp != 0 || d->output_zp != 0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 needs zero points 0", op);
  const float si = mak_scale(node->inputs[0], 0), so = mak_scale(node->outputs[0], 0);
  d->path = type == MA_INT8 ? P_RESCALE_Q8 : P_RESCALE_Q16;
  set_mult(d, (double)si / so, false);
  d->mult_alpha = d->mult;
  d->shift_alpha = d->shift;
  return mak_act_range_q(ctx, op, act, node->outputs[0], &d->act_min, &d->act_max);
}

static ma_status relu_prepare(struct ma_context *ctx, ma_node *node) {
  return relu_x_prepare(ctx, node, "RELU", MAK_ACT_RELU);
}

static ma_status relu_n1_to_1_prepare(struct ma_context *ctx, ma_node *node) {
  return relu_x_prepare(ctx, node, "RELU_N1_TO_1", MAK_ACT_RELU_N1_TO_1);
}

static ma_status leaky_prepare(struct ma_context *ctx, ma_node *node) {
  act_data *d;
  ma_status st = act_begin(ctx, node, "LEAKY_RELU", sizeof *d, true, &d);
  if (st != MA_OK) return st;
  d->alpha = ma_opt_f32(&node->options, 0, 0.0f);
  const uint8_t type = node->inputs[0]->type;
  if (type == MA_FLOAT32) {
    d->path = P_LEAKY_F;
    return MA_OK;
  }
  const float si = mak_scale(node->inputs[0], 0), so = mak_scale(node->outputs[0], 0);
  d->path = type == MA_INT8 ? P_RESCALE_Q8 : P_RESCALE_Q16;
  /* Both scale ratios in double: TFLM's source writes them in float, but the pip TFLM's
   * results are those of the double ratios (tests/runtime/test_requant_sweep.py). A negative
   * alpha: TFLM quantizes |alpha| (its multiplier is the exact negation) and negates the
   * product. */
  const double alpha_ratio = (double)si * d->alpha / so;
  set_mult(d, (double)si / so, false);
  set_mult(d, alpha_ratio < 0.0 ? -alpha_ratio : alpha_ratio, true);
  d->alpha_negative = alpha_ratio < 0.0;
  d->act_min = type == MA_INT8 ? INT8_MIN : INT16_MIN;
  d->act_max = type == MA_INT8 ? INT8_MAX : INT16_MAX;
  return MA_OK;
}

static ma_status relu6_prepare(struct ma_context *ctx, ma_node *node) {
  act_data *d;
  ma_status st = act_begin(ctx, node, "RELU6", sizeof *d, true, &d);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0];
  if (in->type == MA_FLOAT32) {
    d->path = P_RELU6_F;
    return MA_OK;
  }
  /* TFLM clamps to the input's quantized 0 and 6 (FloatToQuantizedType), no rescaling. */
  const int32_t lo = in->type == MA_INT8 ? INT8_MIN : INT16_MIN;
  const int32_t hi = in->type == MA_INT8 ? INT8_MAX : INT16_MAX;
  const float six = roundf(6.0f / mak_scale(in, 0));
  d->act_min = mak_clamp(d->input_zp, lo, hi);
  d->act_max = six > 65536.0f ? hi : mak_clamp((int32_t)six + d->input_zp, lo, hi);
  d->path = in->type == MA_INT8 ? P_CLAMP_Q8 : P_CLAMP_Q16;
  return MA_OK;
}

/* Q4.27 input rescaling of int8 LOGISTIC and TANH: frexp of scale * 2^27, no adjustments. */
static ma_status q4_input(struct ma_context *ctx, const char *op, act_data *d, float scale) {
  const double real = (double)scale * (double)(INT32_C(1) << 27);
  int shift;
  const double q = frexp(real, &shift);
  /* TFLite's CalculateInputRadius shifts by the exponent: scales below 2^-28 (a negative
   * exponent) are undefined there, and above 2^4 saturate every input but 0. */
  if (!(real > 0.0) || shift > 31 || shift < 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: int8 input scale %g out of range (2^-28 to 2^4)", op, (double)scale);
  const double m = round(q * (double)(INT64_C(1) << 31));
  d->mult = m >= 2147483647.0 ? INT32_MAX : (int32_t)m;
  d->shift = (int8_t)shift;
  d->radius = mak_input_radius(4, shift);
  return MA_OK;
}

/* TFLite's CheckedLog2: log2 rounded, and whether x is a power of two (within 1e-3). */
static bool checked_log2(float x, int *log2_rounded) {
  const float l = logf(x) * (1.0f / logf(2.0f));
  const float r = roundf(l);
  *log2_rounded = (int)r;
  return fabsf(l - r) < 1e-3f;
}

/* int16 LOGISTIC/TANH: input scaled to Q3.12 times 3 (power-of-two scales exactly), output
 * Q0.15; zero points 0, as TFLM requires. */
static ma_status q16_sigmoid_input(struct ma_context *ctx, const char *op, act_data *d,
                                   const ma_tensor *in, const ma_tensor *out, int max_pot_shift) {
  if (d->input_zp != 0 || d->output_zp != 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 needs zero points 0", op);
  int l2;
  const float si = mak_scale(in, 0);
  bool pot = checked_log2(si, &l2);
  int shift = 12 + l2;
  pot = pot && shift >= 0 && shift <= max_pot_shift;
  if (pot) {
    d->mult = 3 << shift;
    d->shift = 0;
  } else {
    double m = (double)si * 4096.0 * 3.0;
    shift = 0;
    while (m <= 32767.0 / 2.0 && shift <= 30) {
      ++shift;
      m *= 2.0;
    }
    if (m > 32767.0)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 input scale %g too large", op,
                     (double)si);
    d->mult = (int32_t)m;
    d->shift = (int8_t)shift;
  }
  if (!checked_log2(mak_scale(out, 0), &l2) || l2 != -15)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 output scale must be 2^-15", op);
  return MA_OK;
}

static ma_status logistic_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "LOGISTIC";
  act_data *d;
  ma_status st = act_begin(ctx, node, op, sizeof *d, true, &d);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (in->type == MA_FLOAT32) {
    d->path = P_LOGISTIC_F;
    return MA_OK;
  }
  if (in->type == MA_INT16) {
    d->path = P_LOGISTIC_Q16;
    return q16_sigmoid_input(ctx, op, d, in, out, 0);
  }
  if (d->output_zp != -128 || fabsf(mak_scale(out, 0) - 1.0f / 256) > 0.001f / 256)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: int8 output must have zero point -128 and scale 1/256", op);
  d->path = P_LOGISTIC_Q8;
  return q4_input(ctx, op, d, mak_scale(in, 0));
}

static ma_status tanh_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "TANH";
  act_data *d;
  ma_status st = act_begin(ctx, node, op, sizeof *d, true, &d);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (in->type == MA_FLOAT32) {
    d->path = P_TANH_F;
    return MA_OK;
  }
  if (in->type == MA_INT16) {
    d->path = P_TANH_Q16;
    return q16_sigmoid_input(ctx, op, d, in, out, 1);
  }
  /* The int8 result is tanh in units of 1/128 without zero point, whatever the output's
   * quantization says (TFLM does not check it). */
  d->path = P_TANH_Q8;
  return q4_input(ctx, op, d, mak_scale(in, 0));
}

static ma_status hard_swish_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "HARD_SWISH";
  act_data *d;
  ma_status st = act_begin(ctx, node, op, sizeof *d, false, &d);
  if (st != MA_OK) return st;
  if (node->inputs[0]->type == MA_FLOAT32) {
    d->path = P_HSWISH_F;
    return MA_OK;
  }
  /* Input on a 2^-7 finer "hires" scale (exact in float), the ReLU-ish gate on 3/32768; the
   * ratios in double: TFLM's source divides in float, but the pip TFLM's outputs are those of
   * double (9 of 40 configurations whose 16-bit multipliers the two tell apart differed). */
  const float hires = (1.0f / 128.0f) * mak_scale(node->inputs[0], 0);
  const float out_scale = mak_scale(node->outputs[0], 0);
  int32_t m;
  int e;
  mak_quantize_multiplier((double)hires / (double)out_scale, &m, &e);
  if (e > 0 || e < -30)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: output scale too small or too large for "
                   "the int8 input scale", op);
  d->hs_out_mult = mak_q15_multiplier(m);
  d->hs_out_exp = (int8_t)e;
  mak_quantize_multiplier((double)hires / (3.0 / 32768.0), &m, &e);
  if (e < -30 || e > 16)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input scale out of range", op);
  d->hs_relu_mult = mak_q15_multiplier(m);
  d->hs_relu_exp = (int8_t)e;
  d->path = P_HSWISH_Q8;
  return MA_OK;
}

static ma_status elu_prepare(struct ma_context *ctx, ma_node *node) {
  table_data *t;
  ma_status st = act_begin(ctx, node, "ELU", sizeof *t, false, (act_data **)&t);
  if (st != MA_OK) return st;
  if (node->inputs[0]->type == MA_FLOAT32) {
    t->d.path = P_ELU_F;
    return MA_OK;
  }
  const float si = mak_scale(node->inputs[0], 0), inv_so = 1.0f / mak_scale(node->outputs[0], 0);
  for (int32_t v = INT8_MIN; v <= INT8_MAX; ++v) {
    const float x = si * (float)(v - t->d.input_zp);
    const float y = roundf((x < 0.0f ? expf(x) - 1.0f : x) * inv_so);
    const float q = y + (float)t->d.output_zp;
    t->table[(uint8_t)(int8_t)v] = (int8_t)(q < -128.0f ? -128 : (q > 127.0f ? 127 : (int32_t)q));
  }
  t->d.path = P_TABLE_Q8;
  return MA_OK;
}

/* ---------------------------------------------------------------- element functions */

static int8_t logistic_q8(const act_data *d, int32_t x) {
  const int32_t v = x - d->input_zp;
  if (v <= -d->radius) return INT8_MIN;
  if (v >= d->radius) return INT8_MAX;
  const int32_t q0 = mak_logistic_fp_i(mak_mbqm_i(v, d->mult, d->shift), 4);
  return (int8_t)mak_clamp(mak_rdbpot_i(q0, 23) - 128, INT8_MIN, INT8_MAX);
}

static int8_t tanh_q8(const act_data *d, int32_t x) {
  const int32_t v = x - d->input_zp;
  if (v <= -d->radius) return INT8_MIN;
  if (v >= d->radius) return INT8_MAX;
  const int32_t q0 = mak_tanh_fp_i(mak_mbqm_i(v, d->mult, d->shift), 4);
  return (int8_t)mak_clamp(mak_rdbpot_i(q0, 24), INT8_MIN, INT8_MAX);
}

/* int16 sigmoid(x) or tanh(x): linear interpolation in the table of sigmoid(i/24). */
static int16_t sigmoid_q16(const act_data *d, int16_t x, bool tanh) {
  const int64_t round = d->shift > 0 ? INT64_C(1) << (d->shift - 1) : 0;
  const int32_t v = (int32_t)(((int64_t)x * d->mult + round) >> d->shift);
  const uint32_t a = (uint32_t)(v < 0 ? -v : v);
  const int frac_bits = tanh ? 8 : 9; /* tanh(x) = 2 sigmoid(2x) - 1 */
  const uint32_t hi = a >> frac_bits;
  uint32_t r;
  if (hi >= 255) {
    r = tanh ? 0xFFFFu << 8 : 0x7FFFu << 10;
  } else {
    const uint32_t ua = mak_sigmoid_table[hi], ub = mak_sigmoid_table[hi + 1];
    r = (ua << frac_bits) + (a & ((1u << frac_bits) - 1)) * (ub - ua);
  }
  if (tanh) {
    const int32_t s = v >= 0 ? (int32_t)r - (1 << 23) + (1 << 7)
                             : -(int32_t)r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)(s >> 8);
  }
  r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
  return (int16_t)(r >> 10);
}

/* RELU and LEAKY_RELU requantized; the negative side by alpha (RELU: the same multiplier). */
static inline int32_t rescale_q(const act_data *d, int32_t x) {
  const int32_t v = x - d->input_zp;
  int32_t r;
  if (v >= 0) r = mak_mbqm(v, d->mult, d->shift);
  else if (d->alpha_negative) r = -mak_mbqm(v, d->mult_alpha, d->shift_alpha);
  else r = mak_mbqm(v, d->mult_alpha, d->shift_alpha);
  return mak_clamp(mak_add_sat(r, d->output_zp), d->act_min, d->act_max);
}

static float logistic_f(float x) {
  /* TFLM's reference cut-offs: beyond them the float result is exactly 1 or exp(x). */
  if (x > 16.619047164916992188f) return 1.0f;
  if (x < -9.0f) return expf(x);
  return 1.0f / (1.0f + expf(-x));
}

/* gemmlowp's int16 SaturatingRoundingDoublingHighMul. */
static int16_t srdhm16(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  const int32_t ab = (int32_t)a * b;
  return (int16_t)((ab + (ab >= 0 ? (1 << 14) : 1 - (1 << 14))) / (1 << 15));
}

/* gemmlowp's RoundingDivideByPOT on int16 (its mask is an int16 too). */
static int16_t rdbpot16(int16_t x, int e) {
  const int16_t mask = (int16_t)((INT32_C(1) << e) - 1);
  const int16_t remainder = (int16_t)(x & mask);
  const int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
  return (int16_t)((x >> e) + (remainder > threshold ? 1 : 0));
}

static int16_t sat_shl16(int16_t x, int amount) {
  const int64_t r = (int64_t)x * ((int64_t)1 << amount);
  return (int16_t)(r > INT16_MAX ? INT16_MAX : (r < INT16_MIN ? INT16_MIN : r));
}

static int8_t hard_swish_q8(const act_data *d, int8_t x) {
  const int16_t hires = (int16_t)((x - d->input_zp) * (1 << 7));
  const int16_t pre_out = srdhm16(hires, d->hs_out_mult);
  int16_t relu = hires; /* relu6(x + 3) / 6 mapped to [-1, 1] in Q0.15 */
  if (d->hs_relu_exp > 0) relu = sat_shl16(relu, d->hs_relu_exp - 1);
  relu = srdhm16(relu, d->hs_relu_mult);
  if (d->hs_relu_exp > 0) relu = sat_shl16(relu, 1);
  if (d->hs_relu_exp < 0) relu = rdbpot16(relu, -d->hs_relu_exp);
  relu = (int16_t)((relu + (1 << 15)) >> 1);
  const int32_t prod = (int32_t)relu * pre_out;
  const int16_t pre_shift =
      (relu == INT16_MIN && pre_out == INT16_MIN) ? INT16_MAX : (int16_t)(prod / (1 << 15));
  const int16_t y = (int16_t)(rdbpot16(pre_shift, -d->hs_out_exp) + d->output_zp);
  return (int8_t)mak_clamp(y, INT8_MIN, INT8_MAX);
}

/* ---------------------------------------------------------------- eval */

#define MAP(TIN, TOUT, EXPR) MAK_MAP(TIN, TOUT, in, out, n, EXPR)

/* Reads of the node: its operands' data only (eval_data_only). */
static ma_status act_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const act_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t n = d->count;
  switch (d->path) {
    case P_RELU_F: MAP(float, float, x[i] > 0.0f ? x[i] : 0.0f); break;
    case P_RELU_N1_TO_1_F: /* NaN passes, as TFLite's */
      MAP(float, float, x[i] > 1.0f ? 1.0f : (x[i] < -1.0f ? -1.0f : x[i]));
      break;
    case P_RELU6_F: MAP(float, float, x[i] > 6.0f ? 6.0f : (x[i] < 0.0f ? 0.0f : x[i])); break;
    case P_LEAKY_F: MAP(float, float, x[i] > 0.0f ? x[i] : x[i] * d->alpha); break;
    case P_LOGISTIC_F: MAP(float, float, logistic_f(x[i])); break;
    case P_TANH_F: MAP(float, float, tanhf(x[i])); break;
    case P_HSWISH_F:
      MAP(float, float, x[i] * mak_clampf(x[i] + 3.0f, 0.0f, 6.0f) / 6.0f);
      break;
    case P_ELU_F: MAP(float, float, x[i] < 0.0f ? expm1f(x[i]) : x[i]); break;
    case P_RESCALE_Q8: MAP(int8_t, int8_t, (int8_t)rescale_q(d, x[i])); break;
    case P_RESCALE_Q16: MAP(int16_t, int16_t, (int16_t)rescale_q(d, x[i])); break;
    case P_CLAMP_Q8: MAP(int8_t, int8_t, (int8_t)mak_clamp(x[i], d->act_min, d->act_max)); break;
    case P_CLAMP_Q16:
      MAP(int16_t, int16_t, (int16_t)mak_clamp(x[i], d->act_min, d->act_max));
      break;
    case P_LOGISTIC_Q8:
    case P_TANH_Q8:
      if (mak_mve_sigmoid_q8(d->path == P_TANH_Q8, in->data, out->data, n, d->input_zp,
                             d->radius, d->mult, d->shift))
        break;
      if (d->path == P_TANH_Q8) MAP(int8_t, int8_t, tanh_q8(d, x[i]));
      else MAP(int8_t, int8_t, logistic_q8(d, x[i]));
      break;
    case P_LOGISTIC_Q16: MAP(int16_t, int16_t, sigmoid_q16(d, x[i], false)); break;
    case P_TANH_Q16: MAP(int16_t, int16_t, sigmoid_q16(d, x[i], true)); break;
    case P_HSWISH_Q8: MAP(int8_t, int8_t, hard_swish_q8(d, x[i])); break;
    default: { /* P_TABLE_Q8 */
      const int8_t *table = ((const table_data *)node->user_data)->table;
      MAP(int8_t, int8_t, table[(uint8_t)x[i]]);
      break;
    }
  }
  return MA_OK;
}

const ma_kernel mak_relu = {relu_prepare, act_eval, 0};
const ma_kernel mak_relu_n1_to_1 = {relu_n1_to_1_prepare, act_eval, 0};
const ma_kernel mak_relu6 = {relu6_prepare, act_eval, 0};
const ma_kernel mak_leaky_relu = {leaky_prepare, act_eval, 0};
const ma_kernel mak_logistic = {logistic_prepare, act_eval, 0};
const ma_kernel mak_tanh = {tanh_prepare, act_eval, 0};
const ma_kernel mak_hard_swish = {hard_swish_prepare, act_eval, 0};
const ma_kernel mak_elu = {elu_prepare, act_eval, 0};
