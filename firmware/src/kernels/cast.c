/* CAST between int8, int16, int32, uint32, float32 and bool (input only), as TFLM's
 * static_cast: integers wrap to narrower types, floats truncate toward zero, bool is 0 or 1.
 *
 * A float outside the target's range has no defined C conversion; it converts as gcc does on
 * x86-64 (where the reference TFLM runs): to int8/int16/int32 through int32, giving INT32_MIN
 * (then wrapped), to uint32 through int64.
 */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  uint8_t in_type, out_type;
} cast_data;

static bool cast_type_ok(uint8_t t, bool input) {
  return t == MA_INT8 || t == MA_INT16 || t == MA_INT32 || t == MA_UINT32 || t == MA_FLOAT32 ||
         (input && t == MA_BOOL);
}

static ma_status cast_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "CAST";
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (ma_num_elements(in) != ma_num_elements(out))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", op);
  if (!cast_type_ok(in->type, true) || !cast_type_ok(out->type, false))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: %s to %s is not supported (from int8, int16, int32, uint32, float32, "
                   "bool to int8, int16, int32, uint32, float32)",
                   op, mak_type_name(in->type), mak_type_name(out->type));
  cast_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  d->in_type = in->type;
  d->out_type = out->type;
  node->user_data = d;
  return MA_OK;
}

static inline int32_t float_to_i32(float f) {
  return (f >= -2147483648.0f && f < 2147483648.0f) ? (int32_t)f : INT32_MIN;
}
static inline int64_t float_to_i64(float f) {
  return (f >= -9223372036854775808.0f && f < 9223372036854775808.0f) ? (int64_t)f : INT64_MIN;
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
        case MA_INT8: CAST_LOOP(int8_t, float_to_i32(x[i])); break;
        case MA_INT16: CAST_LOOP(int16_t, float_to_i32(x[i])); break;
        case MA_INT32: CAST_LOOP(int32_t, float_to_i32(x[i])); break;
        case MA_UINT32: CAST_LOOP(uint32_t, float_to_i64(x[i])); break;
        default: memmove(y, x, sizeof(float) * (size_t)n); break;
      }
      break;
    }
  }
  return MA_OK;
}

const ma_kernel mak_cast = {cast_prepare, cast_eval, 0};
