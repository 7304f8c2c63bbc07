/* Overlap rules of this folder's kernels: how far above its output an operator's input must
 * start so that the kernel never reads an input byte it has already overwritten. The core's
 * planner accepts an offline plan's overlap only where a rule here allows it. The same rules,
 * their derivation and their proofs (byte-level simulation, runs) are in
 * host/planning/overlap.py and docs/overlap.md; operators without a rule never overlap.
 *
 * Every kernel below writes output elements in increasing index P. Before element P's reads,
 * elements 0..P-1 are written, so a read of input element q is safe iff
 *   input_offset - output_offset >= P * out_bytes - q * in_bytes,
 * and the rule is the largest such value over the kernel's reads. */
#include "kernel_util.h"
#include "kernels.h"
#include "ma_ops.h"
#include "overlap.h"

typedef struct {
  int64_t worst;
  int any; /* 0: no read follows a write, every offset is safe */
  int64_t in_bytes, out_bytes;
} bound;

static void need(bound *b, int64_t p, int64_t q) {
  if (p < 1) return; /* nothing written yet */
  const int64_t v = p * b->out_bytes - q * b->in_bytes;
  if (!b->any || v > b->worst) b->worst = v;
  b->any = 1;
}

/* The lowest image coordinate a window reads, or -1 when the window misses the image. */
static int32_t first_tap(int32_t origin, int32_t dil, int32_t taps, int32_t size) {
  for (int32_t f = 0; f < taps; ++f) {
    const int32_t c = origin + dil * f;
    if (c >= 0 && c < size) return c;
  }
  return -1;
}

enum { CONV, DEPTHWISE, POOL };

/* CONV_2D: each output channel re-reads the window's pixels, all channels, so the last
 * channel against the window's first byte decides. DEPTHWISE_CONV_2D (conv.c): a block of
 * MAK_DW_BLOCK output channels reads its input channels of the window, then is written.
 * Pooling: each channel reads its channel of the window, then is written. */
static ma_status window_rule(struct ma_context *ctx, const ma_node *node, int kind, bound *b) {
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const ma_options *o = &node->options;
  const char *op = kind == POOL ? "pool" : "conv";
  int32_t kh, kw, dil_w = 1, dil_h = 1;
  if (kind == POOL) {
    kw = ma_opt_i32(o, 3, 0);
    kh = ma_opt_i32(o, 4, 0);
  } else {
    kh = node->inputs[1]->dims[1];
    kw = node->inputs[1]->dims[2];
    dil_w = ma_opt_i32(o, kind == CONV ? 4 : 5, 1);
    dil_h = ma_opt_i32(o, kind == CONV ? 5 : 6, 1);
  }
  const int32_t padding = ma_opt_i32(o, 0, 0);
  const int32_t stride_w = ma_opt_i32(o, 1, 0), stride_h = ma_opt_i32(o, 2, 0);
  int16_t pad_h, pad_w;
  ma_status st = mak_conv_geometry(ctx, op, padding, in->dims[1], kh, stride_h, dil_h,
                                   out->dims[1], &pad_h);
  if (st == MA_OK)
    st = mak_conv_geometry(ctx, op, padding, in->dims[2], kw, stride_w, dil_w, out->dims[2],
                           &pad_w);
  if (st != MA_OK) return st;
  const int64_t ih = in->dims[1], iw = in->dims[2], ic = in->dims[3];
  const int64_t oh = out->dims[1], ow = out->dims[2], oc = out->dims[3];
  for (int64_t n = 0; n < out->dims[0]; ++n) {
    for (int32_t oy = 0; oy < oh; ++oy) {
      const int32_t iy = first_tap(oy * stride_h - pad_h, dil_h, kh, (int32_t)ih);
      for (int32_t ox = 0; ox < ow; ++ox) {
        const int32_t ix = first_tap(ox * stride_w - pad_w, dil_w, kw, (int32_t)iw);
        if (iy < 0 || ix < 0) continue; /* reads nothing */
        const int64_t pix = (n * oh + oy) * ow + ox, in_pix = (n * ih + iy) * iw + ix;
        if (kind == CONV) {
          need(b, pix * oc + oc - 1, in_pix * ic);
        } else {
          const int64_t step = kind == DEPTHWISE ? MAK_DW_BLOCK : 1, mult = oc / ic;
          for (int64_t c0 = 0; c0 < oc; c0 += step) need(b, pix * oc + c0, in_pix * ic + c0 / mult);
        }
      }
    }
  }
  return MA_OK;
}

