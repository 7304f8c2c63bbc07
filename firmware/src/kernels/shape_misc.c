/* SQUEEZE, EXPAND_DIMS, SHAPE, FILL, BROADCAST_TO, BROADCAST_ARGS, ZEROS_LIKE: operators
 * that change or produce shapes, and constant fills. No op data; shapes are checked at prepare against the
 * (static) output shapes, since this runtime does not resize tensors.
 */
#include "kernel_util.h"
#include "kernels.h"

static ma_status same_elements(struct ma_context *ctx, const char *op, const ma_tensor *in,
                               const ma_tensor *out) {
  if (ma_num_elements(in) == ma_num_elements(out)) return MA_OK;
  return ma_fail(ctx, MA_ERR_MODEL, "%s: %d elements in, %d out", op, (int)ma_num_elements(in),
                 (int)ma_num_elements(out));
}

static ma_status copy_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (in->data != out->data)
    mak_move(out->data, in->data, (size_t)ma_num_elements(in) * ma_type_size(in->type));
  return MA_OK;
}

/* ------------------------------------------------------------------ SQUEEZE */

static ma_status squeeze_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "SQUEEZE";
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (ma_type_size(in->type) == 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: type %s", op, mak_type_name(in->type));
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK) return st;
  /* The kept axes, in order, must be the output's shape. */
  bool squeeze[MA_MAX_DIMS] = {false};
  const int32_t n = ma_opt_vec_len(&node->options, 0);
  for (int32_t i = 0; i < n; ++i) {
    int32_t a = ma_opt_vec_i32(&node->options, 0, i);
    if (a < 0) a += in->ndims;
    if (a < 0 || a >= in->ndims || in->dims[a] != 1)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: axis %d is not a dimension of size 1", op,
                     (int)ma_opt_vec_i32(&node->options, 0, i));
    squeeze[a] = true;
  }
  int32_t o = 0;
  for (int32_t d = 0; d < in->ndims; ++d) {
    if (n == 0 ? in->dims[d] == 1 : squeeze[d]) continue;
    if (o >= out->ndims || out->dims[o] != in->dims[d])
      return ma_fail(ctx, MA_ERR_MODEL, "%s: output shape is not the squeezed input's", op);
    ++o;
  }
  if (o != out->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output shape is not the squeezed input's", op);
  return same_elements(ctx, op, in, out);
}

/* ------------------------------------------------------------------ EXPAND_DIMS */

static ma_status expand_dims_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "EXPAND_DIMS";
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *axis_t = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT16);
  if ((st = mak_check_input_type(ctx, op, in, types, "float32, int8, int16")) != MA_OK ||
      (st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK ||
      (st = mak_check_const(ctx, op, "axis", axis_t)) != MA_OK ||
      (st = mak_check_type(ctx, op, "axis", axis_t, MA_INT32)) != MA_OK)
    return st;
  if (axis_t->ndims > 1 || ma_num_elements(axis_t) != 1)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: axis must be one value", op);
  int32_t axis = ((const int32_t *)axis_t->data)[0];
  if (axis < 0) axis += in->ndims + 1;
  bool ok = axis >= 0 && axis <= in->ndims && out->ndims == in->ndims + 1;
  for (int32_t d = 0; ok && d < out->ndims; ++d)
    ok = out->dims[d] == (d < axis ? in->dims[d] : (d == axis ? 1 : in->dims[d - 1]));
  if (!ok)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output shape is not the input's with axis %d", op,
                   (int)((const int32_t *)axis_t->data)[0]);
  return MA_OK;
}

/* ------------------------------------------------------------------ SHAPE */

static ma_status shape_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "SHAPE";
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 0, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if ((st = mak_check_type(ctx, op, "output", out, MA_INT32)) != MA_OK) return st;
  if (in == NULL || out->ndims != 1 || out->dims[0] != in->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output must hold the input's %d dimensions", op,
                   in == NULL ? 0 : (int)in->ndims);
  return MA_OK;
}

static ma_status shape_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *in = node->inputs[0];
  memcpy(node->outputs[0]->data, in->dims, (size_t)in->ndims * sizeof(int32_t));
  return MA_OK;
}

/* ------------------------------------------------------------------ FILL, ZEROS_LIKE */

static void fill(ma_tensor *out, const void *value) {
  const size_t esize = ma_type_size(out->type);
  const int32_t n = ma_num_elements(out);
  uint8_t *dst = out->data;
  for (int32_t i = 0; i < n; ++i) mak_copy_elem(dst + (size_t)i * esize, value, esize);
}

static ma_status fill_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "FILL";
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *dims = node->inputs[0], *value = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT32);
  if ((st = mak_check_input_type(ctx, op, value, types, "float32, int8, int32")) != MA_OK ||
      (st = mak_check_type(ctx, op, "output", out, value->type)) != MA_OK ||
      (st = mak_check_const(ctx, op, "dims", dims)) != MA_OK ||
      (st = mak_check_index_type(ctx, op, "dims", dims)) != MA_OK)
    return st;
  if (value->ndims != 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: value must be a scalar", op);
  bool ok = dims->ndims == 1 && dims->dims[0] == out->ndims;
  for (int32_t d = 0; ok && d < out->ndims; ++d) ok = mak_index_at(dims, d) == out->dims[d];
  if (!ok) return ma_fail(ctx, MA_ERR_MODEL, "%s: dims differ from the output shape", op);
  return MA_OK;
}

static ma_status fill_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  fill(node->outputs[0], node->inputs[1]->data);
  return MA_OK;
}

