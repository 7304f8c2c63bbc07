/* Binary arithmetic with broadcasting (up to 6-D): ADD, SUB, MUL, SQUARED_DIFFERENCE,
 * MAXIMUM, MINIMUM, DIV (float32, int32, int8), FLOOR_DIV, FLOOR_MOD (float32), PRELU (float32,
 * int8).
 *
 * prepare picks one typed loop (`path`); eval switches once per call, and the loop calls an
 * inlined element function, with a flat loop when both inputs have the output's shape.
 *
 * Quantized arithmetic as TFLM's reference kernels:
 * - ADD/SUB int8/int16: both inputs rescaled to twice the larger input scale with
 *   20 (int16: 15) bits of headroom, summed, requantized; the scale ratios in double, as the
 *   pip TFLM computes them (its source's SUB divides in float).
 * - MUL int8/int16 (int16: zero points 0): zero-point-corrected product requantized once
 *   (in * in / out, in double).
 * - SQUARED_DIFFERENCE int8/int16: inputs rescaled like ADD with 7 (int16: 0) bits of headroom,
 *   the difference squared and requantized by (2 max scale)^2 / (2^(2 shift) out scale).
 * - MAXIMUM/MINIMUM compare raw values (no rescaling, as TFLM).
 * - PRELU int8: x - zp >= 0 requantized by in/out scale, otherwise (x - zp) * (alpha - zp)
 *   by in * alpha / out scale (both in double).
 * - FLOOR_DIV divides in double and floors; FLOOR_MOD is fmodf moved to the divisor's sign.
 */
#include <math.h>
#include <string.h>

#include "fast/mve/fast_mve_elementwise.h"
#include "kernel_util.h"
#include "kernels.h"

/* Everything eval needs but the operands' data where the output's values follow the inputs'
 * in order or in rows (eval_data_only: count, run_a, run_b), in the 48 bytes it took before
 * they came in (the float range shares the integer paths' fields, which float never reads). */
typedef struct {
  union {
    struct {
      int32_t in1_offset, in2_offset, out_offset;
      int32_t m1, m2, mo;
      int32_t act_min, act_max;
    };
    struct {
      float f_min, f_max;
    };
  };
  int32_t count;         /* the output's values */
  uint16_t run_a, run_b; /* bcast_rows', or 0 (also a row longer than 65535 values) */
  int8_t s1, s2, so, left_shift;
  uint8_t path, same_shape;
} arith_data;
_Static_assert(sizeof(arith_data) == 48, "the binary operators' op data: 48 bytes, as planned");

/* ADD, SUB, MUL and SQUARED_DIFFERENCE each have four paths in TYPED_PATH's order. */
enum {
  ADD_F, ADD_I32, ADD_Q8, ADD_Q16, SUB_F, SUB_I32, SUB_Q8, SUB_Q16, MUL_F, MUL_I32, MUL_Q8, MUL_Q16,
  SQD_F, SQD_I32, SQD_Q8, SQD_Q16, DIV_F, DIV_I32, DIV_Q8, FLOORDIV_F, FLOORMOD_F,
  PRELU_F, PRELU_Q8,
  MAX_F, MAX_Q8, MAX_Q16, MAX_I32, MAX_I64, MIN_F, MIN_Q8, MIN_Q16, MIN_I32, MIN_I64
};

#define ARITH_TYPES (T_BIT(MA_FLOAT32) | T_BIT(MA_INT32) | T_BIT(MA_INT8) | T_BIT(MA_INT16))

/* The path of an ADD, SUB, MUL or SQUARED_DIFFERENCE whose float32 path is `first`. */
static uint8_t typed_path(int first, uint8_t type) {
  const int k = type == MA_FLOAT32 ? 0 : type == MA_INT32 ? 1 : type == MA_INT8 ? 2 : 3;
  return (uint8_t)(first + k);
}

static void quant_mult(double m, int32_t *mult, int8_t *shift) {
  int s;
  mak_quantize_multiplier(m, mult, &s);
  *shift = (int8_t)s;
}

