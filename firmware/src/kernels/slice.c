/* STRIDED_SLICE, SLICE and REVERSE_V2: copy a (strided) box of the input, element by element;
 * DYNAMIC_UPDATE_SLICE: write a box of the output.
 *
 * Indices are computed as TFLM's reference does: negative begin/end count from the end,
 * clamped to the axis ([0, n] for positive strides, [-1, n - 1] for negative ones), masks
 * override them, a shrunk axis takes one element. Both read their index tensors at eval
 * (they are constants, checked at prepare), so they keep no op data. REVERSE_V2 is the box
 * that walks the reversed axes backwards.
 */
#include "kernel_util.h"
#include "kernels.h"

enum { SS_MAX_DIMS = 4 }; /* TFLM's STRIDED_SLICE limit; SLICE allows 5 */

/* StridedSliceOptions slots. */
enum { SS_BEGIN_MASK, SS_END_MASK, SS_ELLIPSIS_MASK, SS_NEW_AXIS_MASK, SS_SHRINK_MASK, SS_OFFSET };

/* The box to copy: first index, one-past-last index and step per input axis. */
typedef struct {
  int32_t n;
  int32_t start[MA_MAX_DIMS], stop[MA_MAX_DIMS], step[MA_MAX_DIMS];
} box;

static int32_t clamp_axis(int64_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : (v > hi ? hi : (int32_t)v);
}

static int32_t steps(int32_t start, int32_t stop, int32_t step) {
  const int64_t span = step > 0 ? (int64_t)stop - start : (int64_t)start - stop;
  const int64_t s = step > 0 ? step : -(int64_t)step;
  return span <= 0 ? 0 : (int32_t)((span + s - 1) / s);
}

/* Copies the box of `in` into `out` (in order), for any element size. */
static void copy_box(const box *b, const ma_tensor *in, ma_tensor *out) {
  const size_t esize = ma_type_size(in->type);
  int32_t stride[MA_MAX_DIMS];
  int64_t idx[MA_MAX_DIMS]; /* 64-bit: a huge stride steps past the axis without overflow */
  int64_t s = 1;
  for (int32_t d = b->n - 1; d >= 0; --d) {
    stride[d] = (int32_t)s;
    s *= in->dims[d];
    idx[d] = b->start[d];
    if (steps(b->start[d], b->stop[d], b->step[d]) == 0) return; /* empty */
  }
  const uint8_t *src = in->data;
  uint8_t *dst = out->data;
  for (;;) {
    int64_t off = 0;
    for (int32_t d = 0; d < b->n; ++d) off += idx[d] * stride[d];
    mak_copy_elem(dst, src + (size_t)off * esize, esize);
    dst += esize;
    int32_t d = b->n - 1;
    for (; d >= 0; --d) {
      idx[d] += b->step[d];
      if (b->step[d] > 0 ? idx[d] < b->stop[d] : idx[d] > b->stop[d]) break;
      idx[d] = b->start[d];
    }
    if (d < 0) return;
  }
}

/* ------------------------------------------------------------------ STRIDED_SLICE */

static const char SS[] = "STRIDED_SLICE";

