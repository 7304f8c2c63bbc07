/* Shared helpers of the kernels: TFLite's integer rounding rules, gemmlowp fixed-point
 * functions, activation ranges, option/tensor checks and broadcasting.
 *
 * The integer arithmetic reproduces TFLM's reference kernels bit for bit (double rounding:
 * SaturatingRoundingDoublingHighMul then RoundingDivideByPOT), so that int8 outputs match
 * the real TFLM interpreter exactly.
 */
#ifndef MA_KERNEL_UTIL_H
#define MA_KERNEL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ma_kernel.h"

/* Schema enums (ActivationFunctionType, Padding). */
enum { MAK_ACT_NONE = 0, MAK_ACT_RELU = 1, MAK_ACT_RELU_N1_TO_1 = 2, MAK_ACT_RELU6 = 3 };
enum { MAK_PAD_SAME = 0, MAK_PAD_VALID = 1 };
/* Depthwise convolution: output channels accumulated together on the stack, so that the
 * innermost loop walks filter and input contiguously (conv.c); its overlap rule depends on it
 * (overlap.c, and DW_BLOCK in host/planning/kernels/microarena.py). */
enum { MAK_DW_BLOCK = 32 };

/* The portable form of mak_dhm_2a (below), which fast/fast_fixed_steps.h picks or replaces by
 * an architecture's. */
static inline int32_t mak_dhm_2a_c(int32_t a2, int32_t b) {
  return (int32_t)(((int64_t)a2 * (int64_t)b + (INT64_C(1) << 31)) >> 32);
}
#include "fast/fast_fixed_steps.h" /* MAK_CLAMP_SAT, MAK_DHM_2A */

