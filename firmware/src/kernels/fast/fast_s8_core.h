/* The primitives the fast int8 paths share (fast_s8.c: CONV_2D and FULLY_CONNECTED;
 * fast_depthwise_s8.c: DEPTHWISE_CONV_2D; fast_mve_core.h, fast_dot_s8.h and the kernels that
 * use those, such as pooling, SVDF and LSTM): four int8 values per 32-bit load, each
 * architecture's multiply-accumulate forms (fast/fast_core_steps.h), and the inlined
 * requantization (one rounding where the shift is to the right: requant_q). Not part of the
 * kernel interface.
 * Why these forms are bit-exact with the reference loops: see fast_s8.c. */
#ifndef MA_FAST_S8_CORE_H
#define MA_FAST_S8_CORE_H

#include "fast/arch.h"
#include "kernel_util.h"

#include <string.h>

/* Offsets for which x + input_offset fits an int16 lane and the output clamp below is exact. */
static inline bool offsets_ok(int32_t input_offset, int32_t output_offset) {
  return input_offset >= -255 && input_offset <= 255 && output_offset >= -65536 &&
         output_offset <= 65536;
}

/* Input, weights and output int8 (other typed paths stay in the reference kernels), on a core
 * where these loops pay. */
static inline bool all_s8(const ma_node *node) {
  return FAST_ENABLED && node->inputs[0]->type == MA_INT8 && node->inputs[1]->type == MA_INT8 &&
         node->outputs[0]->type == MA_INT8;
}

static inline uint32_t load4(const int8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4); /* one unaligned LDR on Armv7-M */
  return v;
}

static inline int32_t wrap_mac(int32_t acc, int32_t w, int32_t x) {
  return (int32_t)((uint32_t)acc + (uint32_t)(w * x));
}

/* Four int32 sums, kept in registers (an array would live on the stack). */
typedef struct {
  int32_t v0, v1, v2, v3;
} acc4;

/* a * b + (hi:lo) as 64 bits in two words (mul_add_wide, where FAST_HALVES), from the 16-bit
 * halves of a and b. Exact: with al, bl the low halves (0 to 65535) and ah, bh the high ones
 * (-32768 to 32767), a * b = ah bh 2^32 + (ah bl + al bh) 2^16 + al bl, where al bl fits uint32
 * and ah bl, al bh, ah bh fit int32; each middle product m adds (m >> 16) to the high word and
 * its low half, shifted up 16, to the low word, with the carries of the low-word additions. */
typedef struct {
  uint32_t lo, hi;
} wide32;

#include "fast/fast_core_steps.h" /* the steps of each architecture */

/* The requantization of mak_requantize with the same integer steps, inlined: the doubling
 * high multiply as one rounding shift ((a * b + 2^30) >> 31 equals TFLite's nudge-and-truncate
 * for every product; its one saturating case needs a multiplier of INT32_MIN, which
 * mak_quantize_multiplier never gives), and the output offset added after the clamp, which is
 * exact for the offsets offsets_ok admits. Written as one function, "requant", the
 * specification the helpers below compute (no code calls it, so it is not compiled):
 *
 *   int8_t requant(int32_t acc, int32_t mult, int shift, const out_range *r) {
 *     const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
 *     const int32_t x = (int32_t)((uint32_t)acc << left);
 *     int32_t v = (int32_t)(((int64_t)x * mult + (INT64_C(1) << 30)) >> 31);
 *     if (right > 0) {  // to nearest, ties away from zero (TFLite's RoundingDivideByPOT)
 *       const int e = right > 31 ? 31 : right;
 *       const int32_t mask = (int32_t)((UINT32_C(1) << e) - 1u);
 *       const int32_t threshold = (mask >> 1) + (v < 0 ? 1 : 0);
 *       v = (v >> e) + ((v & mask) > threshold ? 1 : 0);
 *     }
 *     v = v < r->lo ? r->lo : (v > r->hi ? r->hi : v);
 *     return (int8_t)(v + r->offset);
 *   }
 */
typedef struct {
  int32_t offset, lo, hi; /* lo, hi: the activation range minus the offset */
} out_range;

static inline out_range make_range(int32_t offset, int32_t act_min, int32_t act_max) {
  const out_range r = {offset, act_min - offset, act_max - offset};
  return r;
}

/* requant's result for a shift below 0 (a rounding right shift by e = -shift, 1 to 31, as
 * mak_quantize_multiplier's shifts lie in [-31, 30]), before the clamp, in one multiply-add.
 * requant rounds twice: v = floor((acc * mult + 2^30) / 2^31), then v / 2^e to nearest with
 * ties away from zero, floor((v + 2^(e-1) - (v < 0)) / 2^e). Nested floors of divisions by
 * positive integers are one floor: floor((acc * mult + 2^30 + k * 2^31) / 2^(31 + e)) with
 * k = 2^(e-1) - (v < 0). v < 0 only if acc < 0 (mult >= 0), and where acc < 0 but v >= 0,
 * v is 0 and both k give 0, so k = half - (acc < 0) with half = 2^(e-1). The low word of the
 * added constant is 2^30 plus k's low bit at bit 31; the high word is k >> 1. */
static inline int32_t requant_right(int32_t acc, int32_t mult, int32_t e_minus_1,
                                    int32_t half) {
  const int32_t k = half + (acc >> 31);
#if FAST_HALVES
  const wide32 sum =
      mul_add_wide(acc, mult, (uint32_t)k << 31 | UINT32_C(1) << 30, (uint32_t)(k >> 1));
  return (int32_t)sum.hi >> e_minus_1;
#else
  const uint64_t c = (uint64_t)(uint32_t)(k >> 1) << 32 | ((uint32_t)k << 31 | UINT32_C(1) << 30);
  const int64_t sum = (int64_t)acc * mult + (int64_t)c;
  return (int32_t)(sum >> 32) >> e_minus_1;
#endif
}

/* requant's result for a shift of 0 or more (a left shift, no rounding shift), before the
 * clamp. */
static inline int32_t requant_left(int32_t acc, int32_t mult, int32_t left) {
  const int32_t x = (int32_t)((uint32_t)acc << left);
#if FAST_HALVES
  const wide32 sum = mul_add_wide(x, mult, UINT32_C(1) << 30, 0);
  return (int32_t)(sum.hi << 1 | sum.lo >> 31); /* bits 31..62: the shift by 31 */
#else
  return (int32_t)(((int64_t)x * mult + (INT64_C(1) << 30)) >> 31);
#endif
}

static inline int8_t clamp_out(int32_t y, const out_range *r) {
  return (int8_t)((y < r->lo ? r->lo : (y > r->hi ? r->hi : y)) + r->offset);
}

/* One output channel's requantization constants: requant_right's (half = 2^(e-1) > 0,
 * amount = e - 1) for a negative shift, else requant_left's (half = 0, amount = the shift). */
typedef struct {
  int32_t mult, amount, half;
} chan_q;

static inline chan_q chan_consts(int32_t mult, int shift) {
  /* requant's right shift stops at 31 */
  const int32_t e_minus_1 = shift < -31 ? 30 : -shift - 1;
  const chan_q c = {mult, shift < 0 ? e_minus_1 : shift, shift < 0 ? (int32_t)1 << e_minus_1 : 0};
  return c;
}

/* requant's result before the clamp, with the constants of chan_consts (SVDF, LSTM). */
static inline int32_t requant_q(int32_t acc, const chan_q *c) {
  return c->half ? REQUANT_Q_RIGHT(acc, c->mult, c->amount, c->half)
                 : requant_left(acc, c->mult, c->amount);
}

#endif
