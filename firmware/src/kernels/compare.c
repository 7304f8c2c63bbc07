/* Comparisons with broadcasting: LESS, LESS_EQUAL, GREATER, GREATER_EQUAL (float32, int32,
 * int64, int8, uint8), EQUAL, NOT_EQUAL (also bool). Output bool.
 *
 * Each element's three-way comparison (-1, 0, 1) indexes the operator's truth table, so one
 * loop per type serves all six operators. int8/uint8 compare both sides rescaled as TFLM does
 * (offsets removed, shifted left 8 bits, multiplied by each input's own scale).
 */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  int32_t in1_offset, in2_offset, m1, m2;
  int8_t s1, s2;
  uint8_t truth; /* bit c + 1 set: true when the comparison gives c (2: unordered) */
  uint8_t type, same_shape;
} cmp_data;

enum { LT = 1, EQ = 2, GT = 4, UNORDERED = 8 }; /* UNORDERED: a float NaN */

enum { V_LESS, V_LESS_EQUAL, V_GREATER, V_GREATER_EQUAL, V_EQUAL, V_NOT_EQUAL };
static const char *const NAMES[] = {"LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL",
                                    "NOT_EQUAL"};
static const uint8_t TRUTH[] = {LT, LT | EQ, GT, GT | EQ, EQ, LT | GT | UNORDERED};

static ma_status cmp_prepare(struct ma_context *ctx, ma_node *node) {
  const char *op = NAMES[node->variant];
  const uint8_t truth = TRUTH[node->variant];
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  mak_bcast bc;
  if ((st = mak_bcast_init(ctx, op, a, b, out, &bc)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "second input", b, a->type)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, MA_BOOL)) != MA_OK) return st;
  const bool equality = node->variant == V_EQUAL || node->variant == V_NOT_EQUAL;
  const bool type_ok = a->type == MA_FLOAT32 || a->type == MA_INT32 || a->type == MA_INT64 ||
                       a->type == MA_INT8 || a->type == MA_UINT8 ||
                       (equality && a->type == MA_BOOL);
  if (!type_ok)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s is not supported", op,
                   mak_type_name(a->type));
  cmp_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->truth = truth;
  d->type = a->type;
  d->same_shape = a->ndims == out->ndims && b->ndims == out->ndims &&
                  memcmp(a->dims, out->dims, sizeof(int32_t) * (size_t)out->ndims) == 0 &&
                  memcmp(b->dims, out->dims, sizeof(int32_t) * (size_t)out->ndims) == 0;
  if (a->type != MA_INT8 && a->type != MA_UINT8) return MA_OK;
  const float sa = mak_scale(a, 0), sb = mak_scale(b, 0);
  if (!(sa > 0.0f) || !(sb > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %s inputs need quantization scales", op,
                   mak_type_name(a->type));
  d->in1_offset = -mak_zero_point(a, 0);
  d->in2_offset = -mak_zero_point(b, 0);
  int s1, s2;
  mak_quantize_multiplier((double)sa, &d->m1, &s1);
  mak_quantize_multiplier((double)sb, &d->m2, &s2);
  /* Each scale is its input's multiplier: TFLM's Prepare stops (a failed check, the process
   * aborts) on one of 1 or more after rounding. */
  if (s1 > 0 || s2 > 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: input scale %g too large (TFLM stops at a multiplier of 1 or more)", op,
                   (double)(s1 > 0 ? sa : sb));
  d->s1 = (int8_t)s1;
  d->s2 = (int8_t)s2;
  return MA_OK;
}

static inline int cmp3(int64_t x, int64_t y) { return (x > y) - (x < y); }
static inline int cmp_float(const cmp_data *d, float x, float y) {
  (void)d;
  return (x != x || y != y) ? 2 : (x > y) - (x < y); /* NaN: only NOT_EQUAL holds */
}
static inline int cmp_int(const cmp_data *d, int64_t x, int64_t y) {
  (void)d;
  return cmp3(x, y);
}
static inline int cmp_bool(const cmp_data *d, uint8_t x, uint8_t y) {
  (void)d;
  return (x != 0) != (y != 0) ? 1 : 0;
}
static inline int cmp_q(const cmp_data *d, int32_t x, int32_t y) {
  const int32_t xs = mak_mbqm(mak_shl_wrap(x + d->in1_offset, 8), d->m1, d->s1);
  const int32_t ys = mak_mbqm(mak_shl_wrap(y + d->in2_offset, 8), d->m2, d->s2);
  return cmp3(xs, ys);
}

#define COMPARE(T, F)                                                              \
  do {                                                                             \
    const T *x = a->data, *y = b->data;                                            \
    if (d->same_shape) {                                                           \
      for (int32_t i = 0; i < n; ++i) z[i] = (truth >> (F(d, x[i], y[i]) + 1)) & 1; \
    } else {                                                                       \
      mak_bcast_iter it;                                                           \
      mak_bcast_start(&it);                                                        \
      for (int32_t i = 0; i < n; ++i, mak_bcast_next(&bc, &it))                    \
        z[i] = (truth >> (F(d, x[it.off_a], y[it.off_b]) + 1)) & 1;                \
    }                                                                              \
  } while (0)

static ma_status cmp_eval(struct ma_context *ctx, ma_node *node) {
  const cmp_data *d = node->user_data;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  mak_bcast bc;
  if (!d->same_shape) {
    ma_status st = mak_bcast_init(ctx, "comparison", a, b, out, &bc);
    if (st != MA_OK) return st;
  }
  const int32_t n = ma_num_elements(out);
  const unsigned truth = d->truth;
  uint8_t *z = out->data;
  switch (d->type) {
    case MA_FLOAT32: COMPARE(float, cmp_float); break;
    case MA_INT32: COMPARE(int32_t, cmp_int); break;
    case MA_INT64: COMPARE(int64_t, cmp_int); break;
    case MA_BOOL: COMPARE(uint8_t, cmp_bool); break;
    case MA_UINT8: COMPARE(uint8_t, cmp_q); break;
    default: COMPARE(int8_t, cmp_q); break;
  }
  return MA_OK;
}

const ma_kernel mak_less = {cmp_prepare, cmp_eval, V_LESS};
const ma_kernel mak_less_equal = {cmp_prepare, cmp_eval, V_LESS_EQUAL};
const ma_kernel mak_greater = {cmp_prepare, cmp_eval, V_GREATER};
const ma_kernel mak_greater_equal = {cmp_prepare, cmp_eval, V_GREATER_EQUAL};
const ma_kernel mak_equal = {cmp_prepare, cmp_eval, V_EQUAL};
const ma_kernel mak_not_equal = {cmp_prepare, cmp_eval, V_NOT_EQUAL};
