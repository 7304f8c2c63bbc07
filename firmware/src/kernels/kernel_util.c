/* Shared kernel helpers; see kernel_util.h. */
#include "kernel_util.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- integer rounding */

int32_t mak_srdhm(int32_t a, int32_t b) { return mak_srdhm_i(a, b); }

int32_t mak_rdbpot(int32_t x, int exponent) { return mak_rdbpot_i(x, exponent); }

int32_t mak_shl_wrap(int32_t x, int shift) {
  /* TFLite computes x * (1 << shift) in int32; wrap instead of overflowing (UB). */
  return (int32_t)((uint32_t)x << shift);
}

int16_t mak_q15_multiplier(int32_t m) {
  /* TFLite's DownScaleInt32ToInt16Multiplier; the 64-bit MultiplyByQuantizedMultiplier
   * writes the same rounding with a threshold of 0x7FFF0000, which gives 0x7FFF for every
   * multiplier between the two thresholds as well. */
  if (m >= INT32_MAX - (1 << 15)) return INT16_MAX;
  return (int16_t)(((int64_t)m + (1 << 15)) >> 16);
}

int32_t mak_mbqm64(int64_t x, int32_t multiplier, int shift) {
  /* TFLite: the multiplier rounded to 16 bits, one rounding shift by 15 - shift. Wrapping
   * unsigned arithmetic keeps hostile values defined where TFLite's would overflow. */
  const int32_t reduced = mak_q15_multiplier(multiplier);
  int total_shift = 15 - shift;
  if (total_shift < 1) total_shift = 1;
  if (total_shift > 62) total_shift = 62;
  const uint64_t r = (uint64_t)x * (uint64_t)(int64_t)reduced + (UINT64_C(1) << (total_shift - 1));
  const int64_t rs = (int64_t)r; /* two's complement on every target */
  return (int32_t)(uint32_t)(uint64_t)(rs >> total_shift);
}

int32_t mak_mbqm(int32_t x, int32_t multiplier, int shift) {
  return mak_mbqm_i(x, multiplier, shift);
}

void mak_quantize_multiplier(double m, int32_t *multiplier, int *shift) {
  if (!(m > 0.0)) { /* zero, negative or NaN: no scaling */
    *multiplier = 0;
    *shift = 0;
    return;
  }
  if (m >= 2147483648.0) { /* includes infinity; saturates as below */
    *multiplier = INT32_MAX;
    *shift = 30;
    return;
  }
  int e = 0;
  const double frac = frexp(m, &e);
  int64_t q = (int64_t)round(frac * (double)(INT64_C(1) << 31));
  if (q == (INT64_C(1) << 31)) {
    q /= 2;
    ++e;
  }
  if (e < -31) { /* flush multipliers below 2^-31 to zero, as TFLite does */
    e = 0;
    q = 0;
  }
  if (e > 30) { /* saturate, as TFLite does */
    e = 30;
    q = (INT64_C(1) << 31) - 1;
  }
  *multiplier = (int32_t)q;
  *shift = e;
}

int32_t mak_input_radius(int integer_bits, int left_shift) {
  /* (2^integer_bits - 1) * 2^(31 - integer_bits - left_shift), floored: below 2^31 for any
   * left_shift >= 0. A negative shift (undefined in TFLite, whose kernels refuse it here at
   * prepare) or a hostile integer_bits saturates instead of overflowing the conversion. */
  if (integer_bits < 0) integer_bits = 0;
  if (integer_bits > 31) integer_bits = 31;
  if (left_shift < -64) left_shift = -64; /* saturated either way; keeps the sum below in int */
  if (left_shift > 64) left_shift = 64;
  const double r =
      floor(ldexp(ldexp(1.0, integer_bits) - 1.0, 31 - integer_bits - left_shift));
  return r >= (double)INT32_MAX ? INT32_MAX : (r > 0.0 ? (int32_t)r : 0);
}

/* ---------------------------------------------------------------- gemmlowp fixed point */

/* SaturatingRoundingMultiplyByPOT with a positive exponent: a saturating left shift. */
int32_t mak_sat_shl(int32_t x, int e) { return mak_sat_shl_i(x, e); }

