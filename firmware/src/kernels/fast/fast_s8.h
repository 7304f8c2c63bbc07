/* Fast int8 paths of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (fast_s8.c).
 *
 * Each returns false, having done nothing, when the node is outside what it handles; the
 * caller then runs its reference loop. Results are bit-identical to the reference loops (and
 * so to TFLM's reference kernels): the sums are the same wrapping int32 sums in another order,
 * the requantization the same integer steps. Loop orders keep the overlap rules of overlap.c:
 * output pixels in order, and every read of a pixel's window (a depthwise block's channels)
 * before that pixel's (block's) first write; CONV_2D's and FULLY_CONNECTED's pixel (batch)
 * pairs break that order and so run only where overlap.h's pair rules allow the offsets. */
#ifndef MA_FAST_S8_H
#define MA_FAST_S8_H

#include <stdbool.h>

#include "kernel_util.h"

bool mak_fast_conv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g);
bool mak_fast_dwconv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g);
/* DEPTHWISE_CONV_2D of one input channel taken as a CONV_2D (fast_s8.c; called by
 * mak_fast_dwconv_s8). */
bool mak_fast_dw1_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g);
/* The depthwise path's requantization of one sum before the clamp (mak_mbqm's result, for
 * multipliers of 0 or 2^30 to 2^31 - 1 and shifts of -31 to 30, as mak_quantize_multiplier
 * makes them); exported for the tests. */
int32_t mak_fast_dw_requant(int32_t acc, int32_t mult, int32_t shift);
/* A FULLY_CONNECTED int8 node without a weight zero point: its operands' data and what its
 * prepare kept (the kernel's eval reads no other part of the node). */
typedef struct {
  const int8_t *in, *w;
  const int32_t *bias; /* NULL when absent */
  int8_t *out;
  int32_t units, depth, batches;
  int32_t input_offset, output_offset, act_min, act_max;
  int32_t n_mult; /* 1: per-tensor weights; units: per-channel (mult, shift per unit) */
  const int32_t *mult;
  const int8_t *shift;
} mak_fc_s8_job;
bool mak_fast_fc_s8(const mak_fc_s8_job *fc);
/* s[r] = sum_i w[r * len + i] * (x[i] + off), i < len, for the rows r < rows (weight rows one
 * after the other), wrapping as int32 sums: FULLY_CONNECTED's one-batch sums, for the LSTM's
 * gates. false, having done nothing, where the loops do not take the offset. */
bool mak_row_sums_s8(const int8_t *x, const int8_t *w, int32_t len, int32_t rows, int32_t off,
                     int32_t *s);
/* acc[r] += sum_i w[r * ws + i] * (x[i] + off) for the four weight rows r = 0..3 (n >= 0),
 * wrapping like int32: CONV_2D's four-channel loop, for the kernels outside the convolutions
 * on the cores without the DSP extension (fast_dot_s8.h). */
void mak_dot4_rows(const int8_t *x, const int8_t *w, size_t ws, int32_t n, int32_t off,
                   int32_t acc[4]);

#endif
