/* Helium int8 ADD, SUB and MUL (see fast_mve_elementwise.h), four int32 lanes at a time.
 *
 * The steps are elementwise.c's short forms, lane by lane: with the operands' ranges that
 * fast_q8_init checks every intermediate stays below 2^30 in magnitude, so plain VADD and VSHL
 * never wrap and VQRDMULH by a scalar multiplier is SaturatingRoundingDoublingHighMul
 * (fast_mve_s8.c's requantization comment); a rounding right shift by e >= 1 is VRSHL after
 * subtracting 1 from negative values (the same proof), and e = 0 is no shift at all.
 *
 * ADD and SUB rescale each input by a ratio of at most 1/2 (its scale over twice the larger
 * one): (x + off) 2^20 through the multiplier, then a right shift of at least 1, except for
 * exactly 1/2, multiplier 2^30 and no shift. That one gives (v 2^20 2^30 + 2^30) >> 31 =
 * v 2^19; so does (v 2^21 2^30 + 2^30) >> 31 = v 2^20 followed by the rounding shift by 1 (of
 * an even value: exact), so both inputs take the same steps, with a left shift of 20 or 21
 * (|v| <= 383: v 2^21 < 2^30). The output shift may be 0: a loop without it, and one with.
 * ADD's larger-scale input is always the 1/2 one: ADD takes it first (the sum of the two int32
 * values is the same either way) as the one shift, saving four instructions per four lanes. */
#include "fast/mve/fast_mve_elementwise.h"

#if FAST_MVE
#include <arm_mve.h>

#define INLINE static inline __attribute__((always_inline))

/* round(v / 2^e) half away from zero, e >= 1, |v| < 2^30. */
INLINE int32x4_t rdbpot4(int32x4_t v, int32_t e) {
  return vrshlq_n_s32(vaddq_s32(v, vshrq_n_s32(v, 31)), -e);
}

/* ADD/SUB's input rescale of x + off (see the top: shift 20 or 21, e >= 1). */
INLINE int32x4_t rescale4(int32x4_t x, int32_t off, int32_t shift, int32_t m, int32_t e) {
  return rdbpot4(vqrdmulhq_n_s32(vshlq_r_s32(vaddq_n_s32(x, off), shift), m), e);
}

/* One input's left shift, multiplier and right shift for rescale4; false for a ratio that
 * is not 1/2 yet has no right shift, which add_sub_scales never gives. */
typedef struct {
  int32_t shift, m, e;
} in_scale;

static bool input_form(int32_t m, int e, in_scale *s) {
  const bool half = m == INT32_C(1) << 30 && e == 0;
  s->shift = half ? 21 : 20;
  s->m = m;
  s->e = half ? 1 : e;
  return s->e >= 1;
}

INLINE int32x4_t out4(int32x4_t raw, const mak_fast_q8 *f, bool shifted, int32x4_t lo,
                      int32x4_t hi) {
  int32x4_t v = vqrdmulhq_n_s32(raw, f->mo);
  if (shifted) v = rdbpot4(v, f->eo);
  return vminq_s32(vmaxq_s32(vaddq_n_s32(v, f->out_off), lo), hi);
}

INLINE int32x4_t op4(int op, const mak_fast_q8 *f, const in_scale *s1, const in_scale *s2,
                     int32x4_t x, int32x4_t y, bool shifted, int32x4_t lo, int32x4_t hi) {
  int32x4_t raw;
  if (op == MAK_Q8_MUL) {
    raw = vmulq_s32(vaddq_n_s32(x, f->off1), vaddq_n_s32(y, f->off2));
    raw = vshlq_r_s32(raw, f->left);
  } else {
    const int32x4_t a = op == MAK_Q8_ADD ? vshlq_n_s32(vaddq_n_s32(x, f->off1), 19)
                                         : rescale4(x, f->off1, s1->shift, s1->m, s1->e);
    const int32x4_t b = rescale4(y, f->off2, s2->shift, s2->m, s2->e);
    raw = op == MAK_Q8_ADD ? vaddq_s32(a, b) : vsubq_s32(a, b);
  }
  return out4(raw, f, shifted, lo, hi);
}

/* Copies of the parameters in registers: the stores cannot change them. */
INLINE void loop(int op, const mak_fast_q8 *fp, const in_scale *s1p, const in_scale *s2p,
                 const int8_t *x, const int8_t *y, int8_t *z, int32_t n, bool shifted) {
  const mak_fast_q8 fc = *fp, *f = &fc;
  const in_scale c1 = *s1p, c2 = *s2p, *s1 = &c1, *s2 = &c2;
  const int32x4_t lo = vdupq_n_s32(f->lo), hi = vdupq_n_s32(f->hi);
  int32_t i = 0;
  for (; i + 4 <= n; i += 4)
    vstrbq_s32(z + i, op4(op, f, s1, s2, vldrbq_s32(x + i), vldrbq_s32(y + i), shifted, lo, hi));
  if (i < n) { /* zeroing loads: nothing read past the inputs */
    const mve_pred16_t p = vctp32q((uint32_t)(n - i));
    vstrbq_p_s32(z + i,
                 op4(op, f, s1, s2, vldrbq_z_s32(x + i, p), vldrbq_z_s32(y + i, p), shifted,
                     lo, hi),
                 p);
  }
}

/* One loop per operator and output shift (GCC specialises each always_inline call). */
#define LOOPS(OP)                                                      \
  do {                                                                 \
    if (f->eo > 0) loop(OP, f, &s1, &s2, x, y, z, n, true);            \
    else loop(OP, f, &s1, &s2, x, y, z, n, false);                     \
  } while (0)

bool mak_mve_binary_q8(int op, const mak_fast_q8 *f, const int8_t *x, const int8_t *y,
                       int8_t *z, int32_t n) {
  in_scale s1 = {0, 0, 0}, s2 = {0, 0, 0};
  if (op == MAK_Q8_MUL) {
    LOOPS(MAK_Q8_MUL);
    return true;
  }
  if (!input_form(f->m1, f->e1, &s1) || !input_form(f->m2, f->e2, &s2)) return false;
  if (op == MAK_Q8_SUB) {
    LOOPS(MAK_Q8_SUB);
    return true;
  }
  mak_fast_q8 g = *f; /* the 1/2 input first: ADD's first input takes the one shift */
  if (s1.shift != 21) {
    if (s2.shift != 21) return false; /* add_sub_scales never gives this */
    g.off1 = f->off2;
    g.off2 = f->off1;
    s2 = s1;
    const int8_t *const w = x;
    x = y;
    y = w;
  }
  f = &g;
  LOOPS(MAK_Q8_ADD);
  return true;
}
#endif
