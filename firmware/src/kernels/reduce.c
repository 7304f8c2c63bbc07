/* Reductions over constant axes: MEAN, SUM (float32, int8, int16), REDUCE_MAX, REDUCE_MIN
 * (float32, int8), REDUCE_ALL (bool; TFLM's two index scratch buffers are not needed).
 *
 * TFLM accumulates into a scratch buffer the size of the output while walking the input
 * once; here each output element is reduced on its own (the reduced axes walked in row-major
 * order, which is the order TFLM adds them in), so no scratch is needed and float sums are
 * identical. Integer MEAN/SUM as TFLM's QuantizedMeanOrSum: an int32 sum (wrapping), minus
 * input zero point times count, requantized with input/output scale; for MEAN the multiplier
 * is divided by the count after shifting it left by min(floor(log2 count), 32,
 * 31 + shift), truncating. MAX/MIN int8 need equal input and output quantization.
 */
#include <float.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

enum { K_MEAN, K_SUM, K_MAX, K_MIN, K_ALL, N_KINDS };
static const char *const NAMES[] = {"MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ALL"};

typedef struct {
  int32_t mult, count, input_zp, output_zp;
  int8_t shift;
  uint8_t kind, type;
  uint8_t axis_mask; /* bit d set: input dimension d is reduced */
} reduce_data;

/* Resolves the constant axis tensor into a mask (negative axes count from the end;
 * duplicates are ignored, as TFLM's ResolveAxis does). */
static ma_status resolve_axes(struct ma_context *ctx, const char *op, const ma_tensor *in,
                              const ma_tensor *axis, uint8_t *mask) {
  if (axis->type != MA_INT32)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: axis type %s, expected INT32", op,
                   mak_type_name(axis->type));
  const int32_t n = ma_num_elements(axis);
  *mask = 0;
  if (n > 0 && !axis->is_const) /* (an empty axis list has no data to be constant) */
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: axis must be a constant tensor", op);
  for (int32_t i = 0; i < n; ++i) {
    int32_t a;
    memcpy(&a, (const uint8_t *)axis->data + 4 * (size_t)i, sizeof a);
    if (a < 0) a += in->ndims;
    if (a < 0 || a >= in->ndims)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: axis %d out of range for rank %d", op, (int)a,
                     (int)in->ndims);
    *mask |= (uint8_t)(1u << a);
  }
  return MA_OK;
}

static ma_status reduce_prepare(struct ma_context *ctx, ma_node *node) {
  const int kind = node->variant;
  const char *op = NAMES[kind];
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const bool minmax = kind == K_MAX || kind == K_MIN;
  if (kind == K_ALL)
    st = mak_check_input_type(ctx, op, in, MAK_TYPE_BIT(MA_BOOL), "bool");
  else if (minmax)
    st = mak_check_input_type(ctx, op, in, MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8),
                              "float32, int8");
  else
    st = mak_check_input_type(
        ctx, op, in, MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT16),
        "float32, int8, int16");
  if (st != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  reduce_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->kind = (uint8_t)kind;
  d->type = in->type;
  if ((st = resolve_axes(ctx, op, in, node->inputs[1], &d->axis_mask)) != MA_OK) return st;
  int64_t count = 1, kept = 1;
  for (int32_t i = 0; i < in->ndims; ++i) {
    if (d->axis_mask & (1u << i)) count *= in->dims[i];
    else kept *= in->dims[i];
  }
  if (ma_num_elements(out) != kept)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output has %d elements, the reduction gives %d", op,
                   (int)ma_num_elements(out), (int)kept);
  d->count = (int32_t)count;
  if (in->type == MA_FLOAT32 || in->type == MA_BOOL) return MA_OK;

  const float si = mak_scale(in, 0), so = mak_scale(out, 0);
  if (!(si > 0.0f) || !(so > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %s tensors need quantization scales", op,
                   mak_type_name(in->type));
  d->input_zp = mak_zero_point(in, 0);
  d->output_zp = mak_zero_point(out, 0);
  if (minmax) {
    if (si != so || d->input_zp != d->output_zp)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                     "%s: int8 input and output need the same scale and zero point", op);
    return MA_OK;
  }
  int shift;
  mak_quantize_multiplier((double)si / (double)so, &d->mult, &shift);
  if (kind == K_MEAN && count > 0) {
    /* Fold 1 / count into the multiplier, as TFLM does. */
    int s = 0;
    while (s < 62 && (count >> (s + 1)) != 0) ++s; /* floor(log2(count)) */
    if (s > 32) s = 32;
    if (s > 31 + shift) s = 31 + shift;
    d->mult = (int32_t)((int64_t)((uint64_t)(int64_t)d->mult << s) / count);
    shift -= s;
  }
  d->shift = (int8_t)shift;
  return MA_OK;
}

/* Walks the output in order; for each output element, visits its reduced input elements in
 * row-major order. Shapes are read from the tensors at each call (not kept in op data). */
typedef struct {
  int32_t n_outer, n_inner;
  int32_t outer_dims[MA_MAX_DIMS], outer_stride[MA_MAX_DIMS];
  int32_t inner_dims[MA_MAX_DIMS], inner_stride[MA_MAX_DIMS];
} reduce_walk;

