/* One output pixel of an int8 AVERAGE_POOL_2D or MAX_POOL_2D: the window's cells inside the
 * image (pooling.c), and the Helium loop over them (fast_mve_pool.c). */
#ifndef MA_FAST_POOL_H
#define MA_FAST_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const int8_t *first;       /* the window's first in-image cell, channel 0 */
  int32_t rows, cols;        /* in-image cells */
  size_t col_step, row_step; /* bytes between neighbouring cells */
} mak_pool_cells;

#include "fast_mve_s8.h"

#if MA_FAST_MVE
/* out[0..depth) = the maxima (is_max) or TFLM's rounded averages of the cells, clamped to
 * [lo, hi]; each group of channels is read over the whole window before it is written.
 * false, having done nothing, for an average of more than 255 cells. */
bool mak_mve_pool_s8(const mak_pool_cells *pc, bool is_max, int32_t depth, int32_t lo,
                     int32_t hi, int8_t *out);
#else
static inline bool mak_mve_pool_s8(const mak_pool_cells *pc, bool is_max, int32_t depth,
                                   int32_t lo, int32_t hi, int8_t *out) {
  (void)pc, (void)is_max, (void)depth, (void)lo, (void)hi, (void)out;
  return false;
}
#endif

#endif
