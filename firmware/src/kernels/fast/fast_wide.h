/* mul_add_wide in C: a * b + (hi:lo) as 64 bits in two words, from the 16-bit halves of a and
 * b (the arithmetic: fast_s8_core.h's wide32). The host builds this form of Armv6-M's product
 * (fast/v6m/fast_v6m_core.h has that core's assembly) so that the conformance suite checks
 * requant_right's and requant_left's wide form against TFLM. Included through
 * fast/fast_core_steps.h. */
#ifndef MA_FAST_WIDE_H
#define MA_FAST_WIDE_H

static inline wide32 mul_add_wide(int32_t a, int32_t b, uint32_t lo, uint32_t hi) {
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
}

#endif
