/* The core steps on the DSP extension (M4, M7, M33, M55; fast/fast_core_steps.h names them):
 * four int8 lanes widened in pairs by SXTB16/SXTAB16 and multiplied by SMLAD or SMLAxy, QADD's
 * saturating add, and requant_right's multiply-add as one SMLAL (fast/v7m/fast_v7m_smlal.h:
 * every core here has Armv7-M's instructions). */
#ifndef MA_FAST_DSP_CORE_H
#define MA_FAST_DSP_CORE_H

#include <arm_acle.h>

#include "fast/v7m/fast_v7m_smlal.h"

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

/* a + b saturated to int32: one QADD. */
static inline int32_t mak_qadd(int32_t a, int32_t b) { return __qadd(a, b); }

#define REQUANT_RIGHT requant_right_dsp
#define REQUANT_Q_RIGHT requant_right_dsp

#endif