static int same_shape(const ma_tensor *a, const ma_tensor *b) {
  if (a->ndims != b->ndims) return 0;
  for (int32_t i = 0; i < a->ndims; ++i)
    if (a->dims[i] != b->dims[i]) return 0;
  return 1;
}

int mak_overlap_rule(struct ma_context *ctx, const ma_node *node, int32_t slot, int64_t *min_delta,
                     int *any_offset) {
  if (node->n_outputs != 1 || slot < 0 || slot >= node->n_inputs || node->inputs[slot] == NULL)
    return 0;
  const ma_tensor *in = node->inputs[slot], *out = node->outputs[0];
  bound b = {0, 0, (int64_t)ma_type_size(in->type), (int64_t)ma_type_size(out->type)};
  /* int16 and other types may be assumed not to alias float: only byte and float data. */
  if ((b.in_bytes != 1 && b.in_bytes != 4) || (b.out_bytes != 1 && b.out_bytes != 4)) return 0;
  if (in->is_const) return 0;
  switch (node->builtin_code) {
    case MA_OP_CONV_2D:
    case MA_OP_DEPTHWISE_CONV_2D:
    case MA_OP_AVERAGE_POOL_2D:
    case MA_OP_MAX_POOL_2D: {
      if (slot != 0 || in->ndims != 4 || out->ndims != 4 || in->dims[0] != out->dims[0] ||
          in->dims[3] <= 0)
        return 0;
      int kind = POOL;
      if (node->builtin_code == MA_OP_CONV_2D) {
        if (node->inputs[1] == NULL || node->inputs[1]->dims[3] != in->dims[3]) return 0;
        kind = CONV; /* grouped convolutions have no rule */
      } else if (node->builtin_code == MA_OP_DEPTHWISE_CONV_2D) {
        if (node->inputs[1] == NULL || out->dims[3] % in->dims[3]) return 0;
        kind = DEPTHWISE;
      } else if (out->dims[3] != in->dims[3]) {
        return 0;
      }
      if (window_rule(ctx, node, kind, &b) != MA_OK) return 0;
      break;
    }
    case MA_OP_FULLY_CONNECTED: {
      const ma_tensor *w = node->inputs[1];
      if (slot != 0 || w == NULL || w->ndims != 2 || w->dims[0] <= 0 || w->dims[1] <= 0) return 0;
      const int64_t units = w->dims[0], depth = w->dims[1];
      const int64_t batches = ma_num_elements(in) / depth;
      /* Batch n: every unit re-reads the batch's input row. */
      for (int64_t n = 0; n < batches; ++n) need(&b, n * units + units - 1, n * depth);
      break;
    }
    case MA_OP_ADD:
    case MA_OP_MUL:
    case MA_OP_RELU:
    case MA_OP_LEAKY_RELU:
    case MA_OP_LOGISTIC:
    case MA_OP_QUANTIZE:
    case MA_OP_DEQUANTIZE: {
      /* Element by element, inputs of the output's shape only (no broadcast). */
      if (!same_shape(in, out)) return 0;
      const int64_t n = ma_num_elements(out), p = b.out_bytes > b.in_bytes ? n - 1 : 1;
      if (n >= 2) need(&b, p, p);
      break;
    }
    default:
      return 0;
  }
  *any_offset = !b.any;
  *min_delta = b.worst;
  return 1;
}

/* CONCATENATION copies input after input with mak_move, a memmove (shape_ops.c): one call per
 * input when the dimensions before the axis are all 1, so an input placed at its destination
 * is moved onto itself and stays as it is. Anywhere else, an earlier input's copy could overwrite it. */
