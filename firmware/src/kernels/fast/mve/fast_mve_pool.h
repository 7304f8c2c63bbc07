/* The Helium loop over a whole int8 AVERAGE_POOL_2D or MAX_POOL_2D node (fast_mve_pool.c). */
#ifndef MA_FAST_MVE_POOL_H
#define MA_FAST_MVE_POOL_H

#include <stdbool.h>

#include "fast/mve/fast_mve_s8.h"
#include "pooling.h"

#if FAST_MVE
/* An int8 AVERAGE_POOL_2D (!is_max) or MAX_POOL_2D over the geometry g (no dilation): every
 * output pixel in order, the maxima or TFLM's rounded averages of its in-image cells clamped
 * to [lo, hi], each group of channels read over the whole window before it is written.
 * 1 done; 0, having done nothing, for average windows of more than 255 cells; -1 at a window
 * with no cell in the image. */
int mak_mve_pool_s8(const mak_window_geom *g, const int8_t *in, int8_t *out, int32_t depth,
                    bool is_max, int32_t lo, int32_t hi);
#else
static inline int mak_mve_pool_s8(const mak_window_geom *g, const int8_t *in, int8_t *out,
                                  int32_t depth, bool is_max, int32_t lo, int32_t hi) {
  (void)g, (void)in, (void)out, (void)depth, (void)is_max, (void)lo, (void)hi;
  return 0;
}
#endif

#endif
