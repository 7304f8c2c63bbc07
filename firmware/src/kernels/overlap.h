/* Where the fast int8 paths' out-of-order loops (fast_s8.c) may run on an input that overlaps
 * its output: the rules of overlap.c for them, mirrored by the planner's --fastest plans
 * (host/planning/overlap.py, pair rules; docs/overlap.md derives them). */
#ifndef MA_OVERLAP_H
#define MA_OVERLAP_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel_util.h"

/* Output channels of both pixels (rows) of a pair that fast_s8.c's rows2 sums from both windows
 * before writing them, chunk after chunk. host/planning/kernels/microarena.py's PAIR_CHUNK. */
enum { MAK_PAIR_CHUNK = 16 };

/* A need meaning that no read follows a write: every offset is safe. */
#define MAK_ANY_OFFSET INT64_MIN

/* The smallest input-minus-output offset (bytes, int8) at which rows2 may take rows r, r + 1
 * for r = 0, 2, 4, ... of `rows` rows (input rows in_row bytes apart, output rows out_row):
 * a 1x1 stride-1 convolution's pixels, FULLY_CONNECTED's batches. Exact. */
int64_t mak_rows_pairs_need(int64_t rows, int64_t in_row, int64_t out_row);
/* The same for neighbouring output pixels whose windows take the same taps (an ungrouped
 * convolution of cin input and cout output channels): an upper bound, every pixel counted as
 * the first of a pair. */
int64_t mak_window_pairs_need(const mak_window_geom *g, int32_t cin, int32_t cout);

/* The Helium paths' (fast_mve_s8.c) blocks: pixels of a 1x1 stride-1 convolution read in place
 * at once (its PIXELS), their channels read for, then written, at a time; depthwise lanes (its
 * groups of eight). host/planning/kernels/microarena.py's MVE_ROWS, MVE_CHANNELS, MVE_DW_LANES. */
enum { MAK_MVE_ROWS = 4, MAK_MVE_CHANNELS = 4, MAK_MVE_DW_LANES = 8 };
/* The smallest safe offset of those rows (exact) and of the depthwise pixel pairs (side by side,
 * or one above the other: `columns`; an upper bound). */
int64_t mak_mve_rows_need(int64_t rows, int64_t in_row, int64_t out_row);
int64_t mak_mve_dw_pairs_need(const mak_window_geom *g, int32_t cin, int32_t cout, bool columns);

/* Whether tensors a and b share no byte. */
bool mak_disjoint(const ma_tensor *a, const ma_tensor *b);
/* Whether a depthwise loop of multiplier 1 may take blocks narrower than MAK_DW_BLOCK (read
 * over the window, then written) on an overlap the core accepted for MAK_DW_BLOCK: the tensors
 * share no byte, or the input does not start below the output. Narrower blocks add a need
 * only at the first pixel, where it is at most 0 (docs/overlap.md). */
bool mak_dw_blocks_fit(const ma_tensor *in, const ma_tensor *out);
/* Whether the pairs above may run: the tensors share no byte, or the input starts at least
 * the need above the output. */
bool mak_rows_pairs_fit(const ma_tensor *in, const ma_tensor *out, int64_t rows, int64_t in_row,
                        int64_t out_row);
bool mak_window_pairs_fit(const ma_tensor *in, const ma_tensor *out, const mak_window_geom *g,
                          int32_t cin, int32_t cout);

bool mak_mve_rows_fit(const ma_tensor *in, const ma_tensor *out, int64_t rows, int64_t in_row,
                      int64_t out_row);
bool mak_mve_dw_pairs_fit(const ma_tensor *in, const ma_tensor *out, const mak_window_geom *g,
                          int32_t cin, int32_t cout, bool columns);

#endif
