/* Helium int8 LOGISTIC and TANH (see fast_mve_activations.h): kernel_util.c's gemmlowp fixed-point
 * functions, four int32 lanes at a time, every step its exact vector form:
 *   - SaturatingRoundingDoublingHighMul is VQRDMULH (saturating the one overflowing product,
 *     INT32_MIN * INT32_MIN, to INT32_MAX as gemmlowp does); fixed-point + and - wrap (VADD);
 *   - RoundingDivideByPOT by e >= 1 is VRSHL after subtracting 1 from negative values
 *     (fast_mve_s8.c's proof, INT32_MIN included, with VQADD);
 *   - SaturatingRoundingMultiplyByPOT with a positive exponent e is VQSHL: both saturate
 *     exactly when x 2^e leaves int32;
 *   - RoundingHalfSum(a, INT32_MAX) is VRHADD, floor((a + b + 1) / 2), for a >= 0 (the
 *     reciprocals only see exponentials, which are >= 0): gemmlowp's (sum + 1) / 2 there;
 *   - gemmlowp's conditional multiplications by exp(-2^k) select lane by lane (VPSEL). */
#include "fast/mve/fast_mve_activations.h"

#if FAST_MVE
#include <arm_mve.h>

#include "fast/mve/fast_mve_core.h"

#define INLINE static inline __attribute__((always_inline))

INLINE int32x4_t rdbpot_n(int32x4_t v, int32_t e) { /* e >= 1 */
  return vrshlq_n_s32(vqaddq_s32(v, vshrq_n_s32(v, 31)), -e);
}

/* exp(a) for a in [-1/4, 0): kernel_util.c's exp_quarter_interval. */
INLINE int32x4_t exp_quarter4(int32x4_t a) {
  const int32_t exp_minus_one_eighth = 1895147668, one_third = 715827883;
  const int32x4_t x = vaddq_n_s32(a, INT32_C(1) << 28);
  const int32x4_t x2 = vqrdmulhq_s32(x, x);
  const int32x4_t x3 = vqrdmulhq_s32(x2, x);
  const int32x4_t x4 = vqrdmulhq_s32(x2, x2);
  const int32x4_t poly = rdbpot_n(
      vaddq_s32(vqrdmulhq_n_s32(vaddq_s32(rdbpot_n(x4, 2), x3), one_third), x2), 1);
  return vaddq_n_s32(vqrdmulhq_n_s32(vaddq_s32(x, poly), exp_minus_one_eighth),
                     exp_minus_one_eighth);
}

/* mak_exp_on_negative_values for 4 or 5 integer bits. */
INLINE int32x4_t exp_negative4(int32x4_t a, int integer_bits) {
  static const int32_t multipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                         39332535,   720401,     242};
  const int frac_bits = 31 - integer_bits;
  const int32_t quarter = INT32_C(1) << (frac_bits - 2);
  const int32x4_t mod_minus_quarter = vsubq_n_s32(vandq_s32(a, vdupq_n_s32(quarter - 1)), quarter);
  int32x4_t result = exp_quarter4(vqshlq_r_s32(mod_minus_quarter, integer_bits));
  const int32x4_t remainder = vsubq_s32(mod_minus_quarter, a);
  for (int k = -2; k <= 4 && k < integer_bits; ++k) {
    const int32x4_t bit = vandq_s32(remainder, vdupq_n_s32(INT32_C(1) << (frac_bits + k)));
    result = vpselq_s32(vqrdmulhq_n_s32(result, multipliers[k + 2]), result,
                        vcmpneq_n_s32(bit, 0));
  }
  return vpselq_s32(vdupq_n_s32(INT32_MAX), result, vcmpeqq_n_s32(a, 0));
}