static bool same_shape(const ma_tensor *a, const ma_tensor *b) {
  if (a->ndims != b->ndims) return false;
  for (int32_t i = 0; i < a->ndims; ++i)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* A broadcast where one input has the output's shape and the other repeats along the leading
 * axes (its shape, leading 1s aside, is the output's last axes: a per-channel scale, a
 * scalar): the output then walks in rows of that input's size, without the general index
 * walk. run_b (run_a) is that row length when b (a) repeats, else 0. */
typedef struct {
  int32_t run_a, run_b;
} bcast_rows;

static int32_t trailing_run(const ma_tensor *t, const ma_tensor *out) {
  int32_t lead = 0;
  while (lead < t->ndims && t->dims[lead] == 1) ++lead;
  const int32_t k = t->ndims - lead; /* t's axes after its leading 1s */
  if (k > out->ndims) return 0;
  int32_t run = 1;
  for (int32_t i = 0; i < k; ++i) {
    if (t->dims[lead + i] != out->dims[out->ndims - k + i]) return 0;
    run *= t->dims[lead + i];
  }
  return run;
}

static bcast_rows rows_of(const ma_tensor *a, const ma_tensor *b, const ma_tensor *out) {
  bcast_rows r = {0, 0};
  if (same_shape(a, out)) r.run_b = trailing_run(b, out);
  else if (same_shape(b, out)) r.run_a = trailing_run(a, out);
  return r;
}

/* "float32, int8, ..." for the message of an unsupported type. */
static void type_names(uint32_t types, char *buf, size_t size) {
  static const struct { uint8_t type; const char *name; } NAMES[] = {
      {MA_FLOAT32, "float32"}, {MA_INT8, "int8"}, {MA_INT16, "int16"}, {MA_INT32, "int32"},
      {MA_INT64, "int64"}};
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; ++i) {
    if (!(types & MAK_TYPE_BIT(NAMES[i].type))) continue;
    const size_t len = strlen(NAMES[i].name);
    if (at + len + 3 > size) break;
    if (at > 0) {
      memcpy(buf + at, ", ", 2);
      at += 2;
    }
    memcpy(buf + at, NAMES[i].name, len + 1);
    at += len;
  }
}

/* Checks two inputs of one type broadcasting to the output (of `out_type`, or the inputs'
 * type when out_type < 0), and that the type is in `types` (bit per ma_type). */
static ma_status binary_begin(struct ma_context *ctx, ma_node *node, const char *op,
                              uint32_t types, arith_data **out_d) {
  char type_list[64];
  type_names(types, type_list, sizeof type_list);
  ma_status st = mak_check_node(ctx, node, op, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  mak_bcast bc;
  if ((st = mak_bcast_init(ctx, op, a, b, out, &bc)) != MA_OK) return st;
  if ((st = mak_check_input_type(ctx, op, a, types, type_list)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "second input", b, a->type)) != MA_OK) return st;
  if ((st = mak_check_type(ctx, op, "output", out, a->type)) != MA_OK) return st;
  if ((a->type == MA_INT8 || a->type == MA_INT16) &&
      (!(mak_scale(a, 0) > 0.0f) || !(mak_scale(b, 0) > 0.0f) || !(mak_scale(out, 0) > 0.0f)))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %s tensors need quantization scales", op,
                   mak_type_name(a->type));
  arith_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->same_shape = same_shape(a, out) && same_shape(b, out);
  d->count = ma_num_elements(out);
  const bcast_rows rows = rows_of(a, b, out);
  d->run_a = (uint16_t)(rows.run_a <= UINT16_MAX ? rows.run_a : 0);
  d->run_b = (uint16_t)(rows.run_b <= UINT16_MAX ? rows.run_b : 0);
  /* The general broadcast walks the shapes; the other forms need only count and the runs. */
  node->eval_data_only = d->same_shape || d->run_a > 0 || d->run_b > 0;
  d->in1_offset = -mak_zero_point(a, 0);
  d->in2_offset = -mak_zero_point(b, 0);
  d->out_offset = mak_zero_point(out, 0);
  *out_d = d;
  return MA_OK;
}

#define T_BIT(t) MAK_TYPE_BIT(t)

/* Fused activation range for float, int32 and quantized outputs. */
static ma_status fused_range(struct ma_context *ctx, const char *op, ma_node *node,
                             arith_data *d) {
  const int32_t act = ma_opt_i32(&node->options, 0, 0);
  const ma_tensor *out = node->outputs[0];
  if (out->type == MA_FLOAT32) return mak_act_range_f(ctx, op, act, &d->f_min, &d->f_max);
  if (out->type == MA_INT32) {
    float lo, hi;
    ma_status st = mak_act_range_f(ctx, op, act, &lo, &hi);
    if (st != MA_OK) return st;
    d->act_min = act == MAK_ACT_NONE ? INT32_MIN : (int32_t)lo;
    d->act_max = hi > 2147483520.0f ? INT32_MAX : (int32_t)hi;
    return MA_OK;
  }
  return mak_act_range_q(ctx, op, act, out, &d->act_min, &d->act_max);
}

