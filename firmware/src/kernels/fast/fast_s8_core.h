/* The primitives the fast int8 paths share (fast_s8.c: CONV_2D and FULLY_CONNECTED;
 * fast_depthwise_s8.c: DEPTHWISE_CONV_2D; fast_mve_core.h, fast_dot_s8.h and the kernels that
 * use those, such as pooling, SVDF and LSTM): four int8 values per 32-bit load, the DSP or
 * portable multiply-accumulate forms, and the inlined requantization (one rounding where the
 * shift is to the right: requant_q). Not part of the kernel interface.
 * Why these forms are bit-exact with the reference loops: see fast_s8.c. */
#ifndef MA_FAST_S8_CORE_H
#define MA_FAST_S8_CORE_H

#include "fast/arch.h"
#include "kernel_util.h"

#include <string.h>

#if FAST_DSP
#include <arm_acle.h>
#endif
#if FAST_V6M
/* The Armv6-M assembly loops' frame (naked functions): r4-r11 and lr saved, then the job
 * pointer (r0) at [sp]. */
#define V6M_PROLOGUE \
  ".syntax unified\n\t" /* GCC marks Thumb-1 inline assembly divided */ \
  "push {r4-r7, lr}\n\t" \
  "mov r4, r8\n\t" \
  "mov r5, r9\n\t" \
  "mov r6, r10\n\t" \
  "mov r7, r11\n\t" \
  "push {r0, r4-r7}\n\t"
#define V6M_EPILOGUE \
  "pop {r0, r4-r7}\n\t" \
  "mov r8, r4\n\t" \
  "mov r9, r5\n\t" \
  "mov r10, r6\n\t" \
  "mov r11, r7\n\t" \
  "pop {r4-r7, pc}"
#endif

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

#if FAST_DSP
/* Four input values plus the offset: bytes 0 and 2 in `even`, bytes 1 and 3 in `odd`. */
typedef struct {
  int16x2_t even, odd;
} quad;

/* SXTB16 and SXTAB16 of the value rotated by 8 bits, in one instruction each (GCC 12 does not
 * fold the rotation into them). */
static inline int16x2_t sxtb16_ror8(uint32_t v) {
  int16x2_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}

static inline int16x2_t sxtab16_ror8(int16x2_t a, uint32_t v) {
  int16x2_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(v));
  return r;
}

static inline quad quad_in(uint32_t v, int32_t off) {
  const int16x2_t off2 = (int16x2_t)(((uint32_t)off & 0xFFFFu) * 0x10001u);
  const quad q = {__sxtab16(off2, (int8x4_t)v), sxtab16_ror8(off2, v)};
  return q;
}

/* acc + the dot product of the four inputs with four weights. */
static inline int32_t quad_dot(int32_t acc, quad x, uint32_t w) {
  acc = __smlad(__sxtb16((int8x4_t)w), x.even, acc);
  return __smlad(sxtb16_ror8(w), x.odd, acc);
}

/* a.v[k] + input k * weight k, for the four lanes k. */
static inline acc4 quad_mac(acc4 a, quad x, uint32_t w) {
  const int16x2_t we = __sxtb16((int8x4_t)w), wo = sxtb16_ror8(w);
  a.v0 = __smlabb(x.even, we, a.v0);
  a.v2 = __smlatt(x.even, we, a.v2);
  a.v1 = __smlabb(x.odd, wo, a.v1);
  a.v3 = __smlatt(x.odd, wo, a.v3);
  return a;
}
/* a.v[k] + x * weight k: four output channels reading one input value (x: input + offset). */
static inline acc4 bcast_mac(acc4 a, int32_t x, uint32_t w) {
  const int16x2_t we = __sxtb16((int8x4_t)w), wo = sxtb16_ror8(w);
  a.v0 = __smlabb(x, we, a.v0);
  a.v2 = __smlabt(x, we, a.v2);
  a.v1 = __smlabb(x, wo, a.v1);
  a.v3 = __smlabt(x, wo, a.v3);
  return a;
}
#else
typedef struct {
  int32_t v[4];
} quad;

static inline int32_t lane(uint32_t v, int k) { return (int8_t)(uint8_t)(v >> (8 * k)); }

static inline quad quad_in(uint32_t v, int32_t off) {
  const quad q = {{lane(v, 0) + off, lane(v, 1) + off, lane(v, 2) + off, lane(v, 3) + off}};
  return q;
}

static inline int32_t quad_dot(int32_t acc, quad x, uint32_t w) {
  for (int k = 0; k < 4; ++k) acc = wrap_mac(acc, lane(w, k), x.v[k]);
  return acc;
}

static inline acc4 quad_mac(acc4 a, quad x, uint32_t w) {
  a.v0 = wrap_mac(a.v0, lane(w, 0), x.v[0]);
  a.v1 = wrap_mac(a.v1, lane(w, 1), x.v[1]);
  a.v2 = wrap_mac(a.v2, lane(w, 2), x.v[2]);
  a.v3 = wrap_mac(a.v3, lane(w, 3), x.v[3]);
  return a;
}

