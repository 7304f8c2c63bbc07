/* SPACE_TO_DEPTH and DEPTH_TO_SPACE (float32, int8; NHWC): blocks of block_size x block_size
 * pixels move to / from the channel dimension, in TFLite's order (block row, block column,
 * channel). Each output element is gathered from its input element; no op data.
 */
#include "kernel_util.h"
#include "kernels.h"

/* node->variant: 0 = SPACE_TO_DEPTH, 1 = DEPTH_TO_SPACE. */
static const char *op_name(const ma_node *node) {
  return node->variant == 1 ? "DEPTH_TO_SPACE" : "SPACE_TO_DEPTH";
}

static ma_status sd_prepare(struct ma_context *ctx, ma_node *node) {
  const char *op = op_name(node);
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  if ((st = mak_check_input_type(ctx, op, in, types, "float32, int8")) != MA_OK ||
      (st = mak_check_type(ctx, op, "output", out, in->type)) != MA_OK)
    return st;
  const int32_t bs = ma_opt_i32(&node->options, 0, 0);
  if (bs <= 0 || bs > 32767)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: block size %d", op, (int)bs);
  if (in->ndims != 4 || out->ndims != 4)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output must be 4-D", op);
  /* `space` has the pixels, `depth` the channels. */
  const bool to_depth = node->variant == 0;
  const ma_tensor *space = to_depth ? in : out, *depth = to_depth ? out : in;
  if (space->dims[0] != depth->dims[0] || space->dims[1] != depth->dims[1] * bs ||
      space->dims[2] != depth->dims[2] * bs ||
      (int64_t)space->dims[3] * bs * bs != depth->dims[3])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: shapes do not match block size %d", op, (int)bs);
  return MA_OK;
}

static ma_status sd_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const bool to_depth = node->variant == 0;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const ma_tensor *space = to_depth ? in : out;
  const int32_t bs = ma_opt_i32(&node->options, 0, 0);
  const int32_t h = space->dims[1], w = space->dims[2], c = space->dims[3];
  const size_t esize = ma_type_size(in->type);
  const uint8_t *src = in->data;
  uint8_t *dst = out->data;
  /* Walk the space tensor; its element (b, y, x, k) is depth element
   * (b, y / bs, x / bs, ((y % bs) * bs + x % bs) * c + k). */
  size_t si = 0;
  for (int32_t b = 0; b < space->dims[0]; ++b)
    for (int32_t y = 0; y < h; ++y)
      for (int32_t x = 0; x < w; ++x)
        for (int32_t k = 0; k < c; ++k, ++si) {
          const size_t di =
              (((size_t)b * (h / bs) + y / bs) * (w / bs) + x / bs) * ((size_t)c * bs * bs) +
              ((size_t)(y % bs) * bs + x % bs) * c + k;
          if (to_depth) mak_copy_elem(dst + di * esize, src + si * esize, esize);
          else mak_copy_elem(dst + si * esize, src + di * esize, esize);
        }
  return MA_OK;
}

const ma_kernel mak_space_to_depth = {sd_prepare, sd_eval, 0};
const ma_kernel mak_depth_to_space = {sd_prepare, sd_eval, 1};
