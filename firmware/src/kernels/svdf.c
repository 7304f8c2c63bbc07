/* SVDF (rank-r singular value decomposition filter): float32, and int8 input/output with
 * int16 or int8 time weights and state (the int8 state may have a zero point).
 *
 * Inputs: input [batch, n_input], weights_feature [n_filter, n_input], weights_time
 * [n_filter, n_memory], optional bias [n_unit], state (a variable) [batch, n_filter * n_memory].
 * Each invocation shifts the state left by one step, writes the feature projection into the
 * newest column, then reduces state x weights_time over memory and rank.
 *
 * TFLM keeps the per-filter time products in two scratch buffers; here each unit's sum is
 * formed directly, in the same order, so no scratch is needed. int8 follows TFLM's
 * EvalIntegerSvdfReference: the feature product is requantized into the int16 state with
 * effective scale input * feature / state (formed in double: with TFLM's source's float
 * product an int16 state came out one step off the pip TFLM's on a tie), the sum into the
 * output with state * time / output (also in double, where TFLM's source uses float: the
 * pip TFLM's outputs on a crafted tie are those of double).
 */
#include <math.h>
#include <string.h>

#include "fast/fast_dot_s8.h"
#include "fast/fast_svdf_steps.h"
#include "kernel_util.h"
#include "kernels.h"
#include "svdf.h"

typedef struct {
  int32_t batch, n_input, n_filter, n_memory, n_unit;
} svdf_shape;

enum { SVDF_F32, SVDF_S8, SVDF_S16 }; /* float32, else int8 with an int8 or int16 state */

/* All eval reads besides its operands' data (eval_data_only), in the 48 bytes (40 and the
 * tail's 16-byte alignment) the op data took when eval read the descriptors: float and int8
 * share a union. */
typedef struct {
  int32_t batch, n_input, n_filter, n_memory, rank;
  union {
    struct {
      float f_min, f_max;
    } f;
    struct {
      int32_t input_zp, output_zp, state_zp, mult1, mult2;
      int8_t shift1, shift2;
    } q;
  } u;
  uint8_t kind; /* SVDF_* */
} svdf_data;
_Static_assert(sizeof(svdf_data) <= 48, "SVDF's op data would grow the tail");

static const char OP[] = "SVDF";

static svdf_shape shape_of(const ma_node *node, int32_t rank) {
  const ma_tensor *in = node->inputs[0], *wt = node->inputs[2];
  svdf_shape s = {in->dims[0], in->dims[1], node->inputs[1]->dims[0], wt->dims[1], 0};
  s.n_unit = rank > 0 ? s.n_filter / rank : 0;
  return s;
}

