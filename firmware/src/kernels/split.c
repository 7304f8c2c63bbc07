/* SPLIT, SPLIT_V, UNPACK and PACK: one tensor cut along an axis into several, or several
 * joined along a new axis. Pure copies of contiguous chunks; no op data.
 */
#include "kernel_util.h"
#include "kernels.h"

/* Types TFLM's reference kernels take (PACK also takes INT64). */
#define SPLIT_TYPES                                                               \
  (MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT16) | \
   MAK_TYPE_BIT(MA_INT32))
#define SPLIT_LIST "float32, int8, int16, int32"


/* The axis from a constant one-value INT32 tensor, normalised to [0, rank). */
static ma_status axis_from_tensor(struct ma_context *ctx, const char *op, const ma_tensor *t,
                                  int32_t rank, int32_t *axis) {
  ma_status st = mak_check_const(ctx, op, "axis", t);
  if (st == MA_OK) st = mak_check_type(ctx, op, "axis", t, MA_INT32);
  if (st != MA_OK) return st;
  if (ma_num_elements(t) != 1)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: axis must be one value", op);
  int32_t a = ((const int32_t *)t->data)[0];
  if (a < 0) a += rank;
  if (a < 0 || a >= rank)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: axis %d outside rank %d", op,
                   (int)((const int32_t *)t->data)[0], (int)rank);
  *axis = a;
  return MA_OK;
}

/* `part` must equal `whole` except along axis (skip_axis: part lacks that axis). */
static ma_status check_part(struct ma_context *ctx, const char *op, const ma_tensor *whole,
                            const ma_tensor *part, int32_t axis, bool skip_axis) {
  const int32_t rank = whole->ndims - (skip_axis ? 1 : 0);
  bool ok = part->ndims == rank && part->type == whole->type;
  for (int32_t d = 0, w = 0; ok && d < rank; ++d, ++w) {
    if (w == axis) {
      if (skip_axis) ++w;
      else continue;
    }
    ok = part->dims[d] == whole->dims[w];
  }
  if (ok) return MA_OK;
  if (part->type != whole->type)
    return mak_check_type(ctx, op, "every tensor", part, whole->type);
  return ma_fail(ctx, MA_ERR_MODEL, "%s: tensor %d does not fit tensor %d along axis %d", op,
                 (int)part->index, (int)whole->index, (int)axis);
}

/* Copies whole <-> parts: for each of `outer` blocks, part i holds a chunk of
 * part_len[i] * inner elements. split: whole -> parts; else parts -> whole. */
static void move_chunks(ma_tensor *const *parts, int32_t n_parts,
                        ma_tensor *whole, int32_t axis, bool part_has_axis, bool split) {
  const size_t esize = ma_type_size(whole->type);
  const int32_t outer = mak_dims_product(whole, 0, axis);
  const size_t inner = (size_t)mak_dims_product(whole, axis + 1, whole->ndims) * esize;
  uint8_t *w = whole->data;
  for (int32_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < n_parts; ++i) {
      const size_t chunk = inner * (size_t)(part_has_axis ? parts[i]->dims[axis] : 1);
      uint8_t *p = (uint8_t *)parts[i]->data + (size_t)o * chunk;
      /* mak_move, a memmove: in a hostile model the planner may overlap input and output. */
      if (split) mak_move(p, w, chunk);
      else mak_move(w, p, chunk);
      w += chunk;
    }
  }
}

/* ------------------------------------------------------------------ SPLIT, SPLIT_V */

static ma_status split_common(struct ma_context *ctx, ma_node *node, bool v, int32_t *axis) {
  const char *op = v ? "SPLIT_V" : "SPLIT";
  ma_status st = mak_check_node(ctx, node, op, v ? 3 : 2, v ? 3 : 2, v ? 3 : 2, node->n_outputs);
  if (st != MA_OK) return st;
  if (node->n_outputs < 1) return ma_fail(ctx, MA_ERR_MODEL, "%s: no outputs", op);
  const ma_tensor *in = node->inputs[v ? 0 : 1];
  if ((st = mak_check_input_type(ctx, op, in, SPLIT_TYPES, SPLIT_LIST)) != MA_OK ||
      (st = axis_from_tensor(ctx, op, node->inputs[v ? 2 : 0], in->ndims, axis)) != MA_OK)
    return st;
  int64_t sum = 0;
  for (int32_t i = 0; i < node->n_outputs; ++i) {
    if ((st = check_part(ctx, op, in, node->outputs[i], *axis, false)) != MA_OK) return st;
    if (!v && node->outputs[i]->dims[*axis] != node->outputs[0]->dims[*axis])
      return ma_fail(ctx, MA_ERR_MODEL, "%s: outputs differ in size", op);
    sum += node->outputs[i]->dims[*axis];
  }
  if (sum != in->dims[*axis])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: outputs give %ld along axis %d, input has %d", op,
                   (long)sum, (int)*axis, (int)in->dims[*axis]);
  if (v) { /* size_splits must agree with the outputs (-1: the rest) */
    const ma_tensor *sizes = node->inputs[1];
    if ((st = mak_check_index_type(ctx, op, "size_splits", sizes)) != MA_OK) return st;
    if (ma_num_elements(sizes) != node->n_outputs)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: %d size_splits for %d outputs", op,
                     (int)ma_num_elements(sizes), (int)node->n_outputs);
    for (int32_t i = 0; sizes->is_const && i < node->n_outputs; ++i) {
      const int64_t s = mak_index_at(sizes, i);
      if (s != -1 && s != node->outputs[i]->dims[*axis])
        return ma_fail(ctx, MA_ERR_MODEL, "%s: size_splits[%d] = %ld, output has %d", op,
                       (int)i, (long)s, (int)node->outputs[i]->dims[*axis]);
    }
  }
  return MA_OK;
}