static void walk_init(const reduce_data *d, const ma_tensor *in, reduce_walk *w) {
  int32_t stride = 1;
  int32_t strides[MA_MAX_DIMS];
  for (int32_t i = in->ndims - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= in->dims[i];
  }
  w->n_outer = w->n_inner = 0;
  for (int32_t i = 0; i < in->ndims; ++i) {
    if (d->axis_mask & (1u << i)) {
      w->inner_dims[w->n_inner] = in->dims[i];
      w->inner_stride[w->n_inner++] = strides[i];
    } else {
      w->outer_dims[w->n_outer] = in->dims[i];
      w->outer_stride[w->n_outer++] = strides[i];
    }
  }
}

/* Advances an odometer over dims; returns the change of the flat offset. */
static int32_t odometer_next(int32_t n, const int32_t *dims, const int32_t *stride,
                             int32_t *idx) {
  int32_t delta = 0;
  for (int32_t k = n - 1; k >= 0; --k) {
    delta += stride[k];
    if (++idx[k] < dims[k]) return delta;
    delta -= stride[k] * dims[k];
    idx[k] = 0;
  }
  return delta;
}

/* REDUCE(T, ACC, INIT, STEP, FINISH): for each output o, acc = INIT; acc = STEP(acc, x) over
 * its reduced inputs; y[o] = FINISH(acc). */
#define REDUCE(T, TOUT, ACC, INIT, STEP, FINISH)                                       \
  do {                                                                                 \
    const T *x = in->data;                                                             \
    TOUT *y = out->data;                                                               \
    int32_t oi[MA_MAX_DIMS] = {0}, base = 0;                                           \
    for (int32_t o = 0; o < n_out; ++o) {                                              \
      ACC acc = INIT;                                                                  \
      int32_t ii[MA_MAX_DIMS] = {0}, off = base;                                       \
      for (int32_t k = 0; k < d->count; ++k) {                                         \
        const T v = x[off];                                                            \
        acc = STEP;                                                                    \
        off += odometer_next(w.n_inner, w.inner_dims, w.inner_stride, ii);             \
      }                                                                                \
      y[o] = FINISH;                                                                   \
      base += odometer_next(w.n_outer, w.outer_dims, w.outer_stride, oi);              \
    }                                                                                  \
  } while (0)

static int32_t requant(const reduce_data *d, int32_t sum, int32_t lo, int32_t hi) {
  /* sum - zp * count in int64, truncated to int32 as TFLM's int32 accumulator type does. */
  const int32_t shifted = (int32_t)(uint32_t)((int64_t)sum - (int64_t)d->input_zp * d->count);
  return mak_clamp(mak_add_sat(mak_mbqm(shifted, d->mult, d->shift), d->output_zp), lo, hi);
}

static ma_status reduce_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const reduce_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t n_out = ma_num_elements(out);
  reduce_walk w;
  walk_init(d, in, &w);
  const float fcount = (float)d->count;
  const bool empty = d->count == 0;
  switch (d->type * N_KINDS + d->kind) {
    case MA_FLOAT32 * N_KINDS + K_MEAN:
      REDUCE(float, float, float, 0.0f, acc + v, empty ? 0.0f : acc / fcount);
      break;
    case MA_FLOAT32 * N_KINDS + K_SUM: REDUCE(float, float, float, 0.0f, acc + v, acc); break;
    case MA_FLOAT32 * N_KINDS + K_MAX:
      REDUCE(float, float, float, -FLT_MAX, v > acc ? v : acc, acc);
      break;
    case MA_FLOAT32 * N_KINDS + K_MIN:
      REDUCE(float, float, float, FLT_MAX, v < acc ? v : acc, acc);
      break;
    case MA_INT8 * N_KINDS + K_MEAN:
    case MA_INT8 * N_KINDS + K_SUM:
      REDUCE(int8_t, int8_t, int32_t, 0, mak_wrap_add(acc, v),
             empty ? 0 : (int8_t)requant(d, acc, INT8_MIN, INT8_MAX));
      break;
    case MA_INT16 * N_KINDS + K_MEAN:
    case MA_INT16 * N_KINDS + K_SUM:
      REDUCE(int16_t, int16_t, int32_t, 0, mak_wrap_add(acc, v),
             empty ? 0 : (int16_t)requant(d, acc, INT16_MIN, INT16_MAX));
      break;
    case MA_INT8 * N_KINDS + K_MAX:
      REDUCE(int8_t, int8_t, int8_t, INT8_MIN, v > acc ? v : acc, acc);
      break;
    case MA_INT8 * N_KINDS + K_MIN:
      REDUCE(int8_t, int8_t, int8_t, INT8_MAX, v < acc ? v : acc, acc);
      break;
    default: /* REDUCE_ALL: bytes read as uint8 (any non-zero is true), written 0 or 1 */
      REDUCE(uint8_t, uint8_t, uint8_t, 1, (uint8_t)(acc && v != 0), acc);
      break;
  }
  return MA_OK;
}

const ma_kernel mak_mean = {reduce_prepare, reduce_eval, K_MEAN};
const ma_kernel mak_sum = {reduce_prepare, reduce_eval, K_SUM};
const ma_kernel mak_reduce_max = {reduce_prepare, reduce_eval, K_MAX};
const ma_kernel mak_reduce_min = {reduce_prepare, reduce_eval, K_MIN};
const ma_kernel mak_reduce_all = {reduce_prepare, reduce_eval, K_ALL};