/* ---- integer rounding (tflite/kernels/internal/common.h semantics) ---- */
int32_t mak_srdhm(int32_t a, int32_t b);                     /* SaturatingRoundingDoublingHighMul */
int32_t mak_rdbpot(int32_t x, int exponent);                 /* RoundingDivideByPOT */
int32_t mak_mbqm(int32_t x, int32_t multiplier, int shift);  /* MultiplyByQuantizedMultiplier */
/* The same three inlined, for loops that requantize per value (the functions above call them). */
static inline int32_t mak_srdhm_i(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX; /* the only product that overflows */
  /* TFLite nudges the product by +2^30 (by 1 - 2^30 when negative) and divides by 2^31,
   * truncating toward zero: for every product that is floor((ab + 2^30) / 2^31), one
   * arithmetic shift. */
  return (int32_t)(((int64_t)a * (int64_t)b + (INT64_C(1) << 30)) >> 31);
}
static inline int32_t mak_rdbpot_i(int32_t x, int exponent) {
  if (exponent <= 0) return x;
  if (exponent > 31) exponent = 31;
  const int32_t mask = (int32_t)((INT64_C(1) << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  /* >> of a negative value is an arithmetic shift on every compiler we target. */
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}
static inline int32_t mak_mbqm_i(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  /* TFLite computes x * (1 << left) in int32; wrap instead of overflowing (UB). */
  return mak_rdbpot_i(mak_srdhm_i((int32_t)((uint32_t)x << left), multiplier), right);
}
int32_t mak_shl_wrap(int32_t x, int shift);                  /* x * 2^shift, wrapping */
/* The int64 MultiplyByQuantizedMultiplier of int16 kernels (multiplier rounded to 16 bits). */
int32_t mak_mbqm64(int64_t x, int32_t multiplier, int shift);
int16_t mak_q15_multiplier(int32_t m); /* a Q0.31 multiplier rounded to Q0.15 */
void mak_quantize_multiplier(double m, int32_t *multiplier, int *shift);
int32_t mak_input_radius(int integer_bits, int left_shift);  /* CalculateInputRadius (31 bits) */

/* ---- gemmlowp fixed point on int32 raw values ---- */
int32_t mak_exp_on_negative_values(int32_t a, int integer_bits); /* result has 0 integer bits */
int32_t mak_one_over_one_plus_x(int32_t a);                      /* a, result: 0 integer bits */
int32_t mak_logistic_fp(int32_t a, int integer_bits);            /* result: 0 integer bits */
int32_t mak_tanh_fp(int32_t a, int integer_bits);                /* result: 0 integer bits */
int32_t mak_one_minus_x_over_one_plus_x(int32_t a);              /* a, result: 0 integer bits */
int32_t mak_sat_shl(int32_t x, int e); /* SaturatingRoundingMultiplyByPOT, e > 0 */

/* The same inlined (kernel_util.c's functions call them), for the loops that evaluate them per
 * value with integer_bits a constant. Every step is gemmlowp's value; where an operand's range
 * is known (below) it takes a shorter exact form:
 * - SaturatingRoundingDoublingHighMul(a, b) = floor((ab + 2^30) / 2^31), which for a2 = 2a
 *   (no overflow) is floor((a2 b + 2^31) / 2^32): one SMMULR on the DSP (mak_dhm_2a). Its one
 *   saturating case, INT32_MIN^2, needs both operands INT32_MIN: never where one operand is a
 *   positive constant or a doubled value (mak_dhm);
 * - exp_on_negative_values' interval argument x = (a mod 1/4 - 1/4) 2^integer_bits + 1/8 lies
 *   in [-2^28, 2^28) for every integer_bits (the shift cannot saturate), so x^2 <= 2^25,
 *   |x^3| <= 2^22, x^4 <= 2^19: each product there has an operand that doubles in int32, and
 *   x^4 >= 0 and RoundingDivideByPOT of |y| < 2^30 is (y + 2^(e-1) - (y < 0)) >> e;
 * - the barrel shifter's multipliers exp(-2^k) for k >= 0 are below 2^30 (double them);
 * - RoundingHalfSum(e, INT32_MAX) is (e + 2^31) / 2 as uint32 for every e but INT32_MIN (-1). */
static inline int32_t mak_dhm(int32_t a, int32_t b) { /* a or b != INT32_MIN */
  return (int32_t)(((int64_t)a * (int64_t)b + (INT64_C(1) << 30)) >> 31);
}
static inline int32_t mak_dhm_2a(int32_t a2, int32_t b) { /* srdhm(a2 / 2, b), a2 even */
  return MAK_DHM_2A(a2, b);
}
static inline int32_t mak_wrap_add_i(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}
static inline int32_t mak_sat_shl_i(int32_t x, int e) { /* mak_sat_shl */
  const int32_t threshold = (int32_t)((INT64_C(1) << (31 - e)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return (int32_t)((uint32_t)x << e);
}
static inline int32_t mak_exp_on_negative_values_i(int32_t a, int integer_bits) {
  const int frac_bits = 31 - integer_bits;
  const int32_t quarter = INT32_C(1) << (frac_bits - 2);
  const int32_t mod_minus_quarter = (a & (quarter - 1)) - quarter; /* [-quarter, 0) */
  /* exp(x - 1/8) for x in [-1/8, 1/8): Taylor series around -1/8 */
  const int32_t exp_minus_one_eighth = 1895147668, one_third = 715827883;
  const int32_t x = mod_minus_quarter * (INT32_C(1) << integer_bits) + (INT32_C(1) << 28);
  const int32_t x2 = mak_dhm_2a(2 * x, x);
  const int32_t x3 = mak_dhm_2a(2 * x2, x);
  const int32_t x4 = mak_dhm_2a(2 * x2, x2);
  const int32_t t = mak_dhm_2a(2 * (((x4 + 2) >> 2) + x3), one_third);
  const int32_t y = t + x2;
  const int32_t poly = (y + 1 + (y >> 31)) >> 1;
  int32_t result = mak_wrap_add_i(exp_minus_one_eighth,
                                  mak_dhm_2a(2 * (x + poly), exp_minus_one_eighth));
  /* times exp(-2^k) for each bit k of the remainder (k = -2..4, below integer_bits) */
  const uint32_t remainder = (uint32_t)mod_minus_quarter - (uint32_t)a;
  if (remainder & (UINT32_C(1) << (frac_bits - 2))) result = mak_dhm(result, 1672461947);
  if (integer_bits > -1 && (remainder & (UINT32_C(1) << (frac_bits - 1))))
    result = mak_dhm(result, 1302514674);
  static const int32_t twice[5] = {2 * 790015084, 2 * 290630308, 2 * 39332535, 2 * 720401,
                                   2 * 242};
  for (int k = 0; k <= 4 && k < integer_bits; ++k)
    if (remainder & (UINT32_C(1) << (frac_bits + k))) result = mak_dhm_2a(twice[k], result);
  if (integer_bits > 5 && a < -(INT32_C(1) << (36 - integer_bits))) result = 0;
  return a == 0 ? INT32_MAX : result;
}
/* Newton-Raphson for 1 / (1 + a) on half the denominator, in Q2.29. */
static inline int32_t mak_reciprocal_q2_i(int32_t a) {
  const int32_t half_den =
      a == INT32_MIN ? -1 : (int32_t)(((uint32_t)a ^ UINT32_C(0x80000000)) >> 1);
  int32_t x = mak_wrap_add_i(1515870810, mak_dhm_2a(2 * -1010580540, half_den)); /* 48/17, -32/17 */
  for (int i = 0; i < 3; ++i) {
    const int32_t one_minus =
        (int32_t)((UINT32_C(1) << 29) - (uint32_t)mak_dhm(half_den, x)); /* half_den >= -1 */
    x = mak_wrap_add_i(x, mak_sat_shl_i(mak_srdhm_i(x, one_minus), 2));
  }
  return x;
}
static inline int32_t mak_one_over_one_plus_x_i(int32_t a) {
  return mak_sat_shl_i(mak_reciprocal_q2_i(a), 1);
}
static inline int32_t mak_one_minus_x_over_one_plus_x_i(int32_t a) {
  /* (1 - a) / (1 + a) = 2 / (1 + a) - 1, from Q2.29 back to Q0.31. */
  return mak_sat_shl_i((int32_t)((uint32_t)mak_reciprocal_q2_i(a) - (UINT32_C(1) << 29)), 2);
}
static inline int32_t mak_logistic_fp_i(int32_t a, int integer_bits) {
  if (a == 0) return INT32_C(1) << 30;
  const int32_t neg_abs = a > 0 ? (int32_t)(0u - (uint32_t)a) : a;
  const int32_t r = mak_one_over_one_plus_x_i(mak_exp_on_negative_values_i(neg_abs, integer_bits));
  return a > 0 ? r : (int32_t)((uint32_t)INT32_MAX - (uint32_t)r);
}
static inline int32_t mak_tanh_fp_i(int32_t a, int integer_bits) {
  if (a == 0) return 0;
  /* tanh(|a|) = (1 - exp(-2|a|)) / (1 + exp(-2|a|)); -2|a| is the same raw value read with
   * one more integer bit (gemmlowp's ExactMulByPot<1>). */
  const int32_t neg_abs = a < 0 ? a : (int32_t)(0u - (uint32_t)a);
  const int32_t t =
      mak_one_minus_x_over_one_plus_x_i(mak_exp_on_negative_values_i(neg_abs, integer_bits + 1));
  return a < 0 ? (int32_t)(0u - (uint32_t)t) : t;
}

/* log(a) for a >= 1 with in_bits integer bits; result with out_bits (log_x_for_x_greater_than_or_equal_to_1). */
int32_t mak_log_x_ge_1(int32_t a, int in_bits, int out_bits);
/* 1 / sqrt(x) for x >= 0 as a Q0.31 multiplier and a left shift (x <= 1 gives INT32_MAX, 0). */
void mak_inv_sqrt(int32_t x, int32_t *mult, int *shift);

/* sigmoid(i / 24) in Q0.16, the table TFLM's int16 sigmoid/tanh interpolate (measured from
 * TFLM by tools/measure_sigmoid_table.py into sigmoid_table.c). */
extern const uint16_t mak_sigmoid_table[256];
/* int16 SOFTMAX's tables of exp(x), x in [-10, 0], and 1 / (1 + x), x in [0, 1] (softmax_lut.c,
 * computed as TFLM does by tools/gen_softmax_lut.py), read by mak_lut_lookup16. */
enum { MAK_SOFTMAX_LUT_SIZE = 513 };
extern const int16_t mak_softmax_exp_lut[MAK_SOFTMAX_LUT_SIZE];
extern const int16_t mak_softmax_recip_lut[MAK_SOFTMAX_LUT_SIZE];

/* ---- quantization parameters of a tensor (read safely from the model) ---- */
float mak_scale(const ma_tensor *t, int32_t i);      /* 0 when not quantized */
int32_t mak_zero_point(const ma_tensor *t, int32_t i);
bool mak_is_quantized(const ma_tensor *t);

/* ---- activation ranges ---- */
ma_status mak_act_range_q(struct ma_context *ctx, const char *op, int32_t act,
                          const ma_tensor *out, int32_t *act_min, int32_t *act_max);
ma_status mak_act_range_f(struct ma_context *ctx, const char *op, int32_t act, float *act_min,
                          float *act_max);

/* ---- node checks ---- */
/* Checks input/output counts and that the first n_required inputs and all outputs exist. */
ma_status mak_check_node(struct ma_context *ctx, const ma_node *node, const char *op,
                         int32_t min_in, int32_t max_in, int32_t n_required, int32_t n_out);
ma_status mak_check_type(struct ma_context *ctx, const char *op, const char *what,
                         const ma_tensor *t, uint8_t type);
const char *mak_type_name(uint8_t type);
/* MA_ERR_UNSUPPORTED ("OP: input type T is not supported (list)") unless t's type is in
 * `types`, a bit set of ma_type (MAK_TYPE_BIT). */
#define MAK_TYPE_BIT(t) (UINT32_C(1) << (t))
ma_status mak_check_input_type(struct ma_context *ctx, const char *op, const ma_tensor *t,
                               uint32_t types, const char *list);
/* Types of a node with weights (convolutions, FULLY_CONNECTED): float32 with float32 weights
 * and bias; int8 with int8 weights and int32 bias; int16 (unless bias16_a is MAK_NO_INT16)
 * with int8 weights and a bias of type bias16_a or bias16_b. */
enum { MAK_NO_INT16 = 0xFF };
ma_status mak_check_weighted_types(struct ma_context *ctx, const char *op, const ma_tensor *in,
                                   const ma_tensor *filter, const ma_tensor *bias,
                                   const ma_tensor *out, uint8_t bias16_a, uint8_t bias16_b);
/* The i-th input, or NULL when absent or out of range. */
const ma_tensor *mak_input(const ma_node *node, int32_t i);

/* TFLite's ComputePaddingHeightWidth for one dimension: the output size the padding type
 * gives and the leading padding. Fails on a bad stride, dilation, size or padding type. */
ma_status mak_padding(struct ma_context *ctx, const char *op, int32_t padding, int32_t in_size,
                      int32_t filter, int32_t stride, int32_t dilation, int32_t *out_size,
                      int16_t *pad);
/* mak_padding, and the output size must be out_expected. */
ma_status mak_conv_geometry(struct ma_context *ctx, const char *op, int32_t padding,
                            int32_t in_size, int32_t filter, int32_t stride, int32_t dilation,
                            int32_t out_expected, int16_t *pad);

/* Window taps [*first, *end) of a filter at origin, dilation dil and size taps, whose
 * coordinate origin + dil * k lies in [0, size): clipping once per output pixel keeps bounds
 * checks out of the inner loops of convolutions and pools. */
void mak_tap_range(int32_t origin, int32_t dil, int32_t taps, int32_t size, int32_t *first,
                   int32_t *end);

/* ---- op data of convolution-like kernels (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV) ---- */
typedef struct {
  int16_t stride_w, stride_h, dil_w, dil_h, pad_w, pad_h;
  int32_t input_offset, output_offset, act_min, act_max;
  float f_min, f_max;
  int32_t n_mult;  /* 0 = float, 1 = per tensor, else one per output channel */
  int32_t mult[]; /* n_mult multipliers, then n_mult int8 shifts: no pointers, so the
                     op data has the same size on every ABI (the host predicts it) */
} mak_conv_data;

static inline int8_t *mak_conv_shifts(const mak_conv_data *d) {
  return (int8_t *)(uintptr_t)(d->mult + d->n_mult);
}
/* Zeroed op data with room for n_mult multipliers, from ma_persistent (NULL: arena full). */
mak_conv_data *mak_conv_data_alloc(struct ma_context *ctx, int32_t n_mult);
/* The integer part of d: offsets, per-channel multipliers (TFLM's double products of
 * input, filter and output scales) and the activation range of `act` for out. */
ma_status mak_conv_quantize(struct ma_context *ctx, const char *op, mak_conv_data *d,
                            const ma_tensor *in, const ma_tensor *filter, const ma_tensor *out,
                            int32_t act, int32_t channels);

/* ---- broadcasting over up to MA_MAX_DIMS dimensions ---- */
typedef struct {
  int32_t n;                      /* dims used (right aligned) */
  int32_t dims[MA_MAX_DIMS];      /* output dims */
  int32_t stride_a[MA_MAX_DIMS];  /* element strides of a, 0 where broadcast */
  int32_t stride_b[MA_MAX_DIMS];
} mak_bcast;

/* Fills bc for out = f(a, b); fails unless the shapes broadcast to out's shape. */
ma_status mak_bcast_init(struct ma_context *ctx, const char *op, const ma_tensor *a,
                         const ma_tensor *b, const ma_tensor *out, mak_bcast *bc);

/* Walks the output in order; call mak_bcast_next after each element. */
typedef struct {
  int32_t idx[MA_MAX_DIMS];
  int32_t off_a, off_b;
} mak_bcast_iter;
void mak_bcast_start(mak_bcast_iter *it);
void mak_bcast_next(const mak_bcast *bc, mak_bcast_iter *it);

/* v clamped to [lo, hi]; to the int8 or int16 range (constant bounds) one SSAT where the core
 * has it (MAK_CLAMP_SAT: fast/v7m/fast_v7m_fixed.h). */
static inline int32_t mak_clamp(int32_t v, int32_t lo, int32_t hi) {
  MAK_CLAMP_SAT(v, lo, hi);
  return v < lo ? lo : (v > hi ? hi : v);
}
/* a + b saturated to int32: TFLM adds offsets to requantized values in plain int32, which a
 * hostile model can overflow (UB); saturating gives the same result whenever TFLM's is defined. */
static inline int32_t mak_add_sat(int32_t a, int32_t b) {
  const int64_t s = (int64_t)a + b;
  return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}
/* int32 arithmetic that wraps (as TFLM's int32 kernels do in practice) instead of UB. */
static inline int32_t mak_wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}
static inline int32_t mak_wrap_sub(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a - (uint32_t)b);
}
static inline int32_t mak_wrap_mul(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a * (uint32_t)b);
}
static inline float mak_clampf(float v, float lo, float hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/* y[i] = EXPR for i < n, with x = IN's data as TIN and y = OUT's data as TOUT: one typed loop
 * with the element expression inlined (no per-element dispatch). */
#define MAK_MAP(TIN, TOUT, IN, OUT, N, EXPR)        \
  do {                                              \
    const TIN *x = (IN)->data;                      \
    TOUT *y = (OUT)->data;                          \
    for (int32_t i = 0; i < (N); ++i) y[i] = EXPR;  \
  } while (0)

/* memmove (any overlap), a word at a time where newlib-nano's copies byte by byte (source and
 * destination not both word-aligned): for the kernels that move rows and chunks. */
void mak_move(void *dst, const void *src, size_t n);

/* ---- sliding windows of convolutions and pools (NHWC) ---- */
typedef struct {
  int32_t batches, in_h, in_w, out_h, out_w, kh, kw;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
} mak_window_geom;

/* One output pixel: its input origin (tap 0, 0) and the taps [fy0, fy1) x [fx0, fx1) that
 * fall inside the input; pixel = flat index of (b, oy, ox) in the output. */
typedef struct {
  int32_t b, oy, ox, iy0, ix0, fy0, fy1, fx0, fx1;
  size_t pixel;
} mak_window;

/* Walks the output pixels in order: mak_window_start, then while (mak_window_next(...)). */
void mak_window_start(const mak_window_geom *g, mak_window *w);
bool mak_window_next(const mak_window_geom *g, mak_window *w);

/* The requantization epilogue of convolution-like kernels: acc * multiplier (TFLite's
 * MultiplyByQuantizedMultiplier), plus the output zero point, clamped to the activation range. */
static inline int32_t mak_requantize(int32_t acc, int32_t mult, int shift, int32_t out_offset,
                                     int32_t act_min, int32_t act_max) {
  return mak_clamp(mak_add_sat(mak_mbqm(acc, mult, shift), out_offset), act_min, act_max);
}

/* The 16x8 (int16 activations, int8 weights) epilogue of CONV_2D and FULLY_CONNECTED: TFLM
 * accumulates in int64 and uses the 64-bit MultiplyByQuantizedMultiplier, except with an
 * int32 bias (or none, and quantized_bias_type INT32 in the options), where the sum is int32
 * (wrapping here) and the 32-bit one is used. acc is the exact sum with the bias. */
static inline int32_t mak_requantize16(int64_t acc, bool acc64, int32_t mult, int shift,
                                       int32_t out_offset, int32_t act_min, int32_t act_max) {
  const int32_t scaled = acc64 ? mak_mbqm64(acc, mult, shift)
                               : mak_mbqm((int32_t)(uint32_t)(uint64_t)acc, mult, shift);
  return mak_clamp(mak_add_sat(scaled, out_offset), act_min, act_max);
}
/* Element i of int64 data that may be only 4-byte aligned (constants in the file: see
 * ma_check_const_alignment); memcpy compiles to plain loads where unaligned ones are legal. */
static inline int64_t mak_load_i64(const void *data, int32_t i) {
  int64_t v;
  memcpy(&v, (const uint8_t *)data + (size_t)i * sizeof v, sizeof v);
  return v;
}
/* Bias i of a 16x8 node (int64 or int32 bias; 0 without one). */
static inline int64_t mak_bias16(const ma_tensor *bias, int32_t i) {
  if (bias == NULL) return 0;
  return bias->type == MA_INT64 ? mak_load_i64(bias->data, i) : ((const int32_t *)bias->data)[i];
}
/* Whether a 16x8 node accumulates in int64 (see mak_requantize16); bias_type_option is the
 * options' quantized_bias_type, which decides when there is no bias. */
static inline bool mak_acc64(const ma_tensor *bias, int32_t bias_type_option) {
  return bias != NULL ? bias->type == MA_INT64 : bias_type_option != MA_INT32;
}

/* Product of dims [from, to). */
int32_t mak_dims_product(const ma_tensor *t, int32_t from, int32_t to);

/* ---- index tensors and element copies of data-movement kernels ---- */
/* Element i of an int32 or int64 tensor. */
int64_t mak_index_at(const ma_tensor *t, int32_t i);
/* Fails with MA_ERR_UNSUPPORTED unless t is INT32 or INT64. */
ma_status mak_check_index_type(struct ma_context *ctx, const char *op, const char *what,
                               const ma_tensor *t);
/* Fails with MA_ERR_UNSUPPORTED unless t is constant (TFLM reads it at prepare). */
ma_status mak_check_const(struct ma_context *ctx, const char *op, const char *what,
                          const ma_tensor *t);
/* Fails with MA_ERR_MODEL unless a and b have the same shape. */
ma_status mak_check_same_shape(struct ma_context *ctx, const char *op, const ma_tensor *a,
                               const ma_tensor *b);
static inline void mak_copy_elem(uint8_t *dst, const uint8_t *src, size_t esize) {
  switch (esize) { /* constant sizes let the compiler inline the copy */
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, esize); break;
  }
}

#endif
