/* SELECT_V2: out = condition ? x : y, with the three shapes broadcast (up to 6-D). Any
 * element type (whole elements are copied, no requantization, as TFLM). */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  uint8_t same_shape;
} select_data;

/* Element strides of t broadcast to out's dims (0 where t has size 1 or lacks the dim). */
static bool bcast_strides(const ma_tensor *t, const ma_tensor *out, int32_t *stride) {
  if (t->ndims > out->ndims) return false;
  int32_t s = 1;
  for (int32_t d = out->ndims - 1; d >= 0; --d) {
    const int32_t i = d - (out->ndims - t->ndims);
    const int32_t td = i >= 0 ? t->dims[i] : 1;
    if (td != out->dims[d] && td != 1) return false;
    stride[d] = td == 1 ? 0 : s;
    s *= td;
  }
  return true;
}

static bool same_dims(const ma_tensor *a, const ma_tensor *b) {
  return a->ndims == b->ndims && memcmp(a->dims, b->dims, sizeof(int32_t) * (size_t)a->ndims) == 0;
}

static ma_status select_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "SELECT_V2";
  ma_status st = mak_check_node(ctx, node, op, 3, 3, 3, 1);
  if (st != MA_OK) return st;
  const ma_tensor *c = node->inputs[0], *x = node->inputs[1], *y = node->inputs[2];
  const ma_tensor *out = node->outputs[0];
  if ((st = mak_check_type(ctx, op, "condition", c, MA_BOOL)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "second value", y, x->type)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, x->type)) != MA_OK) return st;
  if (ma_type_size(x->type) == 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: type %s is not supported", op,
                   mak_type_name(x->type));
  int32_t stride[MA_MAX_DIMS];
  if (!bcast_strides(c, out, stride) || !bcast_strides(x, out, stride) ||
      !bcast_strides(y, out, stride))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: shapes do not broadcast to the output", op);
  select_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  d->same_shape = same_dims(c, out) && same_dims(x, out) && same_dims(y, out);
  node->user_data = d;
  return MA_OK;
}

static ma_status select_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const select_data *d = node->user_data;
  const ma_tensor *c = node->inputs[0], *x = node->inputs[1], *y = node->inputs[2];
  const ma_tensor *out = node->outputs[0];
  const size_t es = ma_type_size(out->type);
  const uint8_t *cond = c->data, *xs = x->data, *ys = y->data;
  uint8_t *z = out->data;
  const int32_t n = ma_num_elements(out);
  if (d->same_shape) {
    for (int32_t i = 0; i < n; ++i)
      memmove(z + es * (size_t)i, (cond[i] ? xs : ys) + es * (size_t)i, es);
    return MA_OK;
  }
  int32_t sc[MA_MAX_DIMS], sx[MA_MAX_DIMS], sy[MA_MAX_DIMS], idx[MA_MAX_DIMS] = {0};
  bcast_strides(c, out, sc);
  bcast_strides(x, out, sx);
  bcast_strides(y, out, sy);
  int32_t oc = 0, ox = 0, oy = 0;
  for (int32_t i = 0; i < n; ++i) {
    const uint8_t *src = cond[oc] ? xs + es * (size_t)ox : ys + es * (size_t)oy;
    memmove(z + es * (size_t)i, src, es);
    for (int32_t k = out->ndims - 1; k >= 0; --k) { /* next output index */
      oc += sc[k];
      ox += sx[k];
      oy += sy[k];
      if (++idx[k] < out->dims[k]) break;
      oc -= sc[k] * out->dims[k];
      ox -= sx[k] * out->dims[k];
      oy -= sy[k] * out->dims[k];
      idx[k] = 0;
    }
  }
  return MA_OK;
}

const ma_kernel mak_select_v2 = {select_prepare, select_eval, 0};