/* node->variant: 0 = SPLIT, 1 = SPLIT_V. */
static ma_status split_prepare(struct ma_context *ctx, ma_node *node) {
  int32_t axis = 0;
  return split_common(ctx, node, node->variant == 1, &axis);
}

/* prepare checked the node; shapes are static and the axis a constant, so eval only moves. */
static int32_t axis_in(int32_t a, int32_t rank) { return a < 0 ? a + rank : a; }

static ma_status split_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const bool v = node->variant == 1;
  ma_tensor *in = node->inputs[v ? 0 : 1];
  const int32_t axis = axis_in(((const int32_t *)node->inputs[v ? 2 : 0]->data)[0], in->ndims);
  move_chunks(node->outputs, node->n_outputs, in, axis, true, true);
  return MA_OK;
}

/* ------------------------------------------------------------------ UNPACK, PACK */

/* PackOptions: values_count, axis; UnpackOptions: num, axis. `whole` is PACK's output or
 * UNPACK's input; each part lacks the axis. */
static ma_status pack_common(struct ma_context *ctx, ma_node *node, bool pack, int32_t *axis) {
  const char *op = pack ? "PACK" : "UNPACK";
  const int32_t count = ma_opt_i32(&node->options, 0, 0);
  ma_status st = pack ? mak_check_node(ctx, node, op, 1, node->n_inputs, node->n_inputs, 1)
                      : mak_check_node(ctx, node, op, 1, 1, 1, node->n_outputs);
  if (st != MA_OK) return st;
  ma_tensor *const *parts = pack ? node->inputs : node->outputs;
  const int32_t n_parts = pack ? node->n_inputs : node->n_outputs;
  const ma_tensor *whole = pack ? node->outputs[0] : node->inputs[0];
  if ((st = pack ? mak_check_input_type(ctx, op, parts[0], SPLIT_TYPES | MAK_TYPE_BIT(MA_INT64),
                                         SPLIT_LIST ", int64")
                 : mak_check_input_type(ctx, op, whole, SPLIT_TYPES, SPLIT_LIST)) != MA_OK)
    return st;
  if (n_parts < 1 || count != n_parts)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d values for %d tensors", op, (int)count,
                   (int)n_parts);
  int32_t a = ma_opt_i32(&node->options, 1, 0);
  if (a < 0) a += whole->ndims;
  if (a < 0 || a >= whole->ndims || whole->dims[a] != n_parts)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: axis %d does not hold %d values", op,
                   (int)ma_opt_i32(&node->options, 1, 0), (int)n_parts);
  for (int32_t i = 0; i < n_parts; ++i)
    if ((st = check_part(ctx, op, whole, parts[i], a, true)) != MA_OK) return st;
  *axis = a;
  return MA_OK;
}

/* node->variant: 0 = UNPACK, 1 = PACK. */
static ma_status pack_prepare(struct ma_context *ctx, ma_node *node) {
  int32_t axis;
  return pack_common(ctx, node, node->variant == 1, &axis);
}

static ma_status pack_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const bool pack = node->variant == 1;
  const int32_t rank = (pack ? node->outputs[0] : node->inputs[0])->ndims;
  const int32_t axis = axis_in(ma_opt_i32(&node->options, 1, 0), rank);
  move_chunks(pack ? node->inputs : node->outputs, pack ? node->n_inputs : node->n_outputs,
              pack ? node->outputs[0] : node->inputs[0], axis, false, !pack);
  return MA_OK;
}

const ma_kernel mak_split = {split_prepare, split_eval, 0};
const ma_kernel mak_split_v = {split_prepare, split_eval, 1};
const ma_kernel mak_unpack = {pack_prepare, pack_eval, 0};
const ma_kernel mak_pack = {pack_prepare, pack_eval, 1};