static ma_status zeros_like_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "ZEROS_LIKE";
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT32) | MAK_TYPE_BIT(MA_INT64);
  if ((st = mak_check_input_type(ctx, op, in, types, "float32, int8, int32, int64")) != MA_OK ||
      (st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK)
    return st;
  return mak_check_same_shape(ctx, op, in, out);
}

static ma_status zeros_like_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *out = node->outputs[0];
  memset(out->data, 0, (size_t)ma_num_elements(out) * ma_type_size(out->type));
  return MA_OK;
}

/* ------------------------------------------------------------------ BROADCAST_TO */

/* Input element strides per output axis (0 where the input is broadcast); fails unless each
 * input dim (right-aligned) is 1 or the output's. */
static ma_status broadcast_strides(struct ma_context *ctx, const ma_tensor *in,
                                   const ma_tensor *out, int32_t *stride) {
  if (in->ndims > out->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "BROADCAST_TO: input rank %d above output rank %d",
                   (int)in->ndims, (int)out->ndims);
  int32_t s = 1;
  for (int32_t d = out->ndims - 1; d >= 0; --d) {
    const int32_t i = d - (out->ndims - in->ndims);
    const int32_t n = i >= 0 ? in->dims[i] : 1;
    if (n != 1 && n != out->dims[d])
      return ma_fail(ctx, MA_ERR_MODEL, "BROADCAST_TO: input dim %d (%d) does not broadcast to %d",
                     (int)i, (int)n, (int)out->dims[d]);
    stride[d] = n == 1 ? 0 : s;
    s *= n;
  }
  return MA_OK;
}

static ma_status broadcast_to_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "BROADCAST_TO";
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *shape = node->inputs[1], *out = node->outputs[0];
  if (ma_type_size(in->type) == 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: type %s", op, mak_type_name(in->type));
  if ((st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK ||
      (st = mak_check_const(ctx, op, "shape", shape)) != MA_OK ||
      (st = mak_check_index_type(ctx, op, "shape", shape)) != MA_OK)
    return st;
  if (out->ndims > 5)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: output rank %d above 5 (as TFLM)", op,
                   (int)out->ndims);
  bool ok = shape->ndims == 1 && shape->dims[0] == out->ndims;
  for (int32_t d = 0; ok && d < out->ndims; ++d) ok = mak_index_at(shape, d) == out->dims[d];
  if (!ok) return ma_fail(ctx, MA_ERR_MODEL, "%s: shape differs from the output shape", op);
  int32_t stride[MA_MAX_DIMS];
  return broadcast_strides(ctx, in, out, stride);
}

static ma_status broadcast_to_eval(struct ma_context *ctx, ma_node *node) {
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  int32_t stride[MA_MAX_DIMS], idx[MA_MAX_DIMS] = {0};
  const ma_status st = broadcast_strides(ctx, in, out, stride);
  if (st != MA_OK) return st;
  const size_t esize = ma_type_size(in->type);
  const int32_t n = ma_num_elements(out);
  const uint8_t *src = in->data;
  uint8_t *dst = out->data;
  size_t off = 0;
  for (int32_t i = 0; i < n; ++i) {
    mak_copy_elem(dst + (size_t)i * esize, src + off * esize, esize);
    for (int32_t d = out->ndims - 1; d >= 0; --d) {
      off += (size_t)stride[d];
      if (++idx[d] < out->dims[d]) break;
      off -= (size_t)stride[d] * (size_t)out->dims[d];
      idx[d] = 0;
    }
  }
  return MA_OK;
}

/* ------------------------------------------------------------------ BROADCAST_ARGS */

static const char BA[] = "BROADCAST_ARGS";

static ma_status broadcast_args_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, BA, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  if ((st = mak_check_index_type(ctx, BA, "shape", a)) != MA_OK ||
      (st = mak_check_type(ctx, BA, "second shape", b, a->type)) != MA_OK ||
      (st = mak_check_type(ctx, BA, "output", out, a->type)) != MA_OK)
    return st;
  if (a->ndims != 1 || b->ndims != 1 || out->ndims != 1)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: shapes and output must be 1-D", BA);
  return MA_OK;
}

/* Right-aligned, a missing dim is 1; a 1 takes the other's dim, else both must agree. */
static ma_status broadcast_args_eval(struct ma_context *ctx, ma_node *node) {
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  const int32_t n = out->dims[0], na = a->dims[0], nb = b->dims[0];
  for (int32_t i = 0; i < n; ++i) { /* i counts from the last dim */
    const int64_t x = i < na ? mak_index_at(a, na - 1 - i) : 1;
    const int64_t y = i < nb ? mak_index_at(b, nb - 1 - i) : 1;
    if (x != y && x != 1 && y != 1)
      return ma_fail(ctx, MA_ERR_KERNEL, "%s: dims %ld and %ld do not broadcast", BA, (long)x,
                     (long)y);
    const int64_t v = x == 1 ? y : x;
    if (out->type == MA_INT64) ((int64_t *)out->data)[n - 1 - i] = v;
    else ((int32_t *)out->data)[n - 1 - i] = (int32_t)v;
  }
  return MA_OK;
}

const ma_kernel mak_squeeze = {squeeze_prepare, copy_eval, 0};
const ma_kernel mak_expand_dims = {expand_dims_prepare, copy_eval, 0};
const ma_kernel mak_shape = {shape_prepare, shape_eval, 0};
const ma_kernel mak_fill = {fill_prepare, fill_eval, 0};
const ma_kernel mak_zeros_like = {zeros_like_prepare, zeros_like_eval, 0};
const ma_kernel mak_broadcast_to = {broadcast_to_prepare, broadcast_to_eval, 0};
const ma_kernel mak_broadcast_args = {broadcast_args_prepare, broadcast_args_eval, 0};
