/* ARG_MAX, ARG_MIN over one constant axis: float32 or int8 input, int32 output (as TFLM).
 * The first index of the extreme value wins; a float NaN never wins unless
 * every value so far is NaN (TFLM's NaN-aware comparison). */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

enum { V_MAX, V_MIN };

typedef struct {
  int32_t outer, axis_size, inner;
  uint8_t in_type;
} arg_data;

static ma_status arg_prepare(struct ma_context *ctx, ma_node *node) {
  const char *op = node->variant == V_MAX ? "ARG_MAX" : "ARG_MIN";
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *axis = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8);
  if ((st = mak_check_input_type(ctx, op, in, types, "float32, int8")) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, MA_INT32)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "axis", axis, MA_INT32)) != MA_OK) return st;
  if (!axis->is_const || ma_num_elements(axis) < 1)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: axis must be a constant tensor", op);
  int32_t a;
  memcpy(&a, axis->data, sizeof a);
  if (a < 0) a += in->ndims;
  if (a < 0 || a >= in->ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: axis %d out of range for rank %d", op, (int)a,
                   (int)in->ndims);
  arg_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  d->outer = mak_dims_product(in, 0, a);
  d->axis_size = in->dims[a];
  d->inner = mak_dims_product(in, a + 1, in->ndims);
  d->in_type = in->type;
  if (ma_num_elements(out) != d->outer * d->inner)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output has %d elements, expected %d", op,
                   (int)ma_num_elements(out), (int)(d->outer * d->inner));
  node->user_data = d;
  return MA_OK;
}

/* Whether candidate c beats the current best b. */
static inline bool beats_f(float c, float b, bool is_max) {
  if (c != c) return false;
  return b != b || (is_max ? c > b : c < b);
}

#define ARG_LOOP(T, BEATS)                                                       \
  do {                                                                           \
    const T *x = in->data;                                                       \
    for (int32_t o = 0; o < d->outer; ++o)                                       \
      for (int32_t k = 0; k < d->inner; ++k) {                                   \
        const T *p = x + (size_t)o * d->axis_size * d->inner + k;                \
        T best = p[0];                                                           \
        int32_t at = 0;                                                          \
        for (int32_t i = 1; i < d->axis_size; ++i)                               \
          if (BEATS(p[(size_t)i * d->inner], best)) {                            \
            best = p[(size_t)i * d->inner];                                      \
            at = i;                                                              \
          }                                                                      \
        y[(size_t)o * d->inner + k] = at;                                        \
      }                                                                          \
  } while (0)

static ma_status arg_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const arg_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0];
  int32_t *y = node->outputs[0]->data;
  const bool is_max = node->variant == V_MAX;
  if (d->axis_size <= 0) return MA_OK;
#define BEATS_F(c, b) beats_f(c, b, is_max)
#define BEATS_I(c, b) (is_max ? (c) > (b) : (c) < (b))
  if (d->in_type == MA_FLOAT32) ARG_LOOP(float, BEATS_F);
  else ARG_LOOP(int8_t, BEATS_I);
#undef BEATS_F
#undef BEATS_I
  return MA_OK;
}

const ma_kernel mak_arg_max = {arg_prepare, arg_eval, V_MAX};
const ma_kernel mak_arg_min = {arg_prepare, arg_eval, V_MIN};