/* The box from the constant begin/end/strides tensors, and checks it gives out's shape. */
static ma_status strided_box(struct ma_context *ctx, const ma_node *node, box *b) {
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const ma_tensor *begin = node->inputs[1], *end = node->inputs[2], *strides = node->inputs[3];
  const uint32_t begin_mask = (uint32_t)ma_opt_i32(&node->options, SS_BEGIN_MASK, 0);
  const uint32_t end_mask = (uint32_t)ma_opt_i32(&node->options, SS_END_MASK, 0);
  const uint32_t shrink = (uint32_t)ma_opt_i32(&node->options, SS_SHRINK_MASK, 0);
  b->n = in->ndims;
  int32_t out_rank = 0;
  for (int32_t d = 0; d < in->ndims; ++d) {
    const int32_t n = in->dims[d];
    const int32_t step = (int32_t)mak_index_at(strides, d);
    if (step == 0) return ma_fail(ctx, MA_ERR_MODEL, "%s: stride of axis %d is 0", SS, (int)d);
    int64_t start = mak_index_at(begin, d), stop = mak_index_at(end, d);
    if (start < 0) start += n;
    start = step > 0 ? clamp_axis(start, 0, n) : clamp_axis(start, -1, n - 1);
    if (begin_mask & (1u << d)) start = step > 0 ? 0 : n - 1;
    if (shrink & (1u << d)) {
      /* TFLM writes nothing for an out-of-range shrunk index (its output stays unset). */
      if (start < 0 || start >= n)
        return ma_fail(ctx, MA_ERR_MODEL, "%s: shrunk axis %d has index %d outside [0, %d)",
                       SS, (int)d, (int)start, (int)n);
      stop = start + 1;
    } else {
      if (stop < 0) stop += n;
      stop = step > 0 ? clamp_axis(stop, 0, n) : clamp_axis(stop, -1, n - 1);
      if (end_mask & (1u << d)) stop = step > 0 ? n : -1;
    }
    b->start[d] = (int32_t)start;
    b->stop[d] = (int32_t)stop;
    b->step[d] = step;
    if (shrink & (1u << d)) continue;
    const int32_t len = steps(b->start[d], b->stop[d], step);
    if (out_rank >= out->ndims || out->dims[out_rank] != len)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: output shape does not match the slice at axis %d",
                     SS, (int)d);
    ++out_rank;
  }
  if (out_rank != out->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output rank %d, the slice gives %d", SS,
                   (int)out->ndims, (int)out_rank);
  return MA_OK;
}

static ma_status strided_slice_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, SS, 4, 4, 4, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT16) | MAK_TYPE_BIT(MA_INT32) | MAK_TYPE_BIT(MA_BOOL);
  if ((st = mak_check_input_type(ctx, SS, in, types, "float32, int8, int16, int32, bool")) != MA_OK ||
      (st = mak_check_type(ctx, SS, "output", out, in->type)) != MA_OK)
    return st;
  if (in->ndims > SS_MAX_DIMS)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input rank %d above 4 (as TFLM)", SS,
                   (int)in->ndims);
  /* TFLM ignores these three options, so a model using them would compute something else
   * than TensorFlow meant: refuse it instead. */
  if (ma_opt_i32(&node->options, SS_ELLIPSIS_MASK, 0) != 0 ||
      ma_opt_i32(&node->options, SS_NEW_AXIS_MASK, 0) != 0 ||
      ma_opt_i32(&node->options, SS_OFFSET, 0) != 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: ellipsis_mask, new_axis_mask and offset are not supported (TFLM "
                   "ignores them)", SS);
  static const char *const what[] = {"begin", "end", "strides"};
  for (int i = 1; i <= 3; ++i) {
    const ma_tensor *t = node->inputs[i];
    if ((st = mak_check_const(ctx, SS, what[i - 1], t)) != MA_OK ||
        (st = mak_check_type(ctx, SS, what[i - 1], t, MA_INT32)) != MA_OK)
      return st;
    if (t->ndims != 1 || t->dims[0] != in->ndims)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: %s must have %d values", SS, what[i - 1],
                     (int)in->ndims);
  }
  box b;
  return strided_box(ctx, node, &b);
}

static ma_status strided_slice_eval(struct ma_context *ctx, ma_node *node) {
  box b;
  const ma_status st = strided_box(ctx, node, &b);
  if (st != MA_OK) return st;
  copy_box(&b, node->inputs[0], node->outputs[0]);
  return MA_OK;
}

/* ------------------------------------------------------------------ SLICE */

static const char SL[] = "SLICE";

/* The box from begin and size (size -1: to the end); checks it fits and gives out's shape. */
static ma_status slice_box(struct ma_context *ctx, const ma_node *node, ma_status fail, box *b) {
  const ma_tensor *in = node->inputs[0], *begin = node->inputs[1], *size = node->inputs[2];
  const ma_tensor *out = node->outputs[0];
  b->n = in->ndims;
  for (int32_t d = 0; d < in->ndims; ++d) {
    const int64_t start = mak_index_at(begin, d), len = mak_index_at(size, d);
    const int64_t stop = len == -1 ? in->dims[d] : start + len;
    if (start < 0 || start > in->dims[d] || stop < start || stop > in->dims[d] ||
        out->dims[d] != stop - start)
      return ma_fail(ctx, fail, "%s: begin %ld size %ld do not fit axis %d of %d -> %d", SL,
                     (long)start, (long)len, (int)d, (int)in->dims[d], (int)out->dims[d]);
    b->start[d] = (int32_t)start;
    b->stop[d] = (int32_t)stop;
    b->step[d] = 1;
  }
  return MA_OK;
}