static int32_t add_wrap(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t sub_wrap(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

/* gemmlowp's RoundingHalfSum: (a + b) / 2, rounded half away from zero. */
static int32_t rounding_half_sum(int32_t a, int32_t b) {
  const int64_t sum = (int64_t)a + b;
  return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

int32_t mak_exp_on_negative_values(int32_t a, int integer_bits) {
  return mak_exp_on_negative_values_i(a, integer_bits);
}

int32_t mak_one_over_one_plus_x(int32_t a) { return mak_one_over_one_plus_x_i(a); }

int32_t mak_one_minus_x_over_one_plus_x(int32_t a) {
  return mak_one_minus_x_over_one_plus_x_i(a);
}

int32_t mak_tanh_fp(int32_t a, int integer_bits) { return mak_tanh_fp_i(a, integer_bits); }

/* GetInvSqrtQuantizedMultiplierExp (reverse shift -1): Newton-Raphson in Q3.28 after
 * normalising x by powers of 4. */
void mak_inv_sqrt(int32_t x, int32_t *mult, int *shift) {
  if (x <= 1) {
    *mult = INT32_MAX;
    *shift = 0;
    return;
  }
  int s = 11;
  while (x >= (INT32_C(1) << 29)) {
    x /= 4;
    ++s;
  }
  int lz = 0;
  while (!((uint32_t)x & (0x80000000u >> lz))) ++lz;
  const int pairs = (lz - 1) / 2 - 1;
  s -= pairs;
  x <<= 2 * pairs;
  /* Newton-Raphson for 1/sqrt in Q3.28, five iterations from 1. */
  const int32_t in_q3 = x >> 1;
  const int32_t half_in = mak_rdbpot(in_q3, 1);
  const int32_t three_halves = (INT32_C(1) << 28) + (INT32_C(1) << 27);
  int32_t r = INT32_C(1) << 28;
  for (int i = 0; i < 5; ++i) {
    const int32_t r3 = mak_sat_shl(mak_srdhm(mak_srdhm(r, r), r), 6);
    r = mak_sat_shl((int32_t)((uint32_t)mak_srdhm(three_halves, r) -
                              (uint32_t)mak_srdhm(half_in, r3)), 3);
  }
  r = mak_srdhm(r, 1518500250); /* times sqrt(2) / 2 */
  if (s < 0) {
    r = mak_shl_wrap(r, -s);
    s = 0;
  }
  *mult = r;
  *shift = -s;
}

int32_t mak_logistic_fp(int32_t a, int integer_bits) { return mak_logistic_fp_i(a, integer_bits); }

/* Leading zero bits of x as uint32 (32 for 0), minus one: the shift that brings a positive x
 * to [2^30, 2^31). A negative x (only from a wrapped sum) gets 0, where TFLite's shift by -1
 * is undefined. */
static int headroom(int32_t x) {
  int n = 0;
  while (n < 32 && !((uint32_t)x & (0x80000000u >> n))) ++n;
  return n > 0 ? n - 1 : 0;
}


/* SaturatingRoundingMultiplyByPOTParam for an exponent >= 0. */
static int32_t sat_shl0(int32_t x, int e) { return e == 0 ? x : mak_sat_shl(x, e); }

/* TFLite's log_x_for_x_greater_than_or_equal_to_1: log(a) by a rational approximation on
 * [sqrt(1/2), sqrt(2)) after normalising by powers of sqrt(2), accumulated with one extra
 * integer bit. The constants are log(2), 2^-1/4, 2^-1/2, 1/4 and the approximation's
 * coefficients, all in Q0.31. */
int32_t mak_log_x_ge_1(int32_t a, int in_bits, int out_bits) {
  const int acc_bits = out_bits + 1;
  const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
  const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769,
                alpha_f = 638450708;
  const int32_t shifted_quarter = mak_rdbpot(INT32_C(1) << 29, acc_bits);
  /* Two candidate normalisations, a * 2^k and a * 2^k / sqrt(2), keep the smaller. */
  const int za_room = headroom(a);
  const int32_t r_a = sat_shl0(mak_srdhm(sat_shl0(a, za_room), sqrt_half), 1);
  const int32_t za_pow2 =
      mak_add_sat(sat_shl0(in_bits - za_room - 1, 31 - acc_bits), shifted_quarter);
  const int zb_room = headroom(mak_srdhm(a, sqrt_half));
  const int32_t r_b = sat_shl0(a, zb_room);
  const int32_t zb_pow2 =
      mak_add_sat(sat_shl0(in_bits - zb_room, 31 - acc_bits), -shifted_quarter);
  const int32_t r = r_a < r_b ? r_a : r_b;
  const int32_t pow2 = za_pow2 > zb_pow2 ? za_pow2 : zb_pow2;
  const int32_t p = rounding_half_sum(r, sqrt_sqrt_half);
  const int32_t q = mak_shl_wrap(sub_wrap(r, sqrt_sqrt_half), 1);
  const int32_t q2 = mak_srdhm(q, q);
  const int32_t num = add_wrap(mak_srdhm(q, r), mak_srdhm(mak_srdhm(q, q2), alpha_n));
  const int32_t den_minus_one =
      add_wrap(mak_srdhm(p, add_wrap(add_wrap(alpha_i, q), mak_srdhm(alpha_d, q2))),
               mak_srdhm(alpha_f, q));
  const int32_t recip = mak_one_over_one_plus_x(den_minus_one);
  const int32_t acc =
      add_wrap(mak_srdhm(pow2, log_2), mak_srdhm(mak_rdbpot(num, acc_bits), recip));
  return sat_shl0(acc, acc_bits - out_bits);
}

/* ---------------------------------------------------------------- quantization params */

bool mak_is_quantized(const ma_tensor *t) {
  return t->quant.scale != NULL && t->quant.count > 0;
}

float mak_scale(const ma_tensor *t, int32_t i) {
  if (!mak_is_quantized(t) || i < 0 || i >= t->quant.count) return 0.0f;
  float s;
  memcpy(&s, (const uint8_t *)t->quant.scale + 4 * (size_t)i, sizeof s);
  return s;
}

int32_t mak_zero_point(const ma_tensor *t, int32_t i) {
  if (t->quant.zero_point == NULL || i < 0 || i >= t->quant.count) return 0;
  int64_t z;
  memcpy(&z, (const uint8_t *)t->quant.zero_point + 8 * (size_t)i, sizeof z);
  if (z < INT32_MIN || z > INT32_MAX) return 0;
  return (int32_t)z;
}

/* ---------------------------------------------------------------- activation ranges */

static int64_t mak_clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/* roundf to int32, saturating (a tiny hostile scale must not make the conversion UB). */
static int32_t round_sat(float f) {
  const float r = roundf(f);
  if (!(r > -2147483520.0f)) return r != r ? 0 : -2147483520;
  return r > 2147483520.0f ? 2147483520 : (int32_t)r;
}

ma_status mak_act_range_q(struct ma_context *ctx, const char *op, int32_t act,
                          const ma_tensor *out, int32_t *act_min, int32_t *act_max) {
  int32_t qmin, qmax;
  switch (out->type) {
    case MA_INT8: qmin = INT8_MIN; qmax = INT8_MAX; break;
    case MA_UINT8: qmin = 0; qmax = UINT8_MAX; break;
    case MA_INT16: qmin = INT16_MIN; qmax = INT16_MAX; break;
    default: qmin = INT32_MIN; qmax = INT32_MAX; break;
  }
  const float scale = mak_scale(out, 0);
  const int32_t zp = mak_zero_point(out, 0);
  if (act != MAK_ACT_NONE && !(scale > 0.0f))
    return ma_fail(ctx, MA_ERR_KERNEL, "%s: fused activation needs a positive output scale", op);
  /* TFLM's Prepare refuses a bound whose f / scale, rounded in float, leaves int32. */
  const float bound = act == MAK_ACT_RELU6 ? 6.0f : act == MAK_ACT_RELU_N1_TO_1 ? 1.0f : 0.0f;
  const float q = roundf(bound / scale);
  if (act != MAK_ACT_NONE && !(q >= -2147483648.0f && q <= 2147483648.0f))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: output scale %g too small for its fused activation (%g / scale leaves "
                   "int32; TFLM refuses it)",
                   op, (double)scale, (double)bound);
  /* TFLite rounds f / scale in float, half away from zero, then clamps to the type. */
#define MAK_Q(f) ((int32_t)mak_clamp64((int64_t)zp + round_sat((f) / scale), qmin, qmax))
  switch (act) {
    case MAK_ACT_NONE: *act_min = qmin; *act_max = qmax; break;
    case MAK_ACT_RELU: *act_min = MAK_Q(0.0f); *act_max = qmax; break;
    case MAK_ACT_RELU6: *act_min = MAK_Q(0.0f); *act_max = MAK_Q(6.0f); break;
    case MAK_ACT_RELU_N1_TO_1: *act_min = MAK_Q(-1.0f); *act_max = MAK_Q(1.0f); break;
    default:
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: fused activation %d not supported", op,
                     (int)act);
  }
#undef MAK_Q
  return MA_OK;
}

ma_status mak_act_range_f(struct ma_context *ctx, const char *op, int32_t act, float *act_min,
                          float *act_max) {
  switch (act) {
    case MAK_ACT_NONE: *act_min = -FLT_MAX; *act_max = FLT_MAX; return MA_OK;
    case MAK_ACT_RELU: *act_min = 0.0f; *act_max = FLT_MAX; return MA_OK;
    case MAK_ACT_RELU6: *act_min = 0.0f; *act_max = 6.0f; return MA_OK;
    case MAK_ACT_RELU_N1_TO_1: *act_min = -1.0f; *act_max = 1.0f; return MA_OK;
    default:
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: fused activation %d not supported", op,
                     (int)act);
  }
}

/* ---------------------------------------------------------------- node checks */

const ma_tensor *mak_input(const ma_node *node, int32_t i) {
  if (i < 0 || i >= node->n_inputs || node->inputs == NULL) return NULL;
  return node->inputs[i];
}

const char *mak_type_name(uint8_t type) {
  static const char *const names[] = {
      "FLOAT32", "FLOAT16",    "INT32",  "UINT8",   "INT64",   "STRING", "BOOL",
      "INT16",   "COMPLEX64",  "INT8",   "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE",
      "VARIANT", "UINT32",     "UINT16", "INT4"};
  return type < sizeof names / sizeof names[0] ? names[type] : "UNKNOWN";
}

/* Zero points must be values of the tensor's type: the kernels' int32 products rely on it. */
static bool zero_points_fit(const ma_tensor *t) {
  int64_t lo, hi;
  switch (t->type) {
    case MA_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case MA_UINT8: lo = 0; hi = UINT8_MAX; break;
    case MA_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    default: return true;
  }
  for (int32_t i = 0; t->quant.zero_point != NULL && i < t->quant.count; ++i) {
    int64_t z;
    memcpy(&z, (const uint8_t *)t->quant.zero_point + 8 * (size_t)i, sizeof z);
    if (z < lo || z > hi) return false;
  }
  return true;
}

ma_status mak_check_node(struct ma_context *ctx, const ma_node *node, const char *op,
                         int32_t min_in, int32_t max_in, int32_t n_required, int32_t n_out) {
  if (node->n_inputs < min_in || node->n_inputs > max_in)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d inputs, expected %d to %d", op,
                   (int)node->n_inputs, (int)min_in, (int)max_in);
  if (node->n_outputs != n_out)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d outputs, expected %d", op, (int)node->n_outputs,
                   (int)n_out);
  for (int32_t i = 0; i < n_required; ++i) {
    const ma_tensor *t = mak_input(node, i);
    if (t == NULL || (t->data == NULL && t->bytes > 0))
      return ma_fail(ctx, MA_ERR_MODEL, "%s: input %d is missing", op, (int)i);
  }
  for (int32_t i = 0; i < n_out; ++i) {
    const ma_tensor *t = node->outputs[i];
    if (t == NULL || (t->data == NULL && t->bytes > 0))
      return ma_fail(ctx, MA_ERR_MODEL, "%s: output %d is missing", op, (int)i);
  }
  /* Every present tensor must hold as many bytes as its shape says. */
  for (int32_t i = 0; i < node->n_inputs + n_out; ++i) {
    const ma_tensor *t = i < node->n_inputs ? node->inputs[i] : node->outputs[i - node->n_inputs];
    if (t == NULL) continue;
    const size_t esize = ma_type_size(t->type);
    const int32_t n = ma_num_elements(t);
    if (t->ndims < 0 || t->ndims > MA_MAX_DIMS || n < 0 ||
        (esize > 0 && t->bytes < (size_t)n * esize))
      return ma_fail(ctx, MA_ERR_MODEL, "%s: tensor %d has %lu bytes for its shape", op,
                     (int)t->index, (unsigned long)t->bytes);
    if (!zero_points_fit(t))
      return ma_fail(ctx, MA_ERR_MODEL, "%s: tensor %d has a zero point outside %s", op,
                     (int)t->index, mak_type_name(t->type));
  }
  return MA_OK;
}

