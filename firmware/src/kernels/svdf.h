/* SVDF's int8 state at eval, for svdf.c and its Helium form (fast/mve/fast_mve_svdf.h): what
 * the int8 path reads of a node once per invocation, and the feature sums both forms take. */
#ifndef MA_SVDF_H
#define MA_SVDF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fast/fast_dot_s8.h"
#include "kernel_util.h"

/* What the int8 path needs of a node, read once per invocation. */
typedef struct {
  const int8_t *wf;
  const uint8_t *wt;
  const int32_t *bias;
  int32_t n_input, n_filter, n_memory, rank;
  int32_t input_off, state_zp, output_zp;
  chan_q q_feature, q_out;
  bool s8; /* int8 state and time weights, else int16 */
  int32_t q_feature_mult, q_out_mult; /* the same multipliers, as Helium's lanes take them */
  int8_t q_feature_shift, q_out_shift;
} svdf_run;

/* The feature sums of filters r..r+n-1 (n = 4, or fewer at the end), four rows per pass. */
static inline int32_t feature_sums(const svdf_run *c, const int8_t *xb, int32_t r,
                                   int32_t sums[4]) {
  const int32_t n = c->n_filter - r < 4 ? c->n_filter - r : 4;
  if (n == 4) {
    const int8_t *rows[4];
    for (int k = 0; k < 4; ++k) rows[k] = c->wf + (size_t)(r + k) * c->n_input;
    mak_dot4_s8(rows, xb, c->n_input, c->input_off, sums);
  } else {
    for (int32_t k = 0; k < n; ++k)
      sums[k] = mak_dot_s8(c->wf + (size_t)(r + k) * c->n_input, xb, c->n_input, c->input_off);
  }
  return n;
}

#endif