static ma_status slice_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, SL, 3, 3, 3, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *begin = node->inputs[1], *size = node->inputs[2];
  const ma_tensor *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT16) | MAK_TYPE_BIT(MA_INT32) | MAK_TYPE_BIT(MA_BOOL);
  if ((st = mak_check_input_type(ctx, SL, in, types, "float32, int8, int16, int32, bool")) != MA_OK ||
      (st = mak_check_type(ctx, SL, "output", out, in->type)) != MA_OK ||
      (st = mak_check_index_type(ctx, SL, "begin", begin)) != MA_OK ||
      (st = mak_check_type(ctx, SL, "size", size, begin->type)) != MA_OK)
    return st;
  if (in->ndims > 5)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input rank %d above 5 (as TFLM)", SL,
                   (int)in->ndims);
  if (out->ndims != in->ndims || begin->ndims != 1 || size->ndims != 1 ||
      begin->dims[0] != in->ndims || size->dims[0] != in->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: begin and size need %d values, output rank %d", SL,
                   (int)in->ndims, (int)in->ndims);
  box b;
  return begin->is_const && size->is_const ? slice_box(ctx, node, MA_ERR_MODEL, &b) : MA_OK;
}

static ma_status slice_eval(struct ma_context *ctx, ma_node *node) {
  box b;
  const ma_status st = slice_box(ctx, node, MA_ERR_KERNEL, &b);
  if (st != MA_OK) return st;
  copy_box(&b, node->inputs[0], node->outputs[0]);
  return MA_OK;
}

/* ------------------------------------------------------------------ REVERSE_V2 */

static const char RV[] = "REVERSE_V2";

/* The box walking the axes listed in node->inputs[1] backwards. TFLM reverses only a run of
 * consecutive axes (it refuses others at eval); so does this kernel, at prepare. */
static ma_status reverse_box(struct ma_context *ctx, const ma_node *node, ma_status fail,
                             box *b) {
  const ma_tensor *in = node->inputs[0], *axes = node->inputs[1];
  const int32_t n = ma_num_elements(axes);
  uint32_t seen = 0;
  int32_t lo = in->ndims, hi = -1;
  for (int32_t i = 0; i < n; ++i) {
    int32_t a = ((const int32_t *)axes->data)[i];
    if (a < 0) a += in->ndims;
    if (a < 0 || a >= in->ndims || (seen & (1u << a)))
      return ma_fail(ctx, fail, "%s: axis %d invalid or repeated for rank %d", RV,
                     (int)((const int32_t *)axes->data)[i], (int)in->ndims);
    seen |= 1u << a;
    lo = a < lo ? a : lo;
    hi = a > hi ? a : hi;
  }
  if (n > 0 && hi - lo + 1 != n)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: non-consecutive axes are not supported (as TFLM)",
                   RV);
  b->n = in->ndims;
  for (int32_t d = 0; d < in->ndims; ++d) {
    const bool rev = (seen >> d) & 1u;
    b->start[d] = rev ? in->dims[d] - 1 : 0;
    b->stop[d] = rev ? -1 : in->dims[d];
    b->step[d] = rev ? -1 : 1;
  }
  return MA_OK;
}