ma_status mak_check_input_type(struct ma_context *ctx, const char *op, const ma_tensor *t,
                               uint32_t types, const char *list) {
  if (t->type < 32 && (types & MAK_TYPE_BIT(t->type))) return MA_OK;
  return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s is not supported (%s)", op,
                 mak_type_name(t->type), list);
}

ma_status mak_check_type(struct ma_context *ctx, const char *op, const char *what,
                         const ma_tensor *t, uint8_t type) {
  if (t->type == type) return MA_OK;
  return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: %s is %s, expected %s", op, what,
                 mak_type_name(t->type), mak_type_name(type));
}

ma_status mak_check_weighted_types(struct ma_context *ctx, const char *op, const ma_tensor *in,
                                   const ma_tensor *filter, const ma_tensor *bias,
                                   const ma_tensor *out, uint8_t bias16_a, uint8_t bias16_b) {
  ma_status st;
  if (in->type == MA_FLOAT32 && filter->type != MA_FLOAT32)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: hybrid models (float activations, %s weights) are not supported", op,
                   mak_type_name(filter->type));
  const bool int16 = bias16_a != MAK_NO_INT16;
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) |
                         (int16 ? MAK_TYPE_BIT(MA_INT16) : 0);
  if ((st = mak_check_input_type(ctx, op, in, types,
                                 int16 ? "float32, int8, int16" : "float32, int8")) != MA_OK ||
      (st = mak_check_type(ctx, op, "filter", filter,
                           in->type == MA_FLOAT32 ? MA_FLOAT32 : MA_INT8)) != MA_OK ||
      (st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK || bias == NULL)
    return st;
  if (in->type == MA_INT16)
    return bias->type == bias16_b ? MA_OK : mak_check_type(ctx, op, "bias", bias, bias16_a);
  return mak_check_type(ctx, op, "bias", bias, in->type == MA_FLOAT32 ? MA_FLOAT32 : MA_INT32);
}

