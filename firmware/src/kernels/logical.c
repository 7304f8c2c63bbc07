/* LOGICAL_AND, LOGICAL_OR on bool tensors, with broadcasting (up to 6-D). */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

enum { V_AND, V_OR };

typedef struct {
  uint8_t same_shape;
} logical_data;

static ma_status logical_prepare(struct ma_context *ctx, ma_node *node) {
  const char *op = node->variant == V_AND ? "LOGICAL_AND" : "LOGICAL_OR";
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  if ((st = mak_check_type(ctx, op, "first input", a, MA_BOOL)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "second input", b, MA_BOOL)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, MA_BOOL)) != MA_OK) return st;
  mak_bcast bc;
  if ((st = mak_bcast_init(ctx, op, a, b, out, &bc)) != MA_OK) return st;
  logical_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  d->same_shape = ma_num_elements(a) == ma_num_elements(out) &&
                  ma_num_elements(b) == ma_num_elements(out) && a->ndims == b->ndims &&
                  memcmp(a->dims, b->dims, sizeof(int32_t) * (size_t)a->ndims) == 0;
  node->user_data = d;
  return MA_OK;
}

static ma_status logical_eval(struct ma_context *ctx, ma_node *node) {
  const logical_data *d = node->user_data;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  const uint8_t *x = a->data, *y = b->data;
  uint8_t *z = out->data;
  const int32_t n = ma_num_elements(out);
  const bool is_and = node->variant == V_AND;
  if (d->same_shape) {
    if (is_and)
      for (int32_t i = 0; i < n; ++i) z[i] = x[i] && y[i];
    else
      for (int32_t i = 0; i < n; ++i) z[i] = x[i] || y[i];
    return MA_OK;
  }
  mak_bcast bc;
  ma_status st = mak_bcast_init(ctx, "logical operator", a, b, out, &bc);
  if (st != MA_OK) return st;
  mak_bcast_iter it;
  mak_bcast_start(&it);
  for (int32_t i = 0; i < n; ++i, mak_bcast_next(&bc, &it)) {
    const bool u = x[it.off_a] != 0, v = y[it.off_b] != 0;
    z[i] = is_and ? (u && v) : (u || v);
  }
  return MA_OK;
}

const ma_kernel mak_logical_and = {logical_prepare, logical_eval, V_AND};
const ma_kernel mak_logical_or = {logical_prepare, logical_eval, V_OR};