static ma_status reverse_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, RV, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *axes = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_UINT8) | MAK_TYPE_BIT(MA_INT16) | MAK_TYPE_BIT(MA_INT32) | MAK_TYPE_BIT(MA_INT64) | MAK_TYPE_BIT(MA_BOOL);
  if ((st = mak_check_input_type(ctx, RV, in, types, "float32, int8, uint8, int16, int32, int64, bool")) != MA_OK ||
      (st = mak_check_type(ctx, RV, "output", out, in->type)) != MA_OK ||
      (st = mak_check_type(ctx, RV, "axis", axes, MA_INT32)) != MA_OK ||
      (st = mak_check_same_shape(ctx, RV, in, out)) != MA_OK)
    return st;
  if (axes->ndims != 1 || axes->dims[0] > in->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: axis must list at most %d axes", RV, (int)in->ndims);
  box b;
  return axes->is_const ? reverse_box(ctx, node, MA_ERR_MODEL, &b) : MA_OK;
}

static ma_status reverse_eval(struct ma_context *ctx, ma_node *node) {
  box b;
  const ma_status st = reverse_box(ctx, node, MA_ERR_KERNEL, &b);
  if (st != MA_OK) return st;
  copy_box(&b, node->inputs[0], node->outputs[0]);
  return MA_OK;
}

/* ------------------------------------------------------------------ DYNAMIC_UPDATE_SLICE */

static const char DU[] = "DYNAMIC_UPDATE_SLICE";

static ma_status update_slice_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, DU, 3, 3, 3, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *upd = node->inputs[1], *start = node->inputs[2];
  const ma_tensor *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT16) | MAK_TYPE_BIT(MA_INT32);
  if ((st = mak_check_input_type(ctx, DU, in, types, "float32, int8, int16, int32")) != MA_OK ||
      (st = mak_check_type(ctx, DU, "update", upd, in->type)) != MA_OK ||
      (st = mak_check_type(ctx, DU, "output", out, in->type)) != MA_OK ||
      (st = mak_check_index_type(ctx, DU, "start_indices", start)) != MA_OK ||
      (st = mak_check_same_shape(ctx, DU, in, out)) != MA_OK)
    return st;
  bool ok = start->ndims == 1 && start->dims[0] == in->ndims && upd->ndims == in->ndims;
  for (int32_t d = 0; ok && d < in->ndims; ++d) ok = upd->dims[d] <= in->dims[d];
  if (!ok) return ma_fail(ctx, MA_ERR_MODEL, "%s: update does not fit the operand", DU);
  return MA_OK;
}

/* TFLM clamps each start index into [0, operand dim - update dim]. */
static ma_status update_slice_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *in = node->inputs[0], *upd = node->inputs[1], *start = node->inputs[2];
  ma_tensor *out = node->outputs[0];
  const size_t esize = ma_type_size(in->type);
  memmove(out->data, in->data, (size_t)ma_num_elements(in) * esize);
  if (ma_num_elements(upd) == 0) return MA_OK;
  int32_t stride[MA_MAX_DIMS], idx[MA_MAX_DIMS] = {0};
  size_t base = 0;
  int64_t s = 1;
  for (int32_t d = in->ndims - 1; d >= 0; --d) {
    stride[d] = (int32_t)s;
    int64_t first = mak_index_at(start, d);
    const int64_t most = (int64_t)in->dims[d] - upd->dims[d];
    first = first < 0 ? 0 : (first > most ? most : first);
    base += (size_t)first * (size_t)s;
    s *= in->dims[d];
  }
  const int32_t n = ma_num_elements(upd);
  const uint8_t *src = upd->data;
  uint8_t *dst = out->data;
  for (int32_t i = 0; i < n; ++i) {
    size_t off = base;
    for (int32_t d = 0; d < in->ndims; ++d) off += (size_t)idx[d] * (size_t)stride[d];
    mak_copy_elem(dst + off * esize, src + (size_t)i * esize, esize);
    for (int32_t d = in->ndims - 1; d >= 0; --d) {
      if (++idx[d] < upd->dims[d]) break;
      idx[d] = 0;
    }
  }
  return MA_OK;
}

const ma_kernel mak_strided_slice = {strided_slice_prepare, strided_slice_eval, 0};
const ma_kernel mak_slice = {slice_prepare, slice_eval, 0};
const ma_kernel mak_reverse_v2 = {reverse_prepare, reverse_eval, 0};
const ma_kernel mak_dynamic_update_slice = {update_slice_prepare, update_slice_eval, 0};
