/* GATHER_ND (float32, int8 params; INT32 indices, as TFLM): output slice i is the params slice
 * at the index tuple in the last dimension of indices. TFLM only checks that the flat start
 * lies inside params; this kernel rejects any index outside its dimension (eval error).
 * EMBEDDING_LOOKUP: output row i is row lookup[i] of the value table (float32 or int8), or,
 * for an int8 table with a float32 output, that row dequantized (scale * q, zero point 0).
 */
#include "kernel_util.h"
#include "kernels.h"

static const char OP[] = "GATHER_ND";
enum { MAX_INDEX_DEPTH = 5 }; /* TFLM's limit on the index tuple length */

static ma_status gather_nd_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *params = node->inputs[0], *idx = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  if ((st = mak_check_input_type(ctx, OP, params, types, "float32, int8")) != MA_OK ||
      (st = mak_check_type(ctx, OP, "output", out, params->type)) != MA_OK ||
      (st = mak_check_type(ctx, OP, "indices", idx, MA_INT32)) != MA_OK)
    return st;
  if (params->ndims < 1 || idx->ndims < 1)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: params and indices must be at least vectors", OP);
  const int32_t nd = idx->dims[idx->ndims - 1];
  if (nd > params->ndims || nd > MAX_INDEX_DEPTH)
    return ma_fail(ctx, nd > params->ndims ? MA_ERR_MODEL : MA_ERR_UNSUPPORTED,
                   "%s: index tuples of %d for params of rank %d (at most 5)", OP, (int)nd,
                   (int)params->ndims);
  /* Output shape: indices' leading dims, then params' dims after the tuple. */
  bool ok = out->ndims == idx->ndims - 1 + params->ndims - nd;
  for (int32_t d = 0; ok && d < idx->ndims - 1; ++d) ok = out->dims[d] == idx->dims[d];
  for (int32_t d = nd; ok && d < params->ndims; ++d)
    ok = out->dims[idx->ndims - 1 + d - nd] == params->dims[d];
  if (!ok) return ma_fail(ctx, MA_ERR_MODEL, "%s: output shape does not match", OP);
  return MA_OK;
}

static ma_status gather_nd_eval(struct ma_context *ctx, ma_node *node) {
  const ma_tensor *params = node->inputs[0], *idx = node->inputs[1], *out = node->outputs[0];
  const int32_t nd = idx->dims[idx->ndims - 1];
  const int32_t n_slices = mak_dims_product(idx, 0, idx->ndims - 1);
  const size_t esize = ma_type_size(params->type);
  const size_t slice = (size_t)mak_dims_product(params, nd, params->ndims) * esize;
  const int32_t *index = idx->data;
  const uint8_t *src = params->data;
  uint8_t *dst = out->data;
  for (int32_t i = 0; i < n_slices; ++i) {
    size_t from = 0;
    for (int32_t j = 0; j < nd; ++j) {
      const int32_t k = index[(size_t)i * nd + j];
      if (k < 0 || k >= params->dims[j])
        return ma_fail(ctx, MA_ERR_KERNEL, "%s: index %d outside [0, %d) in dimension %d", OP,
                       (int)k, (int)params->dims[j], (int)j);
      from = from * (size_t)params->dims[j] + (size_t)k;
    }
    memmove(dst + (size_t)i * slice, src + from * slice, slice);
  }
  return MA_OK;
}

const ma_kernel mak_gather_nd = {gather_nd_prepare, gather_nd_eval, 0};

/* ------------------------------------------------------------------ EMBEDDING_LOOKUP */

static const char EL[] = "EMBEDDING_LOOKUP";

static ma_status embedding_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, EL, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *ids = node->inputs[0], *table = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  if ((st = mak_check_type(ctx, EL, "lookup", ids, MA_INT32)) != MA_OK ||
      (st = mak_check_input_type(ctx, EL, table, types, "float32, int8")) != MA_OK ||
      (out->type != MA_FLOAT32 &&
       (st = mak_check_type(ctx, EL, "output", out, table->type)) != MA_OK))
    return st;
  if (ids->ndims != 1 || table->ndims < 2 || out->ndims != table->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: lookup must be 1-D, value at least 2-D", EL);
  bool ok = out->dims[0] == ids->dims[0];
  for (int32_t d = 1; ok && d < table->ndims; ++d) ok = out->dims[d] == table->dims[d];
  if (!ok) return ma_fail(ctx, MA_ERR_MODEL, "%s: output shape does not match", EL);
  if (table->type != out->type && (mak_zero_point(table, 0) != 0 || !(mak_scale(table, 0) > 0.0f)))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: dequantized tables need a scale and zero point 0", EL);
  return MA_OK;
}

static ma_status embedding_eval(struct ma_context *ctx, ma_node *node) {
  const ma_tensor *ids = node->inputs[0], *table = node->inputs[1], *out = node->outputs[0];
  const int32_t rows = table->dims[0], cols = mak_dims_product(table, 1, table->ndims);
  const bool dequantize = table->type != out->type;
  const float scale = mak_scale(table, 0);
  const size_t row_bytes = (size_t)cols * ma_type_size(table->type);
  for (int32_t i = 0; i < ids->dims[0]; ++i) {
    const int32_t k = ((const int32_t *)ids->data)[i];
    if (k < 0 || k >= rows)
      return ma_fail(ctx, MA_ERR_KERNEL, "%s: index %d outside [0, %d)", EL, (int)k, (int)rows);
    if (!dequantize) {
      memmove((uint8_t *)out->data + (size_t)i * row_bytes,
             (const uint8_t *)table->data + (size_t)k * row_bytes, row_bytes);
      continue;
    }
    const int8_t *src = (const int8_t *)table->data + (size_t)k * cols;
    float *dst = (float *)out->data + (size_t)i * cols;
    for (int32_t c = 0; c < cols; ++c) dst[c] = scale * (float)src[c];
  }
  return MA_OK;
}

const ma_kernel mak_embedding_lookup = {embedding_prepare, embedding_eval, 0};