/* Newton-Raphson for 1 / (1 + a), a >= 0, in Q2.29: reciprocal_one_plus_x_q2. */
INLINE int32x4_t reciprocal_q2(int32x4_t a) {
  const int32x4_t half_den = vrhaddq_s32(a, vdupq_n_s32(INT32_MAX));
  int32x4_t x = vaddq_n_s32(vqrdmulhq_n_s32(half_den, -1010580540), 1515870810);
  for (int i = 0; i < 3; ++i) {
    const int32x4_t one_minus = vsubq_s32(vdupq_n_s32(INT32_C(1) << 29),
                                          vqrdmulhq_s32(half_den, x));
    x = vaddq_s32(x, vqshlq_r_s32(vqrdmulhq_s32(x, one_minus), 2));
  }
  return x;
}

/* mak_logistic_fp(a, 4) and mak_tanh_fp(a, 4). */
INLINE int32x4_t logistic4(int32x4_t a) {
  const mve_pred16_t pos = vcmpgtq_n_s32(a, 0);
  const int32x4_t e = exp_negative4(vpselq_s32(vnegq_s32(a), a, pos), 4);
  const int32x4_t r = vqshlq_r_s32(reciprocal_q2(e), 1);
  const int32x4_t v = vpselq_s32(r, vsubq_s32(vdupq_n_s32(INT32_MAX), r), pos);
  return vpselq_s32(vdupq_n_s32(INT32_C(1) << 30), v, vcmpeqq_n_s32(a, 0));
}

INLINE int32x4_t tanh4(int32x4_t a) {
  const mve_pred16_t neg = vcmpltq_n_s32(a, 0);
  const int32x4_t e = exp_negative4(vpselq_s32(a, vnegq_s32(a), neg), 5);
  const int32x4_t t =
      vqshlq_r_s32(vsubq_n_s32(reciprocal_q2(e), INT32_C(1) << 29), 2);
  const int32x4_t v = vpselq_s32(vnegq_s32(t), t, neg);
  return vpselq_s32(vdupq_n_s32(0), v, vcmpeqq_n_s32(a, 0));
}

/* activations.c's logistic_q8 / tanh_q8 of four int8 values. */
INLINE int32x4_t sigmoid4(bool is_tanh, int32x4_t x, int32_t zp, int32_t radius, rq4 q) {
  const int32x4_t v = vsubq_n_s32(x, zp);
  const int32x4_t a = mbqm4(v, q);
  int32x4_t y = is_tanh ? rdbpot_n(tanh4(a), 24) : vsubq_n_s32(rdbpot_n(logistic4(a), 23), 128);
  y = vminq_s32(vmaxq_s32(y, vdupq_n_s32(INT8_MIN)), vdupq_n_s32(INT8_MAX));
  y = vpselq_s32(vdupq_n_s32(INT8_MIN), y, vcmpleq_n_s32(v, -radius));
  return vpselq_s32(vdupq_n_s32(INT8_MAX), y, vcmpgeq_n_s32(v, radius));
}

INLINE void sigmoid_loop(bool is_tanh, const int8_t *in, int8_t *out, int32_t n, int32_t zp,
                         int32_t radius, int32_t mult, int32_t shift) {
  const rq4 q = rq_make(vdupq_n_s32(mult), vdupq_n_s32(shift));
  int32_t i = 0;
  for (; i + 4 <= n; i += 4)
    vstrbq_s32(out + i, sigmoid4(is_tanh, vldrbq_s32(in + i), zp, radius, q));
  if (i < n) {
    const mve_pred16_t p = vctp32q((uint32_t)(n - i));
    vstrbq_p_s32(out + i, sigmoid4(is_tanh, vldrbq_z_s32(in + i, p), zp, radius, q), p);
  }
}

bool mak_mve_sigmoid_q8(bool is_tanh, const int8_t *in, int8_t *out, int32_t n, int32_t zp,
                        int32_t radius, int32_t mult, int32_t shift) {
  if (is_tanh) sigmoid_loop(true, in, out, n, zp, radius, mult, shift);
  else sigmoid_loop(false, in, out, n, zp, radius, mult, shift);
  return true;
}
#endif
