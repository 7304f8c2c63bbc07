/* int8 ADD, SUB and MUL in TFLite's steps with the operands' ranges known (elementwise.c's
 * short forms, which check the ranges), and their Helium loop (fast_mve_elementwise.c). */
#ifndef MA_FAST_MVE_ELEMENTWISE_H
#define MA_FAST_MVE_ELEMENTWISE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
  int32_t off1, off2, out_off, m1, m2, mo, lo, hi;
  int e1, e2, eo, left; /* right shifts of the three multipliers; MUL's left shift */
} mak_fast_q8;

enum { MAK_Q8_ADD, MAK_Q8_SUB, MAK_Q8_MUL };

#include "fast/mve/fast_mve_s8.h"

#if FAST_MVE
/* z[i] = x[i] op y[i] for i < n, four values at a time, each group's loads before its store
 * (an output over its input at or below it stays exact, as overlap.c assumes). false, having
 * done nothing, where the loop does not apply (see fast_mve_elementwise.c). */
bool mak_mve_binary_q8(int op, const mak_fast_q8 *f, const int8_t *x, const int8_t *y,
                       int8_t *z, int32_t n);
#else
static inline bool mak_mve_binary_q8(int op, const mak_fast_q8 *f, const int8_t *x,
                                     const int8_t *y, int8_t *z, int32_t n) {
  (void)op, (void)f, (void)x, (void)y, (void)z, (void)n;
  return false;
}
#endif

#endif
