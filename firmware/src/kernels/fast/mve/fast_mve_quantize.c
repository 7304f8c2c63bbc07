/* Helium QUANTIZE int8/uint8/int16 -> int8 (see fast_mve_quantize.h): x - zero point wraps as
 * mak_wrap_sub (VSUB), mbqm4 is mak_mbqm (fast_mve_s8.c's proof), VQADD saturates as
 * mak_add_sat. */
#include "fast/mve/fast_mve_quantize.h"

#if FAST_MVE
#include <arm_mve.h>

#include "fast/mve/fast_mve_core.h"

#define INLINE static inline __attribute__((always_inline))

INLINE int32x4_t requant_s8(int32x4_t x, int32_t in_zp, int32_t out_zp, rq4 q) {
  const int32x4_t v = vqaddq_n_s32(mbqm4(vsubq_n_s32(x, in_zp), q), out_zp);
  return vminq_s32(vmaxq_s32(v, vdupq_n_s32(INT8_MIN)), vdupq_n_s32(INT8_MAX));
}

/* Four values of the input type from i (lanes from n on zero). */
INLINE int32x4_t load_lanes(const void *in, int kind, int32_t i, mve_pred16_t p) {
  if (kind == MAK_RQ_S8) return vldrbq_z_s32((const int8_t *)in + i, p);
  if (kind == MAK_RQ_U8) return vreinterpretq_s32_u32(vldrbq_z_u32((const uint8_t *)in + i, p));
  return vldrhq_z_s32((const int16_t *)in + i, p);
}

INLINE void loop(const void *in, int kind, int8_t *out, int32_t n, int32_t in_zp,
                 int32_t out_zp, rq4 q) {
  for (int32_t i = 0; i < n; i += 4) {
    const mve_pred16_t p = vctp32q((uint32_t)(n - i));
    vstrbq_p_s32(out + i, requant_s8(load_lanes(in, kind, i, p), in_zp, out_zp, q), p);
  }
}

bool mak_mve_requant_to_s8(const void *in, int kind, int8_t *out, int32_t n, int32_t in_zp,
                           int32_t out_zp, int32_t mult, int32_t shift) {
  const rq4 q = rq_make(vdupq_n_s32(mult), vdupq_n_s32(shift));
  if (kind == MAK_RQ_S8) loop(in, MAK_RQ_S8, out, n, in_zp, out_zp, q);
  else if (kind == MAK_RQ_U8) loop(in, MAK_RQ_U8, out, n, in_zp, out_zp, q);
  else loop(in, MAK_RQ_S16, out, n, in_zp, out_zp, q);
  return true;
}
#endif