ma_status mak_padding(struct ma_context *ctx, const char *op, int32_t padding, int32_t in_size,
                      int32_t filter, int32_t stride, int32_t dilation, int32_t *out_size,
                      int16_t *pad) {
  if (stride <= 0 || dilation <= 0 || filter <= 0 || in_size <= 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: bad stride %d, dilation %d, filter size %d or input size %d",
                   op, (int)stride, (int)dilation, (int)filter, (int)in_size);
  /* The op data keeps stride, dilation and padding in 16 bits (the tail is part of the
   * product); sizes are int32 as TFLM's. */
  if (stride > INT16_MAX || dilation > INT16_MAX || filter > INT16_MAX)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: stride %d, dilation %d or filter size %d above this runtime's limit of 32767",
                   op, (int)stride, (int)dilation, (int)filter);
  const int64_t eff64 = (int64_t)(filter - 1) * dilation + 1;
  if (eff64 > INT32_MAX - stride)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: dilated filter of %lld taps is too large", op,
                   (long long)eff64);
  const int32_t eff = (int32_t)eff64;
  int32_t out;
  if (padding == MAK_PAD_SAME) out = (in_size + stride - 1) / stride;
  else if (padding == MAK_PAD_VALID) out = (in_size + stride - eff) / stride;
  else return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: padding type %d", op, (int)padding);
  int64_t total = (int64_t)(out - 1) * stride + eff - in_size;
  if (total < 0) total = 0;
  if (total / 2 > INT16_MAX)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: padding %lld above this runtime's limit of 32767",
                   op, (long long)(total / 2));
  *pad = (int16_t)(total / 2);
  *out_size = out;
  return MA_OK;
}

