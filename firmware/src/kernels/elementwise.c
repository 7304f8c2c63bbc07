/* Binary element-wise operators with broadcasting: ADD, MUL (float32, int8, int32) and the
 * comparisons LESS, EQUAL (float32, int32, int64, int8, uint8; EQUAL also bool).
 *
 * int8 ADD rescales both inputs to a common scale with 20 bits of headroom (TFLM's
 * left_shift = 20) before summing; int8 MUL multiplies the zero-point-corrected values and
 * requantizes once; int8 comparisons rescale both sides (left_shift = 8) and compare, all
 * as in TFLM's reference kernels.
 */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  int32_t in1_offset, in2_offset, out_offset, left_shift;
  int32_t m1, m2, mo;
  int8_t s1, s2, so;
  int32_t act_min, act_max;
  float f_min, f_max;
} arith_data;

enum { OP_ADD, OP_MUL, OP_LESS, OP_EQUAL };
static const char *const NAMES[] = {"ADD", "MUL", "LESS", "EQUAL"};

static ma_status quant_mult(double m, int32_t *mult, int8_t *shift) {
  int s;
  mak_quantize_multiplier(m, mult, &s);
  *shift = (int8_t)s;
  return MA_OK;
}

static ma_status arith_prepare(struct ma_context *ctx, ma_node *node, int kind) {
  const char *op = NAMES[kind];
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  mak_bcast bc;
  if ((st = mak_bcast_init(ctx, op, a, b, out, &bc)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "second input", b, a->type)) != MA_OK) return st;
  const bool compare = kind == OP_LESS || kind == OP_EQUAL;
  if ((st = mak_check_type(ctx, op, "output", out, compare ? MA_BOOL : a->type)) != MA_OK)
    return st;
  bool type_ok = a->type == MA_FLOAT32 || a->type == MA_INT32 || a->type == MA_INT8;
  if (compare) type_ok = type_ok || a->type == MA_INT64 || a->type == MA_UINT8;
  if (kind == OP_EQUAL) type_ok = type_ok || a->type == MA_BOOL;
  if (!type_ok)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s", op, mak_type_name(a->type));
  arith_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  const int32_t act = compare ? MAK_ACT_NONE : ma_opt_i32(&node->options, 0, 0);
  if (a->type == MA_FLOAT32) return mak_act_range_f(ctx, op, act, &d->f_min, &d->f_max);
  if (a->type == MA_INT32 && !compare) {
    float lo, hi;
    if ((st = mak_act_range_f(ctx, op, act, &lo, &hi)) != MA_OK) return st;
    d->act_min = act == MAK_ACT_NONE ? INT32_MIN : (int32_t)lo;
    d->act_max = hi > 2147483520.0f ? INT32_MAX : (int32_t)hi;
    return MA_OK;
  }
  if (a->type != MA_INT8 && a->type != MA_UINT8) return MA_OK;

  const float sa = mak_scale(a, 0), sb = mak_scale(b, 0);
  if (!(sa > 0.0f) || !(sb > 0.0f) || (!compare && !(mak_scale(out, 0) > 0.0f)))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: int8 tensors need quantization scales", op);
  d->in1_offset = -mak_zero_point(a, 0);
  d->in2_offset = -mak_zero_point(b, 0);
  if (compare) {
    d->left_shift = 8;
    quant_mult((double)sa, &d->m1, &d->s1);
    return quant_mult((double)sb, &d->m2, &d->s2);
  }
  const float so = mak_scale(out, 0);
  d->out_offset = mak_zero_point(out, 0);
  if (kind == OP_ADD) {
    d->left_shift = 20;
    const double twice_max = 2.0 * (double)(sa > sb ? sa : sb);
    quant_mult((double)sa / twice_max, &d->m1, &d->s1);
    quant_mult((double)sb / twice_max, &d->m2, &d->s2);
    quant_mult(twice_max / ((double)(1 << d->left_shift) * (double)so), &d->mo, &d->so);
  } else {
    quant_mult((double)sa * (double)sb / (double)so, &d->mo, &d->so);
  }
  return mak_act_range_q(ctx, op, act, out, &d->act_min, &d->act_max);
}

/* One element of int8 ADD/MUL. */
static int32_t arith_q(const arith_data *d, int kind, int32_t x, int32_t y) {
  const int32_t xv = x + d->in1_offset, yv = y + d->in2_offset;
  int32_t r;
  if (kind == OP_ADD) {
    const int32_t xs = mak_mbqm(mak_shl_wrap(xv, d->left_shift), d->m1, d->s1);
    const int32_t ys = mak_mbqm(mak_shl_wrap(yv, d->left_shift), d->m2, d->s2);
    r = mak_add_sat(mak_mbqm(mak_add_sat(xs, ys), d->mo, d->so), d->out_offset);
  } else {
    r = mak_add_sat(mak_mbqm(xv * yv, d->mo, d->so), d->out_offset);
  }
  return mak_clamp(r, d->act_min, d->act_max);
}