static ma_status svdf_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 5, 5, 3, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *wf = node->inputs[1], *wt = node->inputs[2];
  const ma_tensor *bias = node->inputs[3], *state = node->inputs[4], *out = node->outputs[0];
  if (state == NULL || state->data == NULL)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: the state input is missing", OP);
  const int32_t rank = ma_opt_i32(&node->options, 0, 0);
  const int32_t act = ma_opt_i32(&node->options, 1, 0);
  if (in->ndims != 2 || wf->ndims != 2 || wt->ndims != 2 || rank <= 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and weights must be 2-D, rank > 0", OP);
  const svdf_shape s = shape_of(node, rank);
  if (wf->dims[1] != s.n_input || wt->dims[0] != s.n_filter || s.n_filter % rank != 0 ||
      s.n_memory <= 0 || ma_num_elements(state) != s.batch * s.n_filter * s.n_memory ||
      ma_num_elements(out) != s.batch * s.n_unit ||
      (bias != NULL && ma_num_elements(bias) != s.n_unit))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: shapes do not match (%d filters, rank %d)", OP,
                   (int)s.n_filter, (int)rank);
  svdf_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->rank = rank;
  d->batch = s.batch;
  d->n_input = s.n_input;
  d->n_filter = s.n_filter;
  d->n_memory = s.n_memory;
  node->eval_data_only = 1;
  if (in->type == MA_FLOAT32) {
    if (wf->type != MA_FLOAT32 || wt->type != MA_FLOAT32)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: hybrid weights are not supported", OP);
    if ((st = mak_check_type(ctx, OP, "state", state, MA_FLOAT32)) != MA_OK ||
        (st = mak_check_type(ctx, OP, "output", out, MA_FLOAT32)) != MA_OK ||
        (bias != NULL && (st = mak_check_type(ctx, OP, "bias", bias, MA_FLOAT32)) != MA_OK))
      return st;
    d->kind = SVDF_F32;
    return mak_act_range_f(ctx, OP, act, &d->u.f.f_min, &d->u.f.f_max);
  }
  if (in->type != MA_INT8)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s", OP, mak_type_name(in->type));
  if (wt->type != MA_INT16 && wt->type != MA_INT8)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: time weights type %s", OP,
                   mak_type_name(wt->type));
  if ((st = mak_check_type(ctx, OP, "feature weights", wf, MA_INT8)) != MA_OK ||
      (st = mak_check_type(ctx, OP, "state", state, wt->type)) != MA_OK ||
      (st = mak_check_type(ctx, OP, "output", out, MA_INT8)) != MA_OK ||
      (bias != NULL && (st = mak_check_type(ctx, OP, "bias", bias, MA_INT32)) != MA_OK))
    return st;
  const float si = mak_scale(in, 0), sf = mak_scale(wf, 0), st_s = mak_scale(state, 0);
  const float sw = mak_scale(wt, 0), so = mak_scale(out, 0);
  if (!(si > 0.0f) || !(sf > 0.0f) || !(st_s > 0.0f) || !(sw > 0.0f) || !(so > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: int8 tensors need quantization scales", OP);
  /* TFLM's Prepare: the bias is on the state-times-time-weights scale (within 1e-5). */
  if (bias != NULL && fabs((double)mak_scale(bias, 0) - (double)(st_s * sw)) >= 1e-5)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: bias scale %g is not the state scale times the time weights' (%g), "
                   "which TFLM refuses",
                   OP, (double)mak_scale(bias, 0), (double)(st_s * sw));
  if (state->type == MA_INT16 && mak_zero_point(state, 0) != 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: an int16 state must be symmetric", OP);
  d->kind = state->type == MA_INT8 ? SVDF_S8 : SVDF_S16;
  d->u.q.state_zp = mak_zero_point(state, 0);
  d->u.q.input_zp = mak_zero_point(in, 0);
  d->u.q.output_zp = mak_zero_point(out, 0);
  int shift;
  mak_quantize_multiplier((double)si * (double)sf / (double)st_s, &d->u.q.mult1, &shift);
  d->u.q.shift1 = (int8_t)shift;
  /* Double, as the pip TFLM (tests/runtime/test_requant_sweep.py's crafted ties). */
  mak_quantize_multiplier((double)st_s * (double)sw / (double)so, &d->u.q.mult2, &shift);
  d->u.q.shift2 = (int8_t)shift;
  return MA_OK;
}

/* Drops the oldest step of every filter's memory: the whole state moves down one element, a
 * word at a time (memmove of newlib-nano copies byte by byte when source and destination are
 * not both word-aligned, as here). Forward copying is safe: each word is read before the
 * write that reaches it. */
static void shift_state(void *state, size_t count, size_t esize) {
  uint8_t *dst = state;
  const uint8_t *src = dst + esize;
  const uint8_t *end = dst + (count > 1 ? (count - 1) * esize : 0);
  for (; dst + 8 <= end; dst += 8, src += 8) {
    uint32_t w0, w1;
    memcpy(&w0, src, 4);
    memcpy(&w1, src + 4, 4);
    memcpy(dst, &w0, 4);
    memcpy(dst + 4, &w1, 4);
  }
  for (; dst < end; ++dst, ++src) *dst = *src;
}

/* Moves one filter's memory (a row of nbytes) one step older and puts v, the new step's value
 * (its low esize bytes), in the newest step. On little-endian cores a row of whole words moves
 * a word at a time, each word built from two loads (nothing read past the row). Per row it is
 * TFLM's shift of the whole state: the element the whole-state shift brings into a row's
 * newest step from the next row is overwritten there by the new value. */
static inline void push_row(uint8_t *row, size_t nbytes, size_t esize, uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (nbytes % 4 == 0) {
    const uint32_t down = 8u * (uint32_t)esize, up = 32u - down;
    uint32_t w = load4((const int8_t *)row);
    size_t k = 0;
    for (; k + 4 < nbytes; k += 4) {
      const uint32_t next = load4((const int8_t *)row + k + 4);
      const uint32_t moved = w >> down | next << up;
      memcpy(row + k, &moved, 4);
      w = next;
    }
    const uint32_t last = w >> down | v << up;
    memcpy(row + k, &last, 4);
    return;
  }
#endif
  memmove(row, row + esize, nbytes - esize);
  if (esize == 1) {
    row[nbytes - 1] = (uint8_t)v;
  } else {
    const uint16_t h = (uint16_t)v;
    memcpy(row + nbytes - 2, &h, 2);
  }
}

/* Filter f's feature sum requantized into the state's type, plus the state zero point (TFLM
 * adds it after clamping; the store wraps like its cast). */
static inline uint32_t feature_value(const svdf_run *c, int32_t sum) {
  const int32_t q = requant_q(sum, &c->q_feature);
  const int32_t v = c->s8 ? mak_clamp(q, INT8_MIN, INT8_MAX) : mak_clamp(q, INT16_MIN, INT16_MAX);
  return (uint32_t)(v + c->state_zp);
}

#ifndef SVDF_HAS_PUSH_DOT
/* push_row of an int8 row of whole words and the row's product with the time weights wt (state
 * values plus state_off), in one pass: each moved word is stored and multiplied while in a
 * register. */
static inline int32_t push_dot_s8(uint8_t *row, const uint8_t *wt, int32_t n, uint32_t v,
                                  int32_t state_off) {
  uint32_t w = load4((const int8_t *)row);
  int32_t acc = 0, k = 0;
  for (; k + 4 < n; k += 4) {
    const uint32_t next = load4((const int8_t *)row + k + 4);
    const uint32_t moved = w >> 8 | next << 24;
    memcpy(row + k, &moved, 4);
    acc = quad_dot(acc, quad_in(moved, state_off), load4((const int8_t *)wt + k));
    w = next;
  }
  const uint32_t last = w >> 8 | v << 24;
  memcpy(row + k, &last, 4);
  return quad_dot(acc, quad_in(last, state_off), load4((const int8_t *)wt + k));
}
#define PUSH_DOT_OK(n, state_off) ((n) % 4 == 0 && offsets_ok(state_off, 0))
#endif

#ifndef SVDF_HAS_RANK1
/* svdf_row_q for the usual node (every shared SVDF model's): rank 1, an int8 state of rows of
 * whole words (any length on Helium: fast/mve/fast_mve_svdf.h), on a core where push_dot_s8
 * pays; each filter is its unit. */
static void svdf_row_rank1_s8(const svdf_run *c, const int8_t *xb, uint8_t *state_b,
                              int8_t *out_b) {
  const int32_t n_mem = c->n_memory, state_off = -c->state_zp;
  for (int32_t r = 0; r < c->n_filter; r += 4) {
    int32_t sums[4];
    const int32_t n = feature_sums(c, xb, r, sums);
    for (int32_t k = 0; k < n; ++k) {
      const size_t f = (size_t)(r + k);
      const int32_t v = mak_clamp(requant_q(sums[k], &c->q_feature), INT8_MIN, INT8_MAX);
      int32_t acc = push_dot_s8(state_b + f * n_mem, c->wt + f * n_mem, n_mem,
                                (uint32_t)(v + c->state_zp), state_off);
      if (c->bias) acc = (int32_t)((uint32_t)acc + (uint32_t)c->bias[f]);
      const int32_t y = mak_qadd(requant_q(acc, &c->q_out), c->output_zp);
      out_b[f] = (int8_t)mak_clamp(y, INT8_MIN, INT8_MAX);
    }
  }
}
#endif

/* Filter f of one batch row: its memory row pushed with the new value v, and the row's product
 * with the filter's time weights. */
static inline int32_t filter_time(const svdf_run *c, uint8_t *state_b, int32_t f, uint32_t v) {
  const size_t esize = c->s8 ? 1 : 2, at = (size_t)f * c->n_memory;
  uint8_t *row = state_b + at * esize;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (SVDF_FUSED && c->s8 && PUSH_DOT_OK(c->n_memory, -c->state_zp))
    return push_dot_s8(row, c->wt + at, c->n_memory, v, -c->state_zp);
#endif
  push_row(row, (size_t)c->n_memory * esize, esize, v);
  if (c->s8)
    return mak_dot_s8((const int8_t *)c->wt + at, (const int8_t *)row, c->n_memory, -c->state_zp);
  const int16_t *w16 = (const int16_t *)c->wt + at, *row16 = (const int16_t *)row;
  uint32_t acc = 0;
  for (int32_t m = 0; m < c->n_memory; ++m) acc += (uint32_t)(w16[m] * row16[m]);
  return (int32_t)acc;
}

/* The int8 path for one batch row. Per filter, in order: its feature sum (four filters per pass
 * over the input, each input value widened once for the four) requantized into the state's
 * type; its memory row pushed one step with that value; the row's product with the filter's
 * time weights added to its unit's sum, requantized into the output at the unit's last filter.
 * Each row is complete before it is read, so the sums are TFLM's, without its shift of the
 * whole state first and its two scratch buffers. */
static void svdf_row_q(const svdf_run *c, const int8_t *xb, uint8_t *state_b, int8_t *out_b) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (SVDF_FUSED && c->s8 && c->rank == 1 && PUSH_DOT_OK(c->n_memory, -c->state_zp)) {
    svdf_row_rank1_s8(c, xb, state_b, out_b);
    return;
  }
#endif
  int32_t u = 0, j = 0; /* the unit of the filter and the filter's place among its filters */
  uint32_t acc = 0;
  for (int32_t r = 0; r < c->n_filter; r += 4) {
    int32_t sums[4];
    const int32_t n = feature_sums(c, xb, r, sums);
    for (int32_t k = 0; k < n; ++k) {
      if (j == 0) acc = c->bias ? (uint32_t)c->bias[u] : 0u;
      acc += (uint32_t)filter_time(c, state_b, r + k, feature_value(c, sums[k]));
      if (++j < c->rank) continue;
      const int32_t v = mak_qadd(requant_q((int32_t)acc, &c->q_out), c->output_zp);
      out_b[u++] = (int8_t)mak_clamp(v, INT8_MIN, INT8_MAX);
      j = 0;
    }
  }
}

