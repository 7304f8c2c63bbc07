/* Data movement operators, for any element type (they copy bytes, never requantize):
 * RESHAPE, CONCATENATION, PAD / PADV2, TRANSPOSE, GATHER.
 * None keeps op data: everything is read from the tensors at eval time.
 */
#include <string.h>

#include "fast/arch.h"
#include "kernel_util.h"
#include "kernels.h"
#include "overlap.h"

static ma_status check_same_type(struct ma_context *ctx, const char *op, const ma_tensor *in,
                                 const ma_tensor *out) {
  if (ma_type_size(in->type) == 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: type %s", op, mak_type_name(in->type));
  return mak_check_type(ctx, op, "output", out, in->type);
}

/* ------------------------------------------------------------------ RESHAPE */

static ma_status reshape_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, "RESHAPE", 1, 2, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if ((st = check_same_type(ctx, "RESHAPE", in, out)) != MA_OK) return st;
  if (ma_num_elements(in) != ma_num_elements(out))
    return ma_fail(ctx, MA_ERR_MODEL, "RESHAPE: %d elements in, %d out",
                   (int)ma_num_elements(in), (int)ma_num_elements(out));
  return MA_OK;
}

static ma_status reshape_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  /* The planner may alias input and output; then there is nothing to move. */
  if (in->data != out->data)
    mak_move(out->data, in->data, (size_t)ma_num_elements(in) * ma_type_size(in->type));
  return MA_OK;
}

/* ------------------------------------------------------------------ CONCATENATION */

static int32_t concat_axis(const ma_node *node) {
  int32_t axis = ma_opt_i32(&node->options, 0, 0);
  return axis < 0 ? axis + node->outputs[0]->ndims : axis;
}

/* The pip TFLM's Prepare: int8 inputs quantized as the output (the bytes are copied, never
 * requantized); int16 inputs and output with zero point 0. */
static ma_status concat_quantization(struct ma_context *ctx, const ma_tensor *in, int32_t i,
                                     const ma_tensor *out) {
  static const char op[] = "CONCATENATION";
  if (out->type == MA_INT8 && (mak_scale(in, 0) != mak_scale(out, 0) ||
                               mak_zero_point(in, 0) != mak_zero_point(out, 0)))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: int8 input %d is quantized (scale %g, zero point %d) unlike the output "
                   "(%g, %d), which TFLM refuses",
                   op, (int)i, (double)mak_scale(in, 0), (int)mak_zero_point(in, 0),
                   (double)mak_scale(out, 0), (int)mak_zero_point(out, 0));
  if (out->type == MA_INT16 && (mak_zero_point(in, 0) != 0 || mak_zero_point(out, 0) != 0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: int16 input %d and the output need zero point 0 (TFLM refuses others)",
                   op, (int)i);
  return MA_OK;
}

static ma_status concat_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "CONCATENATION";
  if (node->n_inputs < 1)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: needs at least one input", op);
  ma_status st = mak_check_node(ctx, node, op, 1, node->n_inputs, node->n_inputs, 1);
  if (st != MA_OK) return st;
  const ma_tensor *out = node->outputs[0];
  const int32_t axis = concat_axis(node);
  if (axis < 0 || axis >= out->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: axis %d outside rank %d", op, (int)axis,
                   (int)out->ndims);
  if (ma_opt_i32(&node->options, 1, 0) != MAK_ACT_NONE)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: fused activation", op);
  int64_t sum = 0;
  for (int32_t i = 0; i < node->n_inputs; ++i) {
    const ma_tensor *in = node->inputs[i];
    if ((st = check_same_type(ctx, op, in, out)) != MA_OK) return st;
    if ((st = concat_quantization(ctx, in, i, out)) != MA_OK) return st;
    if (in->ndims != out->ndims)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: input %d has rank %d, output %d", op, (int)i,
                     (int)in->ndims, (int)out->ndims);
    for (int32_t dd = 0; dd < out->ndims; ++dd)
      if (dd != axis && in->dims[dd] != out->dims[dd])
        return ma_fail(ctx, MA_ERR_MODEL, "%s: input %d differs from the output at dim %d", op,
                       (int)i, (int)dd);
    sum += in->dims[axis];
  }
  if (sum != out->dims[axis])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: inputs give %d along axis %d, output has %d", op,
                   (int)sum, (int)axis, (int)out->dims[axis]);
  return MA_OK;
}