/* ADD/SUB int8/int16 rescaling: twice the larger input scale, `left_shift` bits headroom. The
 * ratios in double, as the pip TFLM forms them (its source's SUB divides in float; found by
 * tools/sweep_types.py and the conformance cases: off by one on a few values). */
static void add_sub_scales(arith_data *d, const ma_node *node, int left_shift) {
  const float sa = mak_scale(node->inputs[0], 0), sb = mak_scale(node->inputs[1], 0);
  const float so = mak_scale(node->outputs[0], 0);
  d->left_shift = (int8_t)left_shift;
  const double twice_max = 2.0 * (double)(sa > sb ? sa : sb);
  quant_mult((double)sa / twice_max, &d->m1, &d->s1);
  quant_mult((double)sb / twice_max, &d->m2, &d->s2);
  quant_mult(twice_max / ((double)(1 << left_shift) * (double)so), &d->mo, &d->so);
}

static ma_status add_sub_prepare(struct ma_context *ctx, ma_node *node, const char *op,
                                 bool is_sub) {
  arith_data *d;
  ma_status st = binary_begin(ctx, node, op, ARITH_TYPES, &d);
  if (st != MA_OK) return st;
  const uint8_t type = node->inputs[0]->type;
  d->path = typed_path(is_sub ? SUB_F : ADD_F, type);
  if (type == MA_INT8 || type == MA_INT16) {
    const int left_shift = type == MA_INT8 ? 20 : 15;
    /* TFLM's Prepare stops (a failed check, the process aborts) on an output multiplier of 1
     * or more: an output scale at most twice the larger input scale / 2^left_shift. */
    const float sa = mak_scale(node->inputs[0], 0), sb = mak_scale(node->inputs[1], 0);
    const double ratio = 2.0 * (double)(sa > sb ? sa : sb) /
                         ((double)(1 << left_shift) * (double)mak_scale(node->outputs[0], 0));
    if (!(ratio < 1.0))
      return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                     "%s: output scale %g too small for the input scales (multiplier %g, "
                     "TFLM stops at 1 or more)",
                     op, (double)mak_scale(node->outputs[0], 0), ratio);
    add_sub_scales(d, node, left_shift);
  }
  return fused_range(ctx, op, node, d);
}

static ma_status add_prepare(struct ma_context *c, ma_node *n) {
  return add_sub_prepare(c, n, "ADD", false);
}
static ma_status sub_prepare(struct ma_context *c, ma_node *n) {
  return add_sub_prepare(c, n, "SUB", true);
}