ma_status mak_conv_geometry(struct ma_context *ctx, const char *op, int32_t padding,
                            int32_t in_size, int32_t filter, int32_t stride, int32_t dilation,
                            int32_t out_expected, int16_t *pad) {
  int32_t out;
  const ma_status st = mak_padding(ctx, op, padding, in_size, filter, stride, dilation, &out, pad);
  if (st != MA_OK) return st;
  if (out != out_expected)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output size %d, geometry gives %d", op,
                   (int)out_expected, (int)out);
  return MA_OK;
}

void mak_tap_range(int32_t origin, int32_t dil, int32_t taps, int32_t size, int32_t *first,
                   int32_t *end) {
  /* first: smallest k with origin + dil * k >= 0; end: one past the largest k with
   * origin + dil * k < size (dil > 0, checked at prepare). */
  int32_t f, e;
  if (FAST_DIV_CALL && dil == 1) { /* divisions are library calls: 4 per window */
    f = origin >= 0 ? 0 : -origin;
    e = origin >= size ? 0 : size - origin;
  } else {
    f = origin >= 0 ? 0 : (-origin + dil - 1) / dil;
    e = origin >= size ? 0 : (size - 1 - origin) / dil + 1;
  }
  if (f > taps) f = taps;
  if (e > taps) e = taps;
  if (e < f) e = f;
  *first = f;
  *end = e;
}