/* Copies n bytes between buffers that do not overlap, cheaply for the short runs of a
 * concatenation along an inner axis (mak_move's checks cost more than a 12-byte copy): words
 * here, 16 bytes per predicated step on Helium. */
#if FAST_MVE
#include "fast/mve/fast_mve_copy.h" /* copy_run */
#else
static inline void copy_run(uint8_t *dst, const uint8_t *src, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) memcpy(dst + i, src + i, 4);
  for (; i < n; ++i) dst[i] = src[i];
}
#endif

/* Whether an input's bytes meet the output's. */
static bool concat_overlaps(const ma_node *node) {
  for (int32_t i = 0; i < node->n_inputs; ++i)
    if (!mak_disjoint(node->inputs[i], node->outputs[0])) return true;
  return false;
}

static ma_status concat_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const ma_tensor *out = node->outputs[0];
  const int32_t axis = concat_axis(node);
  const size_t esize = ma_type_size(out->type);
  const int32_t outer = mak_dims_product(out, 0, axis);
  /* One input's run per outer index: its extent along the axis times this. */
  const size_t inner = (size_t)mak_dims_product(out, axis + 1, out->ndims) * esize;
  uint8_t *dst = out->data;
  /* An input placed in the output (overlap.c's mak_copied_in_place: outer 1) is moved onto
   * itself by mak_move's memmove; the short-run copy is for inputs apart from the output. */
  const bool apart = outer > 1 && !concat_overlaps(node);
  for (int32_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < node->n_inputs; ++i) {
      const ma_tensor *in = node->inputs[i];
      const size_t chunk = (size_t)in->dims[axis] * inner;
      const uint8_t *src = (const uint8_t *)in->data + (size_t)o * chunk;
      if (apart)
        copy_run(dst, src, chunk);
      else
        mak_move(dst, src, chunk);
      dst += chunk;
    }
  }
  return MA_OK;
}

/* ------------------------------------------------------------------ PAD, PADV2 */

static ma_status pad_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "PAD";
  ma_status st = mak_check_node(ctx, node, op, 2, 3, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *pads = node->inputs[1], *out = node->outputs[0];
  const ma_tensor *value = mak_input(node, 2);
  if ((st = check_same_type(ctx, op, in, out)) != MA_OK) return st;
  if ((st = mak_check_index_type(ctx, op, "paddings", pads)) != MA_OK) return st;
  if (in->ndims != out->ndims || pads->ndims != 2 || pads->dims[0] != in->ndims ||
      pads->dims[1] != 2)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: paddings must be [%d, 2]", op, (int)in->ndims);
  if (in->ndims > 5)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input rank %d above 5 (as TFLM)", op,
                   (int)in->ndims);
  if (value != NULL && (value->type != in->type || ma_num_elements(value) != 1))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: constant value must be one %s", op,
                   mak_type_name(in->type));
  /* TFLM's Prepare: an int8 constant is written as it is, so it must be quantized as the
   * output (the input's quantization is never looked at: its bytes are copied). */
  if (value != NULL && in->type == MA_INT8 &&
      (mak_scale(value, 0) != mak_scale(out, 0) ||
       mak_zero_point(value, 0) != mak_zero_point(out, 0)))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: the int8 constant is quantized (scale %g, zero point %d) unlike the "
                   "output (%g, %d), which TFLM refuses",
                   op, (double)mak_scale(value, 0), (int)mak_zero_point(value, 0),
                   (double)mak_scale(out, 0), (int)mak_zero_point(out, 0));
  if (pads->is_const) {
    for (int32_t dd = 0; dd < in->ndims; ++dd) {
      const int64_t before = mak_index_at(pads, 2 * dd), after = mak_index_at(pads, 2 * dd + 1);
      if (before < 0 || after < 0 || in->dims[dd] + before + after != out->dims[dd])
        return ma_fail(ctx, MA_ERR_MODEL, "%s: paddings do not give the output shape", op);
    }
  }
  return MA_OK;
}