int mak_copied_in_place(const ma_node *node, int32_t slot, int64_t *at) {
  if (node->builtin_code != MA_OP_CONCATENATION || node->n_outputs != 1 || slot < 0 ||
      slot >= node->n_inputs)
    return 0;
  const ma_tensor *out = node->outputs[0];
  int32_t axis = ma_opt_i32(&node->options, 0, 0);
  if (axis < 0) axis += out->ndims;
  if (axis < 0 || axis >= out->ndims || mak_dims_product(out, 0, axis) != 1) return 0;
  int64_t offset = 0;
  for (int32_t i = 0; i < slot; ++i) {
    const ma_tensor *in = node->inputs[i];
    if (in == NULL) return 0;
    offset += (int64_t)ma_num_elements(in) * (int64_t)ma_type_size(in->type);
  }
  *at = offset;
  return 1;
}

/* ---------------------------------------------- the fast int8 paths' pairs (fast_s8.c) */

/* rows2 (fast_s8.c) computes two output pixels p and p + 1 (or rows) at once: for each chunk
 * of MAK_PAIR_CHUNK channels it reads both windows whole, then writes those channels of both
 * pixels; an odd last channel is read for after every even one is written. So its last reads,
 * of the first pixel's window from its lowest byte, come after pixels 0..p-1 and the first
 * `w` channels of p and p + 1 are written (w = pair_written(cout)): P = (p + 1) * cout + w,
 * or P = p * cout where w = 0 (the pair reads everything before its first write). The second
 * pixel's window starts higher and is read no later, so p's first byte decides. */
static int64_t pair_written(int64_t cout) {
  const int64_t even = cout & ~(int64_t)1;
  if (cout & 1) return even;
  return even > 0 ? (even - 1) / MAK_PAIR_CHUNK * MAK_PAIR_CHUNK : 0;
}

/* Output elements written when pair p's last reads start (the P above, plus p * cout). */
static int64_t pair_extra(int64_t cout) {
  const int64_t w = pair_written(cout);
  return w > 0 ? cout + w : 0;
}

/* Rows computed `group` at a time, groups from row 0 on: each group's last reads start at its
 * first row's input (q = g * in_row) once its rows' first w channels are written, or before any
 * of its writes where w = 0. `partial`: a last group of fewer rows runs so too (else in order).
 * P - q is linear in the group's start: the first two and the last full group decide. */
static int64_t rows_need(int64_t rows, int64_t in_row, int64_t out_row, int64_t group, int64_t w,
                         bool partial) {
  bound b = {0, 0, 1, 1};
  const int64_t full = rows / group * group;
  const int64_t starts[3] = {0, group, full - group};
  for (int i = 0; i < 3; ++i) {
    const int64_t g = starts[i];
    if (g >= 0 && g + group <= full)
      need(&b, g * out_row + (w > 0 ? (group - 1) * out_row + w : 0), g * in_row);
  }
  if (partial && full < rows)
    need(&b, full * out_row + (w > 0 ? (rows - full - 1) * out_row + w : 0), full * in_row);
  return b.any ? b.worst : MAK_ANY_OFFSET;
}

int64_t mak_rows_pairs_need(int64_t rows, int64_t in_row, int64_t out_row) {
  return rows_need(rows, in_row, out_row, 2, pair_written(out_row), false);
}

/* max over one axis of o * out_step - first_tap(o) * in_step (INT64_MIN: no window reads). */
static int64_t axis_worst(int32_t n_out, int32_t stride, int32_t pad, int32_t dil, int32_t taps,
                          int32_t size, int64_t out_step, int64_t in_step) {
  int64_t worst = INT64_MIN;
  for (int32_t o = 0; o < n_out; ++o) {
    const int32_t i = first_tap(o * stride - pad, dil, taps, size);
    if (i >= 0 && o * out_step - i * in_step > worst) worst = o * out_step - i * in_step;
  }
  return worst;
}

/* P - q for pixel (n, oy, ox), P = its index times cout plus `extra`, is a sum of a term in n,
 * one in oy and one in ox: the maximum over every pixel is the sum of the three maxima. */
static int64_t every_pixel_need(const mak_window_geom *g, int32_t cin, int32_t cout,
                                int64_t extra) {
  const int64_t wy = axis_worst(g->out_h, g->stride_h, g->pad_h, g->dil_h, g->kh, g->in_h,
                                (int64_t)g->out_w * cout, (int64_t)g->in_w * cin);
  const int64_t wx =
      axis_worst(g->out_w, g->stride_w, g->pad_w, g->dil_w, g->kw, g->in_w, cout, cin);
  if (wy == INT64_MIN || wx == INT64_MIN || g->batches <= 0) return MAK_ANY_OFFSET;
  const int64_t per_batch = (int64_t)g->out_h * g->out_w * cout - (int64_t)g->in_h * g->in_w * cin;
  const int64_t wn = per_batch > 0 ? (g->batches - 1) * per_batch : 0;
  return wn + wy + wx + extra;
}