mak_conv_data *mak_conv_data_alloc(struct ma_context *ctx, int32_t n_mult) {
  mak_conv_data *d = ma_persistent(ctx, sizeof(mak_conv_data) + (size_t)n_mult * 5);
  if (d != NULL) memset(d, 0, sizeof(mak_conv_data) + (size_t)n_mult * 5);
  if (d != NULL) d->n_mult = n_mult;
  return d;
}

ma_status mak_conv_quantize(struct ma_context *ctx, const char *op, mak_conv_data *d,
                            const ma_tensor *in, const ma_tensor *filter, const ma_tensor *out,
                            int32_t act, int32_t channels) {
  const float in_scale = mak_scale(in, 0), out_scale = mak_scale(out, 0);
  if (!(in_scale > 0.0f) || !(out_scale > 0.0f) || !mak_is_quantized(filter))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: quantized tensors need quantization scales", op);
  if (filter->quant.count != 1 && filter->quant.count != channels)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d filter scales for %d channels", op,
                   (int)filter->quant.count, (int)channels);
  d->input_offset = -mak_zero_point(in, 0);
  d->output_offset = mak_zero_point(out, 0);
  for (int32_t c = 0; c < d->n_mult; ++c) {
    /* TFLM: double(input_scale) * double(filter_scale) / double(output_scale). */
    const double m = (double)in_scale * (double)mak_scale(filter, c) / (double)out_scale;
    int shift;
    mak_quantize_multiplier(m, &d->mult[c], &shift);
    mak_conv_shifts(d)[c] = (int8_t)shift;
  }
  return mak_act_range_q(ctx, op, act, out, &d->act_min, &d->act_max);
}

void mak_window_start(const mak_window_geom *g, mak_window *w) {
  memset(w, 0, sizeof *w);
  w->ox = -1;
  if (g->out_h <= 0 || g->out_w <= 0) w->b = g->batches; /* nothing to walk */
}

bool mak_window_next(const mak_window_geom *g, mak_window *w) {
  if (w->b >= g->batches) return false;
  if (++w->ox >= g->out_w) {
    w->ox = 0;
    if (++w->oy >= g->out_h) {
      w->oy = 0;
      if (++w->b >= g->batches) return false;
    }
  }
  w->iy0 = w->oy * g->stride_h - g->pad_h;
  w->ix0 = w->ox * g->stride_w - g->pad_w;
  mak_tap_range(w->iy0, g->dil_h, g->kh, g->in_h, &w->fy0, &w->fy1);
  mak_tap_range(w->ix0, g->dil_w, g->kw, g->in_w, &w->fx0, &w->fx1);
  w->pixel = ((size_t)w->b * g->out_h + w->oy) * g->out_w + w->ox;
  return true;
}

/* ---------------------------------------------------------------- broadcasting */

