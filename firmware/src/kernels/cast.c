/* CAST between int8, int16, int32, uint32, float32 and bool, as the pip TFLM computes it:
 * integers wrap to narrower types, floats truncate toward zero and saturate to the target's
 * range (NaN gives 0), any value casts to bool as value != 0 (NaN too).
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  uint8_t in_type, out_type;
} cast_data;

static bool cast_type_ok(uint8_t t) {
  return t == MA_INT8 || t == MA_INT16 || t == MA_INT32 || t == MA_UINT32 || t == MA_FLOAT32 ||
         t == MA_BOOL;
}

static ma_status cast_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "CAST";
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (ma_num_elements(in) != ma_num_elements(out))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", op);
  if (!cast_type_ok(in->type) || !cast_type_ok(out->type))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: %s to %s is not supported (int8, int16, int32, uint32, float32, bool)",
                   op, mak_type_name(in->type), mak_type_name(out->type));
  cast_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  d->in_type = in->type;
  d->out_type = out->type;
  node->user_data = d;
  return MA_OK;
}

/* f truncated toward zero and saturated to [lo, hi]; NaN gives 0. */
static inline double float_to_int(float f, double lo, double hi) {
  if (f != f) return 0.0;
  const double t = (double)f < lo ? lo : ((double)f > hi ? hi : (double)f);
  return t < 0.0 ? ceil(t) : floor(t);
}

#define CAST_LOOP(TOUT, READ) \
  for (int32_t i = 0; i < n; ++i) ((TOUT *)y)[i] = (TOUT)(READ)

/* An integer or bool input to any output type (integers wrap to narrower types). */
#define CAST_TO(TIN, READ)                                   \
  do {                                                       \
    const TIN *x = in->data;                                 \
    switch (d->out_type) {                                   \
      case MA_INT8: CAST_LOOP(int8_t, READ); break;          \
      case MA_INT16: CAST_LOOP(int16_t, READ); break;        \
      case MA_INT32: CAST_LOOP(int32_t, READ); break;        \
      case MA_UINT32: CAST_LOOP(uint32_t, READ); break;      \
      case MA_BOOL: CAST_LOOP(uint8_t, (READ) != 0); break;  \
      default: CAST_LOOP(float, READ); break;                \
    }                                                        \
  } while (0)

static ma_status cast_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const cast_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0];
  void *y = node->outputs[0]->data;
  const int32_t n = ma_num_elements(in);
  switch (d->in_type) {
    case MA_INT8: CAST_TO(int8_t, x[i]); break;
    case MA_INT16: CAST_TO(int16_t, x[i]); break;
    case MA_INT32: CAST_TO(int32_t, x[i]); break;
    case MA_UINT32: CAST_TO(uint32_t, x[i]); break;
    case MA_BOOL: CAST_TO(uint8_t, x[i] != 0); break;
    default: { /* MA_FLOAT32 */
      const float *x = in->data;
      switch (d->out_type) {
        case MA_INT8: CAST_LOOP(int8_t, float_to_int(x[i], INT8_MIN, INT8_MAX)); break;
        case MA_INT16: CAST_LOOP(int16_t, float_to_int(x[i], INT16_MIN, INT16_MAX)); break;
        case MA_INT32: CAST_LOOP(int32_t, float_to_int(x[i], INT32_MIN, INT32_MAX)); break;
        case MA_UINT32: CAST_LOOP(uint32_t, float_to_int(x[i], 0, UINT32_MAX)); break;
        case MA_BOOL: CAST_LOOP(uint8_t, x[i] != 0.0f); break;
        default: memmove(y, x, sizeof(float) * (size_t)n); break;
      }
      break;
    }
  }
  return MA_OK;
}

const ma_kernel mak_cast = {cast_prepare, cast_eval, 0};