static ma_status mul_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "MUL";
  arith_data *d;
  ma_status st = binary_begin(ctx, node, op, ARITH_TYPES, &d);
  if (st != MA_OK) return st;
  const uint8_t type = node->inputs[0]->type;
  d->path = typed_path(MUL_F, type);
  if (type == MA_INT16 && (d->in1_offset != 0 || d->in2_offset != 0 || d->out_offset != 0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 needs zero points 0", op);
  if (type == MA_INT8 || type == MA_INT16) {
    const double sa = mak_scale(node->inputs[0], 0), sb = mak_scale(node->inputs[1], 0);
    quant_mult(sa * sb / (double)mak_scale(node->outputs[0], 0), &d->mo, &d->so);
  }
  return fused_range(ctx, op, node, d);
}

static ma_status sqd_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "SQUARED_DIFFERENCE";
  arith_data *d;
  ma_status st = binary_begin(ctx, node, op, ARITH_TYPES, &d);
  if (st != MA_OK) return st;
  const uint8_t type = node->inputs[0]->type;
  d->path = typed_path(SQD_F, type);
  d->act_min = type == MA_INT8 ? INT8_MIN : INT16_MIN;
  d->act_max = type == MA_INT8 ? INT8_MAX : INT16_MAX;
  if (type != MA_INT8 && type != MA_INT16) return MA_OK;
  if (type == MA_INT16 && (d->in1_offset != 0 || d->in2_offset != 0 || d->out_offset != 0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 needs zero points 0", op);
  const int left_shift = type == MA_INT8 ? 7 : 0;
  const double sa = mak_scale(node->inputs[0], 0), sb = mak_scale(node->inputs[1], 0);
  const double twice_max = 2.0 * (sa > sb ? sa : sb);
  d->left_shift = (int8_t)left_shift;
  quant_mult(sa / twice_max, &d->m1, &d->s1);
  quant_mult(sb / twice_max, &d->m2, &d->s2);
  quant_mult(twice_max * twice_max /
                 (double)((float)(1 << (2 * left_shift)) * mak_scale(node->outputs[0], 0)),
             &d->mo, &d->so);
  return MA_OK;
}

static ma_status minmax_prepare(struct ma_context *ctx, ma_node *node, bool is_max) {
  const char *op = is_max ? "MAXIMUM" : "MINIMUM";
  arith_data *d;
  ma_status st = binary_begin(ctx, node, op,
                              T_BIT(MA_FLOAT32) | T_BIT(MA_INT8) | T_BIT(MA_INT16) |
                                  T_BIT(MA_INT32) | T_BIT(MA_INT64),
                              &d);
  if (st != MA_OK) return st;
  switch (node->inputs[0]->type) {
    case MA_FLOAT32: d->path = is_max ? MAX_F : MIN_F; break;
    case MA_INT8: d->path = is_max ? MAX_Q8 : MIN_Q8; break;
    case MA_INT16: d->path = is_max ? MAX_Q16 : MIN_Q16; break;
    case MA_INT32: d->path = is_max ? MAX_I32 : MIN_I32; break;
    default: d->path = is_max ? MAX_I64 : MIN_I64; break;
  }
  return MA_OK;
}

static ma_status maximum_prepare(struct ma_context *c, ma_node *n) {
  return minmax_prepare(c, n, true);
}
static ma_status minimum_prepare(struct ma_context *c, ma_node *n) {
  return minmax_prepare(c, n, false);
}

static ma_status div_prepare(struct ma_context *ctx, ma_node *node) {
  static const char op[] = "DIV";
  arith_data *d;
  ma_status st =
      binary_begin(ctx, node, op, T_BIT(MA_FLOAT32) | T_BIT(MA_INT32) | T_BIT(MA_INT8), &d);
  if (st != MA_OK) return st;
  const uint8_t type = node->inputs[0]->type;
  d->path = type == MA_FLOAT32 ? DIV_F : (type == MA_INT32 ? DIV_I32 : DIV_Q8);
  if (type == MA_INT8) { /* in1 / (in2 * out), formed in double as the pip TFLM (sweep_types) */
    const double sa = mak_scale(node->inputs[0], 0), sb = mak_scale(node->inputs[1], 0);
    quant_mult(sa / (sb * (double)mak_scale(node->outputs[0], 0)), &d->mo, &d->so);
  }
  return fused_range(ctx, op, node, d);
}

/* FLOOR_DIV, FLOOR_MOD: float32 only; the kernel's variant is the path. */
static ma_status float_only_prepare(struct ma_context *ctx, ma_node *node) {
  arith_data *d;
  const char *op = node->variant == FLOORDIV_F ? "FLOOR_DIV" : "FLOOR_MOD";
  ma_status st = binary_begin(ctx, node, op, T_BIT(MA_FLOAT32), &d);
  if (st != MA_OK) return st;
  d->path = (uint8_t)node->variant;
  return MA_OK;
}

static ma_status prelu_prepare(struct ma_context *ctx, ma_node *node) {
  arith_data *d;
  ma_status st = binary_begin(ctx, node, "PRELU", T_BIT(MA_FLOAT32) | T_BIT(MA_INT8), &d);
  if (st != MA_OK) return st;
  if (node->inputs[0]->type == MA_FLOAT32) {
    d->path = PRELU_F;
    return MA_OK;
  }
  const double si = mak_scale(node->inputs[0], 0), sa = mak_scale(node->inputs[1], 0);
  const double so = mak_scale(node->outputs[0], 0);
  quant_mult(si / so, &d->m1, &d->s1);
  quant_mult(si * sa / so, &d->mo, &d->so);
  d->path = PRELU_Q8;
  return MA_OK;
}

/* ---------------------------------------------------------------- element functions */

/* Input rescaled for ADD/SUB/SQUARED_DIFFERENCE. */
static inline int32_t rescale1(const arith_data *d, int32_t x) {
  return mak_mbqm(mak_shl_wrap(x + d->in1_offset, d->left_shift), d->m1, d->s1);
}
static inline int32_t rescale2(const arith_data *d, int32_t y) {
  return mak_mbqm(mak_shl_wrap(y + d->in2_offset, d->left_shift), d->m2, d->s2);
}
static inline int32_t requant(const arith_data *d, int32_t raw) {
  return mak_clamp(mak_add_sat(mak_mbqm(raw, d->mo, d->so), d->out_offset), d->act_min,
                   d->act_max);
}

static inline float add_f(const arith_data *d, float x, float y) {
  return mak_clampf(x + y, d->f_min, d->f_max);
}
static inline float sub_f(const arith_data *d, float x, float y) {
  return mak_clampf(x - y, d->f_min, d->f_max);
}
static inline float mul_f(const arith_data *d, float x, float y) {
  return mak_clampf(x * y, d->f_min, d->f_max);
}
static inline float div_f(const arith_data *d, float x, float y) {
  return mak_clampf(x / y, d->f_min, d->f_max);
}
static inline int32_t div_i32(const arith_data *d, int32_t x, int32_t y) {
  /* Truncating, as C++; the divisor was checked non-zero; INT32_MIN / -1 wraps. */
  const int32_t q = (x == INT32_MIN && y == -1) ? INT32_MIN : x / y;
  return mak_clamp(q, d->act_min, d->act_max);
}
/* Leading redundant sign bits (gcc's __builtin_clrsb; 31 for 0 and -1). */
static inline int clrsb32(int32_t x) {
  uint32_t u = (uint32_t)(x < 0 ? ~x : x);
  int n = 0;
  while (n < 32 && !(u & 0x80000000u)) {
    u <<= 1;
    ++n;
  }
  return n - 1;
}

/* gemmlowp's RoundingDivideByPOT, also for the exponents above 31 that TFLM's int8 DIV
 * reaches with small dividends: there its mask (2^e - 1 formed in 64 bits, truncated to
 * int32) is all ones and the int32 shift by e is undefined; the reference TFLM runs on
 * x86-64, which shifts by e mod 32. This reproduces that result. */
static inline int32_t rdbpot_any(int32_t x, int e) {
  if (e <= 31) return mak_rdbpot(x, e);
  return (x >> (e & 31)) + (x >= 0 ? 1 : 0);
}

/* int8 DIV as TFLM: the divisor's fixed-point reciprocal, the dividend normalised by its
 * headroom, then one requantization (the divisor was checked non-zero). */
static inline int32_t div_q(const arith_data *d, int32_t x, int32_t y) {
  int32_t v1 = x + d->in1_offset, v2 = y + d->in2_offset;
  if (v2 < 0) {
    v1 = -v1;
    v2 = -v2;
  }
  const int hpo = clrsb32(v2) + 1; /* leading zeros of a positive value */
  const int recip_shift = 31 - hpo;
  const int32_t recip = mak_one_over_one_plus_x(
      (int32_t)(((uint32_t)v2 << hpo) - ((uint32_t)1 << 31)));
  const int headroom = clrsb32(v1);
  const int32_t unscaled = mak_mbqm(v1, recip, headroom);
  const int total_shift = d->so - recip_shift - headroom;
  const int32_t r = rdbpot_any(mak_srdhm(unscaled, d->mo), -total_shift);
  return mak_clamp(mak_add_sat(r, d->out_offset), d->act_min, d->act_max);
}

static inline float floor_div_f(const arith_data *d, float x, float y) {
  (void)d;
  return (float)floor((double)x / (double)y);
}
static inline float floor_mod_f(const arith_data *d, float x, float y) {
  (void)d;
  const float m = fmodf(x, y);
  return (m != 0.0f && ((y < 0.0f) != (m < 0.0f))) ? m + y : m;
}
static inline float prelu_f(const arith_data *d, float x, float alpha) {
  (void)d;
  return x >= 0.0f ? x : x * alpha;
}
static inline int32_t prelu_q(const arith_data *d, int32_t x, int32_t alpha) {
  const int32_t v = x + d->in1_offset;
  const int32_t r = v >= 0 ? mak_mbqm(v, d->m1, d->s1)
                           : mak_mbqm(v * (alpha + d->in2_offset), d->mo, d->so);
  return mak_clamp(mak_add_sat(r, d->out_offset), INT8_MIN, INT8_MAX);
}
static inline float sqd_f(const arith_data *d, float x, float y) {
  (void)d;
  return (x - y) * (x - y);
}
static inline int32_t add_i32(const arith_data *d, int32_t x, int32_t y) {
  return mak_clamp(mak_wrap_add(x, y), d->act_min, d->act_max);
}
static inline int32_t sub_i32(const arith_data *d, int32_t x, int32_t y) {
  return mak_clamp(mak_wrap_sub(x, y), d->act_min, d->act_max);
}
static inline int32_t mul_i32(const arith_data *d, int32_t x, int32_t y) {
  return mak_clamp(mak_wrap_mul(x, y), d->act_min, d->act_max);
}
static inline int32_t sqd_i32(const arith_data *d, int32_t x, int32_t y) {
  (void)d;
  return mak_wrap_mul(mak_wrap_sub(x, y), mak_wrap_sub(x, y));
}
static inline int32_t add_q(const arith_data *d, int32_t x, int32_t y) {
  return requant(d, mak_add_sat(rescale1(d, x), rescale2(d, y)));
}
static inline int32_t sub_q(const arith_data *d, int32_t x, int32_t y) {
  return requant(d, mak_wrap_sub(rescale1(d, x), rescale2(d, y)));
}
static inline int32_t mul_q(const arith_data *d, int32_t x, int32_t y) {
  return requant(d, (x + d->in1_offset) * (y + d->in2_offset));
}
static inline int32_t sqd_q(const arith_data *d, int32_t x, int32_t y) {
  const int32_t diff = mak_wrap_sub(rescale1(d, x), rescale2(d, y));
  return requant(d, mak_wrap_mul(diff, diff));
}
/* ------------------------------------------- int8 ADD, SUB, MUL: exact short forms
 *
 * TFLite's steps with the operands' ranges known (fast_q8 checks them), so each takes a few
 * instructions instead of mak_mbqm's general case:
 * - SaturatingRoundingDoublingHighMul(a, m) = (a * m + 2^30) >> 31 (floor): TFLite nudges by
 *   +-2^30 and truncates toward zero, which is the same floor for every product; its one
 *   saturating case needs m = INT32_MIN, which mak_quantize_multiplier never gives. It is
 *   kernel_util.h's mak_dhm_2a of 2a (|a| < 2^30, so 2a fits): one SMMULR on the Armv7E-M DSP.
 * - RoundingDivideByPOT(x, e), e >= 1: (x + 2^(e-1) - (x < 0)) >> e rounds half away from
 *   zero as TFLite's remainder test does (no overflow for |x| < 2^30).
 * - int8 values plus offsets of at most 255 in magnitude keep ADD/SUB's inputs shifted by 20
 *   below 2^28, their rescaled sum below 2^29, and MUL's products below 2^16 (shifted left by
 *   at most 14: below 2^30); the output offset is then added without saturation. */
typedef mak_fast_q8 fast_q8; /* fast_mve_elementwise.h */

static inline int32_t srdhm_small(int32_t a, int32_t m) { /* |a| < 2^30, m >= 0 */
  return mak_dhm_2a(a * 2, m);
}

static inline int32_t rdbpot_small(int32_t x, int e) { /* |x| < 2^30, 0 <= e <= 31 */
  return e == 0 ? x : (x + (int32_t)(UINT32_C(1) << (e - 1)) + (x >> 31)) >> e;
}

static inline bool offset_small(int32_t off) { return off >= -255 && off <= 255; }

/* Whether the short forms apply (int8 only); fills f from the operator's data. */
static bool fast_q8_init(const arith_data *d, bool is_mul, fast_q8 *f) {
  const int left = is_mul && d->so > 0 ? d->so : 0;
  f->off1 = d->in1_offset;
  f->off2 = d->in2_offset;
  f->out_off = d->out_offset;
  f->m1 = d->m1;
  f->m2 = d->m2;
  f->mo = d->mo;
  f->lo = d->act_min;
  f->hi = d->act_max;
  f->e1 = -d->s1;
  f->e2 = -d->s2;
  f->eo = d->so > 0 ? 0 : -d->so;
  f->left = left;
  const bool shifts_ok = is_mul ? left <= 14 : d->left_shift == 20 && d->so <= 0 &&
                                                   d->s1 <= 0 && d->s2 <= 0 && f->e1 <= 31 &&
                                                   f->e2 <= 31;
  return shifts_ok && f->eo <= 31 && offset_small(f->off1) && offset_small(f->off2) &&
         f->out_off >= -65536 && f->out_off <= 65536 && f->m1 >= 0 && f->m2 >= 0 && f->mo >= 0;
}

static inline int32_t fast_out(const fast_q8 *f, int32_t raw) {
  return mak_clamp(rdbpot_small(srdhm_small(raw, f->mo), f->eo) + f->out_off, f->lo, f->hi);
}
static inline int32_t fast_in1(const fast_q8 *f, int32_t x) {
  return rdbpot_small(srdhm_small((x + f->off1) * (1 << 20), f->m1), f->e1);
}
static inline int32_t fast_in2(const fast_q8 *f, int32_t y) {
  return rdbpot_small(srdhm_small((y + f->off2) * (1 << 20), f->m2), f->e2);
}
static inline int32_t add_q8_fast(const fast_q8 *f, int32_t x, int32_t y) {
  return fast_out(f, fast_in1(f, x) + fast_in2(f, y));
}
static inline int32_t sub_q8_fast(const fast_q8 *f, int32_t x, int32_t y) {
  return fast_out(f, fast_in1(f, x) - fast_in2(f, y));
}
static inline int32_t mul_q8_fast(const fast_q8 *f, int32_t x, int32_t y) {
  return fast_out(f, (x + f->off1) * (y + f->off2) * (1 << f->left));
}

#define MAX_OF(d, x, y) ((void)(d), (x) > (y) ? (x) : (y))
#define MIN_OF(d, x, y) ((void)(d), (x) < (y) ? (x) : (y))

/* out[i] = F(P, a[.], b[.]) over the output, flat or broadcast (P: the element function's
 * parameters; BINARY: the operator's data). */
#define BINARY_P(T, TOUT, F, P)                                                 \
  do {                                                                          \
    const T *x = a->data, *y = b->data;                                         \
    TOUT *z = out->data;                                                        \
    if (d->same_shape) {                                                        \
      for (int32_t i = 0; i < n; ++i) z[i] = (TOUT)F(P, x[i], y[i]);            \
    } else if (rows.run_b > 0) {                                                \
      for (int32_t i = 0; i < n; i += rows.run_b)                               \
        for (int32_t k = 0; k < rows.run_b; ++k)                                \
          z[i + k] = (TOUT)F(P, x[i + k], y[k]);                                \
    } else if (rows.run_a > 0) {                                                \
      for (int32_t i = 0; i < n; i += rows.run_a)                               \
        for (int32_t k = 0; k < rows.run_a; ++k)                                \
          z[i + k] = (TOUT)F(P, x[k], y[i + k]);                                \
    } else {                                                                    \
      mak_bcast_iter it;                                                        \
      mak_bcast_start(&it);                                                     \
      for (int32_t i = 0; i < n; ++i, mak_bcast_next(&bc, &it))                 \
        z[i] = (TOUT)F(P, x[it.off_a], y[it.off_b]);                            \
    }                                                                           \
  } while (0)
#define BINARY(T, TOUT, F) BINARY_P(T, TOUT, F, d)

/* The Helium loop over the same-shape output, or row by row where one input repeats along
 * the output's leading axes in rows of at least 4 values; false where it does not run. */
static bool mve_q8(int op, const fast_q8 *f, const arith_data *d, const bcast_rows *rows,
                   const ma_tensor *a, const ma_tensor *b, const ma_tensor *out, int32_t n) {
  if (!FAST_MVE) return false;
  const int8_t *x = a->data, *y = b->data;
  int8_t *z = out->data;
  if (d->same_shape) return mak_mve_binary_q8(op, f, x, y, z, n);
  const int32_t run = rows->run_b > 0 ? rows->run_b : rows->run_a;
  if (run < 4) return false;
  for (int32_t i = 0; i < n; i += run) {
    const int8_t *xi = rows->run_b > 0 ? x + i : x, *yi = rows->run_b > 0 ? y : y + i;
    if (!mak_mve_binary_q8(op, f, xi, yi, z + i, run)) return false; /* f decides: row 0 */
  }
  return true;
}

/* int8 ADD/SUB/MUL through the short forms where they apply (on Helium their vector loop
 * where both inputs run along the output), else F. */
#define BINARY_Q8(F, FAST, OP)                                                  \
  do {                                                                          \
    fast_q8 f;                                                                  \
    if (!fast_q8_init(d, (OP) == MAK_Q8_MUL, &f))                               \
      BINARY(int8_t, int8_t, F);                                                \
    else if (!mve_q8(OP, &f, d, &rows, a, b, out, n))                           \
      BINARY_P(int8_t, int8_t, FAST, &f);                                       \
  } while (0)

/* The second input's values: from the op data where eval gets only the operands' data. */
static int32_t divisor_count(const arith_data *d, const ma_tensor *b) {
  if (d->same_shape || d->run_a > 0) return d->count; /* b has the output's shape */
  return d->run_b > 0 ? d->run_b : ma_num_elements(b);
}

/* Reads of the node: its operands' data only (eval_data_only) but in the general broadcast. */
static ma_status binary_eval(struct ma_context *ctx, ma_node *node) {
  const arith_data *d = node->user_data;
  const ma_tensor *a = node->inputs[0], *b = node->inputs[1], *out = node->outputs[0];
  mak_bcast bc;
  const bcast_rows rows = {d->run_a, d->run_b};
  if (!d->same_shape && rows.run_a == 0 && rows.run_b == 0) {
    ma_status st = mak_bcast_init(ctx, "binary operator", a, b, out, &bc);
    if (st != MA_OK) return st;
  }
  const int32_t n = d->count;
  switch (d->path) {
    case ADD_F: BINARY(float, float, add_f); break;
    case ADD_I32: BINARY(int32_t, int32_t, add_i32); break;
    case ADD_Q8: BINARY_Q8(add_q, add_q8_fast, MAK_Q8_ADD); break;
    case ADD_Q16: BINARY(int16_t, int16_t, add_q); break;
    case SUB_F: BINARY(float, float, sub_f); break;
    case SUB_I32: BINARY(int32_t, int32_t, sub_i32); break;
    case SUB_Q8: BINARY_Q8(sub_q, sub_q8_fast, MAK_Q8_SUB); break;
    case SUB_Q16: BINARY(int16_t, int16_t, sub_q); break;
    case MUL_F: BINARY(float, float, mul_f); break;
    case MUL_I32: BINARY(int32_t, int32_t, mul_i32); break;
    case MUL_Q8: BINARY_Q8(mul_q, mul_q8_fast, MAK_Q8_MUL); break;
    case MUL_Q16: BINARY(int16_t, int16_t, mul_q); break;
    case SQD_F: BINARY(float, float, sqd_f); break;
    case SQD_I32: BINARY(int32_t, int32_t, sqd_i32); break;
    case SQD_Q8: BINARY(int8_t, int8_t, sqd_q); break;
    case SQD_Q16: BINARY(int16_t, int16_t, sqd_q); break;
    case DIV_F: BINARY(float, float, div_f); break;
    case DIV_I32: {
      const int32_t *y = b->data;
      for (int32_t i = 0, nb = divisor_count(d, b); i < nb; ++i)
        if (y[i] == 0) return ma_fail(ctx, MA_ERR_KERNEL, "DIV: int32 division by zero");
      BINARY(int32_t, int32_t, div_i32);
      break;
    }
    case DIV_Q8: {
      const int8_t *y = b->data;
      for (int32_t i = 0, nb = divisor_count(d, b); i < nb; ++i)
        if (y[i] + d->in2_offset == 0)
          return ma_fail(ctx, MA_ERR_KERNEL, "DIV: int8 divisor equals its zero point");
      BINARY(int8_t, int8_t, div_q);
      break;
    }
    case FLOORDIV_F: BINARY(float, float, floor_div_f); break;
    case FLOORMOD_F: BINARY(float, float, floor_mod_f); break;
    case PRELU_F: BINARY(float, float, prelu_f); break;
    case PRELU_Q8: BINARY(int8_t, int8_t, prelu_q); break;
    case MAX_F: BINARY(float, float, MAX_OF); break;
    case MAX_Q8: BINARY(int8_t, int8_t, MAX_OF); break;
    case MAX_Q16: BINARY(int16_t, int16_t, MAX_OF); break;
    case MAX_I32: BINARY(int32_t, int32_t, MAX_OF); break;
    case MAX_I64: BINARY(int64_t, int64_t, MAX_OF); break;
    case MIN_F: BINARY(float, float, MIN_OF); break;
    case MIN_Q8: BINARY(int8_t, int8_t, MIN_OF); break;
    case MIN_Q16: BINARY(int16_t, int16_t, MIN_OF); break;
    case MIN_I32: BINARY(int32_t, int32_t, MIN_OF); break;
    default: BINARY(int64_t, int64_t, MIN_OF); break;
  }
  return MA_OK;
}

const ma_kernel mak_add = {add_prepare, binary_eval, 0};
const ma_kernel mak_sub = {sub_prepare, binary_eval, 0};
const ma_kernel mak_mul = {mul_prepare, binary_eval, 0};
const ma_kernel mak_squared_difference = {sqd_prepare, binary_eval, 0};
const ma_kernel mak_maximum = {maximum_prepare, binary_eval, 0};
const ma_kernel mak_minimum = {minimum_prepare, binary_eval, 0};
const ma_kernel mak_div = {div_prepare, binary_eval, 0};
const ma_kernel mak_floor_div = {float_only_prepare, binary_eval, FLOORDIV_F};
const ma_kernel mak_floor_mod = {float_only_prepare, binary_eval, FLOORMOD_F};
const ma_kernel mak_prelu = {prelu_prepare, binary_eval, 0};