int64_t mak_window_pairs_need(const mak_window_geom *g, int32_t cin, int32_t cout) {
  return every_pixel_need(g, cin, cout, pair_extra(cout));
}

/* fast_mve_s8.c (Helium): a 1x1 stride-1 convolution read in place takes MAK_MVE_ROWS pixels
 * at a time (pixels_times_rows), MAK_MVE_CHANNELS channels of all of them read for, then
 * written; the last group may hold fewer pixels. */
int64_t mak_mve_rows_need(int64_t rows, int64_t in_row, int64_t out_row) {
  const int64_t w = out_row > 0 ? (out_row - 1) / MAK_MVE_CHANNELS * MAK_MVE_CHANNELS : 0;
  return rows_need(rows, in_row, out_row, MAK_MVE_ROWS, w, true);
}

/* Its depthwise pairs (dw_pair): for each group of MAK_MVE_DW_LANES channels c, both pixels'
 * taps of input channels c / mult on, then the group of both written. With the second pixel
 * beside the first, group c's reads follow pixels 0..p-1 and channels 0..c-1 of both: P - q
 * = p * cout - first * cin + (c > 0 ? cout + c - c / mult : 0), largest at the last group.
 * One above the other (dw_columns, maps narrower than tall), the row below is written as far
 * as the pixel before: at most ow * cout more, c - c / mult on top. Every pixel counted as a
 * pair's first: an upper bound. */
int64_t mak_mve_dw_pairs_need(const mak_window_geom *g, int32_t cin, int32_t cout, bool columns) {
  const int64_t last = cout - MAK_MVE_DW_LANES, mult = cin > 0 ? cout / cin : 1;
  const int64_t within = last > 0 ? last - last / mult : 0;
  const int64_t extra = columns ? (int64_t)g->out_w * cout + within : last > 0 ? cout + within : 0;
  return every_pixel_need(g, cin, cout, extra);
}

bool mak_disjoint(const ma_tensor *a, const ma_tensor *b) {
  const uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
  const uintptr_t a_bytes = (uintptr_t)ma_num_elements(a) * ma_type_size(a->type);
  return a0 + a_bytes <= b0 || b0 + (uintptr_t)ma_num_elements(b) * ma_type_size(b->type) <= a0;
}

static bool fits(const ma_tensor *in, const ma_tensor *out, int64_t need) {
  const int64_t delta = (int64_t)((intptr_t)in->data - (intptr_t)out->data);
  return need == MAK_ANY_OFFSET || delta >= need;
}

bool mak_dw_blocks_fit(const ma_tensor *in, const ma_tensor *out) {
  return mak_disjoint(in, out) || fits(in, out, 0);
}

bool mak_rows_pairs_fit(const ma_tensor *in, const ma_tensor *out, int64_t rows, int64_t in_row,
                        int64_t out_row) {
  return mak_disjoint(in, out) || fits(in, out, mak_rows_pairs_need(rows, in_row, out_row));
}

bool mak_window_pairs_fit(const ma_tensor *in, const ma_tensor *out, const mak_window_geom *g,
                          int32_t cin, int32_t cout) {
  return mak_disjoint(in, out) || fits(in, out, mak_window_pairs_need(g, cin, cout));
}

bool mak_mve_rows_fit(const ma_tensor *in, const ma_tensor *out, int64_t rows, int64_t in_row,
                      int64_t out_row) {
  return mak_disjoint(in, out) || fits(in, out, mak_mve_rows_need(rows, in_row, out_row));
}

bool mak_mve_dw_pairs_fit(const ma_tensor *in, const ma_tensor *out, const mak_window_geom *g,
                          int32_t cin, int32_t cout, bool columns) {
  return mak_disjoint(in, out) || fits(in, out, mak_mve_dw_pairs_need(g, cin, cout, columns));
}