/* n elements of the pad value: where its bytes are all equal (the usual zero point or zero) a
 * word at a time once dst is aligned (newlib-nano's memset stores byte by byte), else element
 * by element. */
static void fill(uint8_t *dst, const uint8_t *value, size_t esize, size_t n) {
  bool same = true;
  for (size_t b = 1; b < esize; ++b) same = same && value[b] == value[0];
  if (!same) {
    for (size_t i = 0; i < n; ++i) mak_copy_elem(dst + i * esize, value, esize);
    return;
  }
  size_t bytes = n * esize;
  for (; bytes > 0 && ((uintptr_t)dst & 3u) != 0; --bytes) *dst++ = value[0];
  const uint32_t word = value[0] * 0x01010101u;
  for (; bytes >= 4; bytes -= 4, dst += 4) memcpy(dst, &word, 4); /* aligned: one STR */
  for (; bytes > 0; --bytes) *dst++ = value[0];
}

static ma_status pad_eval(struct ma_context *ctx, ma_node *node) {
  const ma_tensor *in = node->inputs[0], *pads = node->inputs[1], *out = node->outputs[0];
  const ma_tensor *value = mak_input(node, 2);
  const int32_t n = in->ndims;
  int32_t before[MA_MAX_DIMS];
  for (int32_t dd = 0; dd < n; ++dd) {
    const int64_t b = mak_index_at(pads, 2 * dd), a = mak_index_at(pads, 2 * dd + 1);
    if (b < 0 || a < 0 || in->dims[dd] + b + a != out->dims[dd])
      return ma_fail(ctx, MA_ERR_KERNEL, "PAD: paddings do not give the output shape");
    before[dd] = (int32_t)b;
  }
  const size_t esize = ma_type_size(in->type);
  /* Fill with the pad value: PADV2's constant, else the output zero point (or 0). */
  uint8_t pad[8] = {0};
  if (value != NULL) {
    memcpy(pad, value->data, esize);
  } else if (out->type == MA_INT8 || out->type == MA_UINT8) {
    pad[0] = (uint8_t)mak_zero_point(out, 0);
  } else if (out->type == MA_INT16) {
    const int16_t z = (int16_t)mak_zero_point(out, 0);
    memcpy(pad, &z, 2);
  }
  uint8_t *dst = out->data, *const end = dst + (size_t)ma_num_elements(out) * esize;
  if (ma_num_elements(in) == 0) {
    fill(dst, pad, esize, (size_t)(end - dst) / esize);
    return MA_OK;
  }
  /* The dimensions inside the innermost padded one are whole in both tensors, so each run
   * (that dimension's input extent times them) is contiguous in both: copy run by run, in
   * output order, the pad value filling only the gaps between runs (every output byte written
   * once; PAD has no overlap rule, so its output never shares a byte with its input). */
  int32_t k = n > 0 ? n - 1 : 0;
  while (k > 0 && before[k] == 0 && out->dims[k] == in->dims[k]) --k;
  const size_t run = (size_t)mak_dims_product(in, k, n) * esize;
  size_t out_stride[MA_MAX_DIMS];
  size_t s = esize;
  for (int32_t dd = n - 1; dd >= 0; --dd) {
    out_stride[dd] = s;
    s *= (size_t)out->dims[dd];
  }
  int32_t idx[MA_MAX_DIMS] = {0};
  const int32_t runs = mak_dims_product(in, 0, k);
  const uint8_t *src = in->data;
  uint8_t *filled = dst; /* the output is written below this */
  for (int32_t r = 0; r < runs; ++r, src += run) {
    size_t off = n > 0 ? (size_t)before[k] * out_stride[k] : 0;
    for (int32_t dd = 0; dd < k; ++dd) off += (size_t)(idx[dd] + before[dd]) * out_stride[dd];
    fill(filled, pad, esize, (size_t)(dst + off - filled) / esize);
    mak_move(dst + off, src, run);
    filled = dst + off + run;
    for (int32_t dd = k - 1; dd >= 0; --dd) {
      if (++idx[dd] < in->dims[dd]) break;
      idx[dd] = 0;
    }
  }
  fill(filled, pad, esize, (size_t)(end - filled) / esize);
  return MA_OK;
}