/* Reads of the node: its operands' data only (eval_data_only), as in svdf_eval. */
static void svdf_eval_q(const svdf_data *d, const ma_node *node, const svdf_shape *s) {
  const ma_tensor *bias_t = node->inputs[3], *state_t = node->inputs[4];
  const svdf_run c = {node->inputs[1]->data,
                      node->inputs[2]->data,
                      bias_t ? bias_t->data : NULL,
                      s->n_input,
                      s->n_filter,
                      s->n_memory,
                      d->rank,
                      -d->u.q.input_zp,
                      d->u.q.state_zp,
                      d->u.q.output_zp,
                      chan_consts(d->u.q.mult1, d->u.q.shift1),
                      chan_consts(d->u.q.mult2, d->u.q.shift2),
                      d->kind == SVDF_S8,
                      d->u.q.mult1,
                      d->u.q.mult2,
                      d->u.q.shift1,
                      d->u.q.shift2};
  const size_t state_row = (size_t)s->n_filter * s->n_memory * (c.s8 ? 1 : 2);
  for (int32_t b = 0; b < s->batch; ++b)
    svdf_row_q(&c, (const int8_t *)node->inputs[0]->data + (size_t)b * s->n_input,
               (uint8_t *)state_t->data + (size_t)b * state_row,
               (int8_t *)node->outputs[0]->data + (size_t)b * s->n_unit);
}

