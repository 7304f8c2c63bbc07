/* int8 AVERAGE_POOL_2D and MAX_POOL_2D's window, for pooling.c and its DSP and Helium forms
 * (fast/dsp/fast_dsp_pool.h, fast/mve/fast_mve_pool.c): one output pixel's cells inside the
 * image. */
#ifndef MA_POOLING_H
#define MA_POOLING_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const int8_t *first;       /* the window's first in-image cell, channel 0 */
  int32_t rows, cols;        /* in-image cells */
  size_t col_step, row_step; /* bytes between neighbouring cells */
} mak_pool_cells;

#endif
