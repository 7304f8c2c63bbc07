/* SVDF's push_dot_s8 (svdf.c names it; fast/fast_svdf_steps.h chooses it) on the cores without
 * the DSP extension, Armv6-M and Armv7-M (which has all of Armv6-M's instructions): a byte at a
 * time, as taking a loaded word's bytes apart costs more there than loading each. */
#ifndef MA_FAST_V6M_SVDF_H
#define MA_FAST_V6M_SVDF_H

#include <stdint.h>

#define SVDF_HAS_PUSH_DOT

/* push_row of an int8 row and the row's product with the time weights wt (state values plus
 * state_off), a byte at a time: each step is moved down and multiplied while in a register. */
static inline int32_t push_dot_s8(uint8_t *row, const uint8_t *wt, int32_t n, uint32_t v,
                                  int32_t state_off) {
  int8_t *r = (int8_t *)row;
  const int8_t *w = (const int8_t *)wt;
  uint32_t acc = 0;
  for (int32_t k = 0; k + 1 < n; ++k) {
    const int32_t x = r[k + 1];
    r[k] = (int8_t)x;
    acc += (uint32_t)(w[k] * (x + state_off));
  }
  r[n - 1] = (int8_t)(uint8_t)v;
  return (int32_t)(acc + (uint32_t)(w[n - 1] * ((int8_t)(uint8_t)v + state_off)));
}
#define PUSH_DOT_OK(n, state_off) ((n) >= 1)

#endif
