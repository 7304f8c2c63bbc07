/* MIRROR_PAD (float32, int8 as TFLM): pads with the input mirrored, REFLECT (edge not
 * repeated) or SYMMETRIC (edge repeated). Paddings (INT32 or INT64, [rank, 2]) must leave a
 * source for every cell: at most dim - 1 (REFLECT) or dim (SYMMETRIC) on each side. TFLM
 * asks for two scratch buffers of strides; this kernel keeps them on the stack.
 */
#include "kernel_util.h"
#include "kernels.h"

static const char OP[] = "MIRROR_PAD";
enum { MODE_REFLECT = 0, MODE_SYMMETRIC = 1 };

static ma_status check_pads(struct ma_context *ctx, const ma_node *node, ma_status fail) {
  const ma_tensor *in = node->inputs[0], *pads = node->inputs[1], *out = node->outputs[0];
  const int32_t offset = ma_opt_i32(&node->options, 0, MODE_REFLECT) == MODE_REFLECT ? 1 : 0;
  for (int32_t d = 0; d < in->ndims; ++d) {
    const int64_t l = mak_index_at(pads, 2 * d), r = mak_index_at(pads, 2 * d + 1);
    const int64_t most = (int64_t)in->dims[d] - offset;
    if (l < 0 || r < 0 || l > most || r > most || in->dims[d] + l + r != out->dims[d])
      return ma_fail(ctx, fail, "%s: paddings %ld, %ld do not fit axis %d of %d -> %d", OP,
                     (long)l, (long)r, (int)d, (int)in->dims[d], (int)out->dims[d]);
  }
  return MA_OK;
}

static ma_status mirror_pad_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *pads = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  if ((st = mak_check_input_type(ctx, OP, in, types, "float32, int8")) != MA_OK ||
      (st = mak_check_type(ctx, OP, "output", out, in->type)) != MA_OK ||
      (st = mak_check_index_type(ctx, OP, "paddings", pads)) != MA_OK)
    return st;
  const int32_t mode = ma_opt_i32(&node->options, 0, MODE_REFLECT);
  if (mode != MODE_REFLECT && mode != MODE_SYMMETRIC)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: mode %d", OP, (int)mode);
  if (out->ndims != in->ndims || pads->ndims != 2 || pads->dims[0] != in->ndims ||
      pads->dims[1] != 2)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: paddings must be [%d, 2]", OP, (int)in->ndims);
  return pads->is_const ? check_pads(ctx, node, MA_ERR_MODEL) : MA_OK;
}

/* The input coordinate of output coordinate o along an axis of size n with leading pad l. */
static int32_t source(int32_t o, int32_t l, int32_t n, int32_t offset) {
  const int32_t i = o - l;
  if (i < 0) return -i - 1 + offset;             /* mirrored before the start */
  if (i >= n) return 2 * n - i - 1 - offset;     /* mirrored after the end */
  return i;
}

static ma_status mirror_pad_eval(struct ma_context *ctx, ma_node *node) {
  const ma_status st = check_pads(ctx, node, MA_ERR_KERNEL);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *pads = node->inputs[1], *out = node->outputs[0];
  const int32_t offset = ma_opt_i32(&node->options, 0, MODE_REFLECT) == MODE_REFLECT ? 1 : 0;
  const int32_t n = in->ndims;
  int32_t in_stride[MA_MAX_DIMS], left[MA_MAX_DIMS], idx[MA_MAX_DIMS] = {0};
  int32_t s = 1;
  for (int32_t d = n - 1; d >= 0; --d) {
    in_stride[d] = s;
    s *= in->dims[d];
    left[d] = (int32_t)mak_index_at(pads, 2 * d);
  }
  const size_t esize = ma_type_size(in->type);
  const int32_t total = ma_num_elements(out);
  const uint8_t *src = in->data;
  uint8_t *dst = out->data;
  for (int32_t i = 0; i < total; ++i) {
    size_t off = 0;
    for (int32_t d = 0; d < n; ++d)
      off += (size_t)source(idx[d], left[d], in->dims[d], offset) * (size_t)in_stride[d];
    mak_copy_elem(dst + (size_t)i * esize, src + off * esize, esize);
    for (int32_t d = n - 1; d >= 0; --d) {
      if (++idx[d] < out->dims[d]) break;
      idx[d] = 0;
    }
  }
  return MA_OK;
}

const ma_kernel mak_mirror_pad = {mirror_pad_prepare, mirror_pad_eval, 0};