/* Reads of the node: its operands' data only (eval_data_only); the shapes and types are the
 * op data's, from prepare. */
static ma_status svdf_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const svdf_data *d = node->user_data;
  const svdf_shape s = {d->batch, d->n_input, d->n_filter, d->n_memory, d->n_filter / d->rank};
  const ma_tensor *in = node->inputs[0], *bias_t = node->inputs[3];
  ma_tensor *state_t = node->inputs[4];
  const size_t state_n = (size_t)s.batch * s.n_filter * s.n_memory;
  if (d->kind == SVDF_F32) {
    float *state = state_t->data;
    const float *x = in->data, *wf = node->inputs[1]->data, *wt = node->inputs[2]->data;
    const float *bias = bias_t ? bias_t->data : NULL;
    float *out = node->outputs[0]->data;
    shift_state(state, state_n, sizeof(float));
    for (int32_t b = 0; b < s.batch; ++b) {
      for (int32_t r = 0; r < s.n_filter; ++r) {
        float dot = 0.0f;
        for (int32_t c = 0; c < s.n_input; ++c)
          dot += wf[(size_t)r * s.n_input + c] * x[(size_t)b * s.n_input + c];
        state[((size_t)b * s.n_filter + r) * s.n_memory + s.n_memory - 1] = dot;
      }
      for (int32_t u = 0; u < s.n_unit; ++u) {
        float acc = bias ? bias[u] : 0.0f;
        for (int32_t j = 0; j < d->rank; ++j) {
          const size_t f = (size_t)u * d->rank + j;
          float t = 0.0f;
          for (int32_t m = 0; m < s.n_memory; ++m)
            t += wt[f * s.n_memory + m] * state[((size_t)b * s.n_filter + f) * s.n_memory + m];
          acc += t;
        }
        out[(size_t)b * s.n_unit + u] = mak_clampf(acc, d->u.f.f_min, d->u.f.f_max);
      }
    }
    return MA_OK;
  }
  svdf_eval_q(d, node, &s);
  return MA_OK;
}

const ma_kernel mak_svdf = {svdf_prepare, svdf_eval, 0};