/* One int8/uint8 comparison on rescaled values; returns -1, 0 or 1 like a comparator. */
static int cmp_q(const arith_data *d, int32_t x, int32_t y) {
  const int32_t xs = mak_mbqm(mak_shl_wrap(x + d->in1_offset, d->left_shift), d->m1, d->s1);
  const int32_t ys = mak_mbqm(mak_shl_wrap(y + d->in2_offset, d->left_shift), d->m2, d->s2);
  return (xs > ys) - (xs < ys);
}

static ma_status arith_eval(struct ma_context *ctx, ma_node *node, int kind) {
  const arith_data *d = node->user_data;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  mak_bcast bc;
  ma_status st = mak_bcast_init(ctx, NAMES[kind], a, b, out, &bc);
  if (st != MA_OK) return st;
  const int32_t n = ma_num_elements(out);
  mak_bcast_iter it;
  mak_bcast_start(&it);
  for (int32_t i = 0; i < n; ++i, mak_bcast_next(&bc, &it)) {
    const int32_t ia = it.off_a, ib = it.off_b;
    int c = 0; /* comparison result for LESS/EQUAL */
    switch (a->type) {
      case MA_FLOAT32: {
        const float x = ((const float *)a->data)[ia], y = ((const float *)b->data)[ib];
        if (kind == OP_ADD || kind == OP_MUL)
          ((float *)out->data)[i] = mak_clampf(kind == OP_ADD ? x + y : x * y, d->f_min, d->f_max);
        else
          c = (x > y) - (x < y);
        break;
      }
      case MA_INT32: {
        const int32_t x = ((const int32_t *)a->data)[ia], y = ((const int32_t *)b->data)[ib];
        if (kind == OP_ADD || kind == OP_MUL) {
          const uint32_t r = kind == OP_ADD ? (uint32_t)x + (uint32_t)y : (uint32_t)x * (uint32_t)y;
          ((int32_t *)out->data)[i] = mak_clamp((int32_t)r, d->act_min, d->act_max);
        } else {
          c = (x > y) - (x < y);
        }
        break;
      }
      case MA_INT64: {
        const int64_t x = ((const int64_t *)a->data)[ia], y = ((const int64_t *)b->data)[ib];
        c = (x > y) - (x < y);
        break;
      }
      case MA_BOOL: {
        const int x = ((const uint8_t *)a->data)[ia] != 0, y = ((const uint8_t *)b->data)[ib] != 0;
        c = x != y;
        break;
      }
      case MA_UINT8:
        c = cmp_q(d, ((const uint8_t *)a->data)[ia], ((const uint8_t *)b->data)[ib]);
        break;
      default: { /* MA_INT8 */
        const int32_t x = ((const int8_t *)a->data)[ia], y = ((const int8_t *)b->data)[ib];
        if (kind == OP_ADD || kind == OP_MUL)
          ((int8_t *)out->data)[i] = (int8_t)arith_q(d, kind, x, y);
        else
          c = cmp_q(d, x, y);
        break;
      }
    }
    if (kind == OP_LESS) ((uint8_t *)out->data)[i] = c < 0;
    else if (kind == OP_EQUAL) ((uint8_t *)out->data)[i] = c == 0;
  }
  return MA_OK;
}

static ma_status add_prepare(struct ma_context *c, ma_node *n) {
  return arith_prepare(c, n, OP_ADD);
}
static ma_status add_eval(struct ma_context *c, ma_node *n) { return arith_eval(c, n, OP_ADD); }
static ma_status mul_prepare(struct ma_context *c, ma_node *n) {
  return arith_prepare(c, n, OP_MUL);
}
static ma_status mul_eval(struct ma_context *c, ma_node *n) { return arith_eval(c, n, OP_MUL); }
static ma_status less_prepare(struct ma_context *c, ma_node *n) {
  return arith_prepare(c, n, OP_LESS);
}
static ma_status less_eval(struct ma_context *c, ma_node *n) { return arith_eval(c, n, OP_LESS); }
static ma_status equal_prepare(struct ma_context *c, ma_node *n) {
  return arith_prepare(c, n, OP_EQUAL);
}
static ma_status equal_eval(struct ma_context *c, ma_node *n) {
  return arith_eval(c, n, OP_EQUAL);
}

const ma_kernel mak_add = {add_prepare, add_eval, 0};
const ma_kernel mak_mul = {mul_prepare, mul_eval, 0};
const ma_kernel mak_less = {less_prepare, less_eval, 0};
const ma_kernel mak_equal = {equal_prepare, equal_eval, 0};