/* ------------------------------------------------------------------ TRANSPOSE */

static ma_status transpose_check(struct ma_context *ctx, const ma_node *node, ma_status fail) {
  const ma_tensor *in = node->inputs[0], *perm = node->inputs[1], *out = node->outputs[0];
  if (ma_num_elements(perm) != in->ndims || out->ndims != in->ndims)
    return ma_fail(ctx, fail, "TRANSPOSE: permutation of %d axes for rank %d",
                   (int)ma_num_elements(perm), (int)in->ndims);
  uint32_t seen = 0;
  for (int32_t i = 0; i < in->ndims; ++i) {
    const int64_t p = mak_index_at(perm, i);
    if (p < 0 || p >= in->ndims || (seen & (1u << p)) || out->dims[i] != in->dims[p])
      return ma_fail(ctx, fail, "TRANSPOSE: bad permutation or output shape");
    seen |= 1u << p;
  }
  return MA_OK;
}

static ma_status transpose_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, "TRANSPOSE", 2, 2, 2, 1);
  if (st != MA_OK) return st;
  if ((st = check_same_type(ctx, "TRANSPOSE", node->inputs[0], node->outputs[0])) != MA_OK ||
      (st = mak_check_index_type(ctx, "TRANSPOSE", "perm", node->inputs[1])) != MA_OK)
    return st;
  if (node->inputs[0]->ndims > 5)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "TRANSPOSE: input rank %d above 5 (as TFLM)",
                   (int)node->inputs[0]->ndims);
  return node->inputs[1]->is_const ? transpose_check(ctx, node, MA_ERR_MODEL) : MA_OK;
}

/* n elements of esize bytes to dst from src, step elements apart in src. */
static void copy_strided(uint8_t *dst, const uint8_t *src, size_t step, int32_t n, size_t esize) {
  if (esize == 1) {
    for (int32_t j = 0; j < n; ++j, src += step) dst[j] = *src;
    return;
  }
  for (int32_t j = 0; j < n; ++j, src += step * esize)
    mak_copy_elem(dst + (size_t)j * esize, src, esize);
}

static ma_status transpose_eval(struct ma_context *ctx, ma_node *node) {
  ma_status st = transpose_check(ctx, node, MA_ERR_KERNEL);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *perm = node->inputs[1], *out = node->outputs[0];
  const int32_t n = in->ndims;
  const size_t esize = ma_type_size(in->type);
  int32_t in_stride[MA_MAX_DIMS], stride[MA_MAX_DIMS], idx[MA_MAX_DIMS] = {0};
  int32_t s = 1;
  for (int32_t dd = n - 1; dd >= 0; --dd) {
    in_stride[dd] = s;
    s *= in->dims[dd];
  }
  for (int32_t i = 0; i < n; ++i) stride[i] = in_stride[mak_index_at(perm, i)];
  const int32_t total = ma_num_elements(out);
  /* The output's last axis longer than 1 a row at a time (its input stride fixed; the axes
   * after it have one element), the axes before it stepped once per row instead of once per
   * element. */
  int32_t last = n - 1;
  while (last > 0 && out->dims[last] == 1) --last;
  const int32_t row = n > 0 ? out->dims[last] : 1, step = n > 0 ? stride[last] : 0;
  const uint8_t *src = in->data;
  uint8_t *dst = out->data;
  size_t off = 0;
  for (int32_t i = 0; i < total; i += row, dst += (size_t)row * esize) {
    copy_strided(dst, src + off * esize, (size_t)step, row, esize);
    for (int32_t dd = last - 1; dd >= 0; --dd) {
      off += (size_t)stride[dd];
      if (++idx[dd] < out->dims[dd]) break;
      off -= (size_t)stride[dd] * (size_t)out->dims[dd];
      idx[dd] = 0;
    }
  }
  return MA_OK;
}

