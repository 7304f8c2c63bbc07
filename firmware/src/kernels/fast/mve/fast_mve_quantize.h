/* The Helium loop of QUANTIZE's int8/uint8/int16 -> int8 requantization (fast_mve_quantize.c). */
#ifndef MA_FAST_MVE_QUANTIZE_H
#define MA_FAST_MVE_QUANTIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "fast/mve/fast_mve_s8.h"

enum { MAK_RQ_S8, MAK_RQ_U8, MAK_RQ_S16 }; /* the input type of mak_mve_requant_to_s8 */

/* quantize.c's requantize to int8 of n int8, uint8 or int16 values (`kind`): (x - in_zp) times
 * the multiplier, saturating plus out_zp, clamped; four at a time, each group read before it
 * is written (an output over its input at or below it stays exact, as overlap.c assumes).
 * false where the core has no MVE. */
#if FAST_MVE
bool mak_mve_requant_to_s8(const void *in, int kind, int8_t *out, int32_t n, int32_t in_zp,
                           int32_t out_zp, int32_t mult, int32_t shift);
#else
static inline bool mak_mve_requant_to_s8(const void *in, int kind, int8_t *out, int32_t n,
                                         int32_t in_zp, int32_t out_zp, int32_t mult,
                                         int32_t shift) {
  (void)in, (void)kind, (void)out, (void)n, (void)in_zp, (void)out_zp, (void)mult, (void)shift;
  return false;
}
#endif

#endif
