/* The Helium loop of int8 LOGISTIC and TANH (fast_mve_activations.c). */
#ifndef MA_FAST_MVE_ACTIVATIONS_H
#define MA_FAST_MVE_ACTIVATIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "fast/mve/fast_mve_s8.h"

/* activations.c's logistic_q8 / tanh_q8 (input zero point, saturation radius, Q4.27 input
 * multiplier and shift) over n values, four at a time, each group read before it is written
 * (an output over its input at or below it stays exact, as overlap.c assumes). false where the
 * core has no MVE. */
#if FAST_MVE
bool mak_mve_sigmoid_q8(bool is_tanh, const int8_t *in, int8_t *out, int32_t n, int32_t zp,
                        int32_t radius, int32_t mult, int32_t shift);
#else
static inline bool mak_mve_sigmoid_q8(bool is_tanh, const int8_t *in, int8_t *out, int32_t n,
                                      int32_t zp, int32_t radius, int32_t mult, int32_t shift) {
  (void)is_tanh, (void)in, (void)out, (void)n, (void)zp, (void)radius, (void)mult, (void)shift;
  return false;
}
#endif

#endif