ma_status mak_bcast_init(struct ma_context *ctx, const char *op, const ma_tensor *a,
                         const ma_tensor *b, const ma_tensor *out, mak_bcast *bc) {
  const int32_t n = out->ndims;
  if (a->ndims > n || b->ndims > n)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output rank %d below an input's", op, (int)n);
  bc->n = n;
  int32_t sa = 1, sb = 1;
  for (int32_t d = n - 1; d >= 0; --d) {
    const int32_t ia = d - (n - a->ndims), ib = d - (n - b->ndims);
    const int32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    const int32_t od = out->dims[d];
    if ((da != od && da != 1) || (db != od && db != 1) || (od != da && od != db))
      return ma_fail(ctx, MA_ERR_MODEL, "%s: shapes do not broadcast at dim %d (%d, %d -> %d)",
                     op, (int)d, (int)da, (int)db, (int)od);
    bc->dims[d] = od;
    bc->stride_a[d] = da == 1 ? 0 : sa;
    bc->stride_b[d] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  return MA_OK;
}

void mak_bcast_start(mak_bcast_iter *it) { memset(it, 0, sizeof *it); }

void mak_bcast_next(const mak_bcast *bc, mak_bcast_iter *it) {
  for (int32_t d = bc->n - 1; d >= 0; --d) {
    it->off_a += bc->stride_a[d];
    it->off_b += bc->stride_b[d];
    if (++it->idx[d] < bc->dims[d]) return;
    it->off_a -= bc->stride_a[d] * bc->dims[d];
    it->off_b -= bc->stride_b[d] * bc->dims[d];
    it->idx[d] = 0;
  }
}

int32_t mak_dims_product(const ma_tensor *t, int32_t from, int32_t to) {
  int32_t p = 1;
  for (int32_t d = from; d < to && d < t->ndims; ++d) p *= t->dims[d];
  return p;
}

/* ---------------------------------------------------------------- data-movement helpers */

int64_t mak_index_at(const ma_tensor *t, int32_t i) {
  if (t->type == MA_INT64) return mak_load_i64(t->data, i);
  return ((const int32_t *)t->data)[i];
}

ma_status mak_check_index_type(struct ma_context *ctx, const char *op, const char *what,
                               const ma_tensor *t) {
  if (t->type == MA_INT32 || t->type == MA_INT64) return MA_OK;
  return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: %s must be INT32 or INT64, not %s", op, what,
                 mak_type_name(t->type));
}

ma_status mak_check_const(struct ma_context *ctx, const char *op, const char *what,
                          const ma_tensor *t) {
  if (t->is_const) return MA_OK;
  return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: a non-constant %s is not supported (as TFLM)",
                 op, what);
}

ma_status mak_check_same_shape(struct ma_context *ctx, const char *op, const ma_tensor *a,
                               const ma_tensor *b) {
  bool same = a->ndims == b->ndims;
  for (int32_t d = 0; same && d < a->ndims; ++d) same = a->dims[d] == b->dims[d];
  if (same) return MA_OK;
  return ma_fail(ctx, MA_ERR_MODEL, "%s: tensors %d and %d differ in shape", op, (int)a->index,
                 (int)b->index);
}

/* ---------------------------------------------------------------- data movement */

void mak_move(void *dst, const void *src, size_t n) {
  uint8_t *d = dst;
  const uint8_t *s = src;
  const uintptr_t ud = (uintptr_t)dst, us = (uintptr_t)src;
  if (ud == us || n == 0) return;
  if (n >= 64 && ((ud | us) & 3u) == 0) { /* newlib's word path pays for its set-up */
    memmove(dst, src, n);
    return;
  }
  if (ud < us || ud - us >= n) { /* forward: each word is read before a write reaches it */
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      uint32_t w;
      memcpy(&w, s + i, 4);
      memcpy(d + i, &w, 4);
    }
    for (; i < n; ++i) d[i] = s[i];
    return;
  }
  size_t i = n; /* dst inside (src, src + n): backward */
  for (; i >= 4; i -= 4) {
    uint32_t w;
    memcpy(&w, s + i - 4, 4);
    memcpy(d + i - 4, &w, 4);
  }
  while (i > 0) {
    --i;
    d[i] = s[i];
  }
}