static inline acc4 bcast_mac(acc4 a, int32_t x, uint32_t w) {
  const quad q = {{x, x, x, x}};
  return quad_mac(a, q, w);
}
#endif

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
#if FAST_V6M || FAST_HOST
/* a * b + (hi:lo) as 64 bits in two words, from the 16-bit halves of a and b (Armv6-M has no
 * 32 x 32 -> 64 multiply; GCC's int64 form calls __aeabi_lmul). Exact: with al, bl the low
 * halves (0 to 65535) and ah, bh the high ones (-32768 to 32767), a * b = ah bh 2^32 +
 * (ah bl + al bh) 2^16 + al bl, where al bl fits uint32 and ah bl, al bh, ah bh fit int32;
 * each middle product m adds (m >> 16) to the high word and its low half, shifted up 16,
 * to the low word, with the carries of the low-word additions. The host build runs it too,
 * so the conformance suite checks it against TFLM there. */
typedef struct {
  uint32_t lo, hi;
} wide32;

static inline wide32 mul_add_wide(int32_t a, int32_t b, uint32_t lo, uint32_t hi) {
#if FAST_V6M
  /* The same sums with the carries in ADCS (GCC 12 compares for each: 19 instructions here
   * against about 40). ah bh is added last, with the third carry. */
  uint32_t t, u, v;
  __asm__(
      ".syntax unified\n\t" /* GCC marks Thumb-1 inline assembly divided */
      "uxth %[t], %[a]\n\t"
      "uxth %[u], %[b]\n\t"
      "asrs %[a], %[a], #16\n\t"
      "asrs %[b], %[b], #16\n\t"
      "movs %[v], %[t]\n\t"
      "muls %[v], %[u], %[v]\n\t" /* al bl */
      "muls %[u], %[a], %[u]\n\t" /* ah bl */
      "muls %[t], %[b], %[t]\n\t" /* al bh */
      "muls %[a], %[b], %[a]\n\t" /* ah bh */
      "asrs %[b], %[u], #16\n\t"
      "lsls %[u], %[u], #16\n\t"
      "adds %[lo], %[lo], %[v]\n\t"
      "adcs %[hi], %[hi], %[b]\n\t"
      "asrs %[v], %[t], #16\n\t"
      "lsls %[t], %[t], #16\n\t"
      "adds %[lo], %[lo], %[u]\n\t"
      "adcs %[hi], %[hi], %[v]\n\t"
      "adds %[lo], %[lo], %[t]\n\t"
      "adcs %[hi], %[hi], %[a]\n\t"
      ".syntax divided"
      : [a] "+l"(a), [b] "+l"(b), [lo] "+l"(lo), [hi] "+l"(hi), [t] "=&l"(t), [u] "=&l"(u),
        [v] "=&l"(v)
      :
      : "cc");
  const wide32 r = {lo, hi};
  return r;
#else
  const uint32_t al = (uint32_t)a & 0xFFFFu, bl = (uint32_t)b & 0xFFFFu;
  const int32_t ah = a >> 16, bh = b >> 16;
  const int32_t m1 = ah * (int32_t)bl, m2 = (int32_t)al * bh;
  const uint32_t ll = al * bl;
  uint32_t t = ll + lo;
  hi += (uint32_t)(ah * bh) + (t < ll);
  const uint32_t u = t + ((uint32_t)m1 << 16);
  hi += (uint32_t)(m1 >> 16) + (u < t);
  t = u + ((uint32_t)m2 << 16);
  hi += (uint32_t)(m2 >> 16) + (t < u);
  const wide32 r = {t, hi};
  return r;
#endif
}
#endif

static inline int32_t requant_right(int32_t acc, int32_t mult, int32_t e_minus_1,
                                    int32_t half) {
  const int32_t k = half + (acc >> 31);
#if FAST_V6M || FAST_HOST
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
#if FAST_V6M || FAST_HOST
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

#if FAST_DSP || FAST_V7M
/* requant_right with its multiply-add as one SMLAL (GCC 12 makes three multiplies of it). */
static inline int32_t requant_right_dsp(int32_t acc, int32_t mult, int32_t e_minus_1,
                                        int32_t half) {
  const int32_t k = half + (acc >> 31);
  uint32_t lo = (uint32_t)k << 31 | UINT32_C(1) << 30;
  int32_t hi = k >> 1;
  __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(acc), "r"(mult));
  return hi >> e_minus_1;
}
#define REQUANT_RIGHT requant_right_dsp
#else
#define REQUANT_RIGHT requant_right
#endif

/* requant's result before the clamp, with the constants of chan_consts (SVDF, LSTM). On the
 * M3 the C form: GCC's own multiply-add there took mnist_lstm's LSTM to 597,800 instructions
 * per invoke, the SMLAL assembly to 624,640. */
#if FAST_DSP
#define REQUANT_Q_RIGHT requant_right_dsp
#else
#define REQUANT_Q_RIGHT requant_right
#endif
static inline int32_t requant_q(int32_t acc, const chan_q *c) {
  return c->half ? REQUANT_Q_RIGHT(acc, c->mult, c->amount, c->half)
                 : requant_left(acc, c->mult, c->amount);
}

#endif