/* ------------------------------------------------------------------ GATHER */

typedef struct {
  int32_t batch, outer, axis_size, inner, coords;
} gather_geom;

static ma_status gather_geometry(struct ma_context *ctx, const ma_node *node, gather_geom *g) {
  const ma_tensor *params = node->inputs[0], *idx = node->inputs[1], *out = node->outputs[0];
  int32_t axis = ma_opt_i32(&node->options, 0, 0);
  int32_t bdims = ma_opt_i32(&node->options, 1, 0);
  if (axis < 0) axis += params->ndims;
  if (bdims < 0) bdims += idx->ndims;
  if (axis < 0 || axis >= params->ndims || bdims < 0 || bdims > axis || bdims > idx->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "GATHER: axis %d / batch_dims %d invalid", (int)axis,
                   (int)bdims);
  for (int32_t dd = 0; dd < bdims; ++dd)
    if (params->dims[dd] != idx->dims[dd])
      return ma_fail(ctx, MA_ERR_MODEL, "GATHER: batch dims differ");
  g->batch = mak_dims_product(params, 0, bdims);
  g->outer = mak_dims_product(params, bdims, axis);
  g->axis_size = params->dims[axis];
  g->inner = mak_dims_product(params, axis + 1, params->ndims);
  g->coords = mak_dims_product(idx, bdims, idx->ndims);
  if (ma_num_elements(out) != g->batch * g->outer * g->coords * g->inner)
    return ma_fail(ctx, MA_ERR_MODEL, "GATHER: output has %d elements, expected %d",
                   (int)ma_num_elements(out), (int)(g->batch * g->outer * g->coords * g->inner));
  return MA_OK;
}

static ma_status gather_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, "GATHER", 2, 2, 2, 1);
  if (st != MA_OK) return st;
  if ((st = check_same_type(ctx, "GATHER", node->inputs[0], node->outputs[0])) != MA_OK ||
      (st = mak_check_index_type(ctx, "GATHER", "indices", node->inputs[1])) != MA_OK)
    return st;
  gather_geom g;
  return gather_geometry(ctx, node, &g);
}

static ma_status gather_eval(struct ma_context *ctx, ma_node *node) {
  gather_geom g;
  ma_status st = gather_geometry(ctx, node, &g);
  if (st != MA_OK) return st;
  const ma_tensor *params = node->inputs[0], *idx = node->inputs[1];
  const size_t esize = ma_type_size(params->type), row = (size_t)g.inner * esize;
  const uint8_t *src = params->data;
  uint8_t *dst = node->outputs[0]->data;
  for (int32_t b = 0; b < g.batch; ++b) {
    for (int32_t o = 0; o < g.outer; ++o) {
      for (int32_t c = 0; c < g.coords; ++c) {
        const int64_t k = mak_index_at(idx, b * g.coords + c);
        if (k < 0 || k >= g.axis_size)
          return ma_fail(ctx, MA_ERR_KERNEL, "GATHER: index %ld outside [0, %d)", (long)k,
                         (int)g.axis_size);
        const size_t from = (((size_t)b * g.outer + o) * g.axis_size + (size_t)k) * row;
        const size_t to = (((size_t)b * g.outer + o) * g.coords + c) * row;
        mak_move(dst + to, src + from, row);
      }
    }
  }
  return MA_OK;
}

const ma_kernel mak_reshape = {reshape_prepare, reshape_eval, 0};
const ma_kernel mak_concatenation = {concat_prepare, concat_eval, 0};
const ma_kernel mak_pad = {pad_prepare, pad_eval, 0};
const ma_kernel mak_transpose = {transpose_prepare, transpose_eval, 0};
const ma_kernel mak_gather = {gather_prepare, gather_eval, 0};
