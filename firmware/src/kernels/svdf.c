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
 * effective scale input * feature / state, the sum into the output with state * time / output
 * (both products formed in float, as TFLM does).
 */
#include <string.h>

#include "fast_dot_s8.h"
#include "kernel_util.h"
#include "kernels.h"

typedef struct {
  int32_t rank, input_zp, output_zp, state_zp;
  int32_t mult1, mult2;
  int8_t shift1, shift2;
  int32_t act;
  float f_min, f_max;
} svdf_data;

static const char OP[] = "SVDF";

typedef struct {
  int32_t batch, n_input, n_filter, n_memory, n_unit;
} svdf_shape;

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
  d->act = act;
  if (in->type == MA_FLOAT32) {
    if (wf->type != MA_FLOAT32 || wt->type != MA_FLOAT32)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: hybrid weights are not supported", OP);
    if ((st = mak_check_type(ctx, OP, "state", state, MA_FLOAT32)) != MA_OK ||
        (st = mak_check_type(ctx, OP, "output", out, MA_FLOAT32)) != MA_OK ||
        (bias != NULL && (st = mak_check_type(ctx, OP, "bias", bias, MA_FLOAT32)) != MA_OK))
      return st;
    return mak_act_range_f(ctx, OP, act, &d->f_min, &d->f_max);
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
  if (state->type == MA_INT16 && mak_zero_point(state, 0) != 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: an int16 state must be symmetric", OP);
  d->state_zp = mak_zero_point(state, 0);
  d->input_zp = mak_zero_point(in, 0);
  d->output_zp = mak_zero_point(out, 0);
  int shift;
  mak_quantize_multiplier((double)(si * sf / st_s), &d->mult1, &shift);
  d->shift1 = (int8_t)shift;
  mak_quantize_multiplier((double)(st_s * sw / so), &d->mult2, &shift);
  d->shift2 = (int8_t)shift;
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

/* Filter r's feature sum, requantized into the newest step of its memory. */
static inline void store_feature(const svdf_data *d, void *state, bool s8, const svdf_shape *s,
                                 int32_t b, int32_t r, int32_t sum) {
  const int32_t q = mak_mbqm_i(sum, d->mult1, d->shift1);
  const int32_t dot = s8 ? mak_clamp(q, INT8_MIN, INT8_MAX) : mak_clamp(q, INT16_MIN, INT16_MAX);
  /* TFLM adds the state zero point after clamping; the store then wraps like its cast. */
  const size_t si = ((size_t)b * s->n_filter + r) * s->n_memory + s->n_memory - 1;
  const uint32_t v = (uint32_t)(dot + d->state_zp);
  if (s8) ((int8_t *)state)[si] = (int8_t)((int32_t)(v << 24) >> 24);
  else ((int16_t *)state)[si] = (int16_t)((int32_t)(v << 16) >> 16);
}

static ma_status svdf_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const svdf_data *d = node->user_data;
  const svdf_shape s = shape_of(node, d->rank);
  const ma_tensor *in = node->inputs[0], *bias_t = node->inputs[3];
  ma_tensor *state_t = node->inputs[4];
  const size_t state_n = (size_t)s.batch * s.n_filter * s.n_memory;
  if (in->type == MA_FLOAT32) {
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
        out[(size_t)b * s.n_unit + u] = mak_clampf(acc, d->f_min, d->f_max);
      }
    }
    return MA_OK;
  }
  const bool s8 = state_t->type == MA_INT8; /* else int16 state and time weights */
  const int8_t *x = in->data, *wf = node->inputs[1]->data;
  const void *wt = node->inputs[2]->data;
  const int32_t *bias = bias_t ? bias_t->data : NULL;
  int8_t *out = node->outputs[0]->data;
  shift_state(state_t->data, state_n, s8 ? 1 : 2);
  for (int32_t b = 0; b < s.batch; ++b) {
    /* The feature projection, four filters per pass over the input (each input value widened
     * once for the four), then the remaining filters one by one. */
    const int8_t *xb = x + (size_t)b * s.n_input;
    int32_t r = 0;
    for (; r + 4 <= s.n_filter; r += 4) {
      const int8_t *rows[4];
      for (int k = 0; k < 4; ++k) rows[k] = wf + (size_t)(r + k) * s.n_input;
      int32_t sums[4];
      mak_dot4_s8(rows, xb, s.n_input, -d->input_zp, sums);
      for (int k = 0; k < 4; ++k) store_feature(d, state_t->data, s8, &s, b, r + k, sums[k]);
    }
    for (; r < s.n_filter; ++r) {
      const int32_t sum = mak_dot_s8(wf + (size_t)r * s.n_input, xb, s.n_input, -d->input_zp);
      store_feature(d, state_t->data, s8, &s, b, r, sum);
    }
    for (int32_t u = 0; u < s.n_unit; ++u) {
      uint32_t acc = bias ? (uint32_t)bias[u] : 0u;
      for (int32_t j = 0; j < d->rank; ++j) {
        const size_t f = (size_t)u * d->rank + j;
        const size_t base = ((size_t)b * s.n_filter + f) * s.n_memory;
        if (s8) {
          acc += (uint32_t)mak_dot_s8((const int8_t *)wt + f * s.n_memory,
                                      (const int8_t *)state_t->data + base, s.n_memory,
                                      -d->state_zp);
          continue;
        }
        for (int32_t m = 0; m < s.n_memory; ++m) {
          const int32_t w = ((const int16_t *)wt)[f * s.n_memory + m];
          acc += (uint32_t)(w * ((const int16_t *)state_t->data)[base + m]);
        }
      }
      const int32_t v = mak_add_sat(mak_mbqm_i((int32_t)acc, d->mult2, d->shift2), d->output_zp);
      out[(size_t)b * s.n_unit + u] = (int8_t)mak_clamp(v, INT8_MIN, INT8_MAX);
    }
  }
  return MA_OK;
}

const ma_kernel mak_svdf = {svdf_prepare, svdf_eval, 0};
