/* UNIDIRECTIONAL_SEQUENCE_LSTM without peepholes, projection or layer norm (as TFLM's kernel):
 * float32, and int8 activations with int8 weights, int32 biases and an int16 cell state.
 *
 * Per step: gate = act(W x + b + R h), for the input, forget, cell and output gates;
 * c = f * c + i * g (clipped to +-cell_clip when set); h = o * tanh(c).
 *
 * No scratch is needed (TFLM uses four buffers): each cell unit's four gates are formed
 * together, the previous hidden state is read from the output of the previous step (or from
 * the hidden-state variable at the first step), and the variables are updated in place.
 *
 * Float follows TFLM's operation order. int8 follows TFLM's integer LSTM bit for bit: gate
 * pre-activations in Q3.12 (input and recurrent FC requantized with MultiplyByQuantizedMultiplier,
 * saturating sum), int16 sigmoid/tanh interpolated in
 * mak_sigmoid_table, int16 element-wise products requantized with
 * MultiplyByQuantizedMultiplier; a cell scale above 2^-12 is brought to Q3.12 for its tanh by
 * a right shift of a copy (the pip TFLM leaves the stored cell state unshifted; older sources
 * shifted it in place).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast/fast_dot_s8.h"
#include "fast/fast_s8.h"
#include "fast/mve/fast_mve_lstm.h"
#include "kernel_util.h"
#include "kernels.h"
#include "lstm.h"

enum {
  IN_X = 0, IN_W = 1,    /* input-to-gate weights 1..4: input, forget, cell, output */
  IN_R = 5,              /* recurrent-to-gate weights 5..8 */
  IN_PEEP = 9,           /* peepholes 9..11 */
  IN_B = 12,             /* gate biases 12..15 */
  IN_PROJ_W = 16, IN_PROJ_B = 17, IN_H = 18, IN_C = 19, IN_NORM = 20, N_IN = 24
};

static const char OP[] = "UNIDIRECTIONAL_SEQUENCE_LSTM";

static ma_status check_structure(struct ma_context *ctx, const ma_node *node) {
  for (int32_t i = IN_PEEP; i < IN_PEEP + 3; ++i)
    if (mak_input(node, i) != NULL)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: peephole connections", OP);
  if (mak_input(node, IN_PROJ_W) != NULL || mak_input(node, IN_PROJ_B) != NULL)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: projection", OP);
  for (int32_t i = IN_NORM; i < N_IN; ++i)
    if (mak_input(node, i) != NULL)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: layer normalization", OP);
  for (int32_t g = 0; g < 4; ++g)
    if (mak_input(node, IN_W + g) == NULL || mak_input(node, IN_R + g) == NULL ||
        mak_input(node, IN_B + g) == NULL)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: CIFG (no input gate) or missing gate", OP);
  return MA_OK;
}

static ma_status check_shapes(struct ma_context *ctx, const ma_node *node, bool time_major) {
  const ma_tensor *x = node->inputs[IN_X], *out = node->outputs[0];
  const ma_tensor *h = node->inputs[IN_H], *c = node->inputs[IN_C];
  if (h == NULL || c == NULL || x->ndims != 3 || out->ndims != 3 ||
      node->inputs[IN_W]->ndims != 2)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: needs 3-D input/output and both state tensors", OP);
  const int32_t n_in = x->dims[2], n_cell = node->inputs[IN_W]->dims[0];
  const int32_t batch = time_major ? x->dims[1] : x->dims[0];
  for (int32_t g = 0; g < 4; ++g) {
    const ma_tensor *w = node->inputs[IN_W + g], *r = node->inputs[IN_R + g];
    const ma_tensor *b = node->inputs[IN_B + g];
    if (w->ndims != 2 || w->dims[0] != n_cell || w->dims[1] != n_in || r->ndims != 2 ||
        r->dims[0] != n_cell || r->dims[1] != n_cell || ma_num_elements(b) != n_cell)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: gate %d weights do not match %d cells", OP, (int)g,
                     (int)n_cell);
  }
  /* The states are [batch, cells], as TFLM's Prepare requires (it reads the cell count from
   * the hidden state's second dimension). */
  if (h->ndims != 2 || h->dims[0] != batch || h->dims[1] != n_cell || c->ndims != 2 ||
      c->dims[0] != batch || c->dims[1] != n_cell || out->dims[0] != x->dims[0] ||
      out->dims[1] != x->dims[1] || out->dims[2] != n_cell)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: state or output shape does not match", OP);
  return MA_OK;
}

static ma_status check_types(struct ma_context *ctx, const ma_node *node, uint8_t act_type,
                             uint8_t weight_type, uint8_t bias_type, uint8_t cell_type) {
  ma_status st = MA_OK;
  for (int32_t g = 0; g < 4 && st == MA_OK; ++g) {
    if (node->inputs[IN_W + g]->type != weight_type || node->inputs[IN_R + g]->type != weight_type)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: %s weights with %s activations", OP,
                     mak_type_name(node->inputs[IN_W + g]->type), mak_type_name(act_type));
    st = mak_check_type(ctx, OP, "gate bias", node->inputs[IN_B + g], bias_type);
  }
  if (st == MA_OK) st = mak_check_type(ctx, OP, "hidden state", node->inputs[IN_H], act_type);
  if (st == MA_OK) st = mak_check_type(ctx, OP, "cell state", node->inputs[IN_C], cell_type);
  if (st == MA_OK) st = mak_check_type(ctx, OP, "output", node->outputs[0], act_type);
  return st;
}

static void set_mult(double m, int32_t *mult, int8_t *shift) {
  int s;
  mak_quantize_multiplier(m, mult, &s);
  *shift = (int8_t)s;
}

/* The integer parameters, as TFLM's PrepareGateParametersInteger derives them. */
static ma_status prepare_int8(struct ma_context *ctx, const ma_node *node, lstm_data *d) {
  const ma_tensor *x = node->inputs[IN_X], *h = node->inputs[IN_H], *c = node->inputs[IN_C];
  const float gate_in_scale = 1.0f / 4096, gate_out_scale = 1.0f / 32768;
  const float sx = mak_scale(x, 0), sh = mak_scale(h, 0), sc = mak_scale(c, 0);
  if (!(sx > 0.0f) || !(sh > 0.0f) || !(sc > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: int8 tensors need quantization scales", OP);
  for (int32_t g = 0; g < 4; ++g) {
    const ma_tensor *w = node->inputs[IN_W + g], *r = node->inputs[IN_R + g];
    if (w->quant.count != 1 || r->quant.count != 1 || !(mak_scale(w, 0) > 0.0f) ||
        !(mak_scale(r, 0) > 0.0f))
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: weights need one per-tensor scale", OP);
    /* TFLM forms input_scale * weight_scale in float, then divides in double. */
    set_mult((double)(sx * mak_scale(w, 0)) / (double)gate_in_scale, &d->in_mult[g],
             &d->in_shift[g]);
    set_mult((double)(sh * mak_scale(r, 0)) / (double)gate_in_scale, &d->rec_mult[g],
             &d->rec_shift[g]);
    d->in_woff[g] = -mak_zero_point(w, 0);
    d->rec_woff[g] = -mak_zero_point(r, 0);
  }
  d->x_off = -mak_zero_point(x, 0);
  d->h_zp = mak_zero_point(h, 0);
  d->h_off = -d->h_zp;
  if (mak_zero_point(c, 0) != 0)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: the cell state must be symmetric", OP);
  set_mult((double)gate_out_scale * (double)sc / (double)sc, &d->fc_mult, &d->fc_shift);
  set_mult((double)gate_out_scale * (double)gate_out_scale / (double)sc, &d->ig_mult,
           &d->ig_shift);
  set_mult((double)gate_out_scale * (double)gate_out_scale / (double)sh, &d->out_mult,
           &d->out_shift);
  /* The cell scale must be a power of two (TFLM's CheckedLog2). */
  const double log2_scale = log2((double)sc);
  const double power = round(log2_scale);
  /* Up to 2^-1, so that the tanh input scaling (3 << shift) cannot overflow int32. */
  if (fabs(log2_scale - power) > 1e-3 || power < -40 || power > -1)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: cell state scale must be a power of two from 2^-40 to 2^-1", OP);
  d->tanh_shift = 15 + (int32_t)power - 3;
  double clip = (double)d->cell_clip / (double)sc;
  clip = clip < -32768.0 ? -32768.0 : (clip > 32767.0 ? 32767.0 : clip);
  d->qclip = (int16_t)clip;
  return MA_OK;
}

static ma_status lstm_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, N_IN, N_IN, 1, 1);
  if (st != MA_OK || (st = check_structure(ctx, node)) != MA_OK) return st;
  const bool time_major = ma_opt_i32(&node->options, 3, 0) != 0; /* [T, B, in] */
  if ((st = check_shapes(ctx, node, time_major)) != MA_OK) return st;
  const uint8_t xt = node->inputs[IN_X]->type;
  if (xt == MA_FLOAT32)
    st = check_types(ctx, node, MA_FLOAT32, MA_FLOAT32, MA_FLOAT32, MA_FLOAT32);
  else if (xt == MA_INT8)
    st = check_types(ctx, node, MA_INT8, MA_INT8, MA_INT32, MA_INT16);
  else
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: input type %s", OP, mak_type_name(xt));
  if (st != MA_OK) return st;
  lstm_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  d->act = ma_opt_i32(&node->options, 0, 0);
  d->cell_clip = ma_opt_f32(&node->options, 1, 0.0f);
  d->time_major = time_major;
  /* TFLM's kernel implements only these two (others silently skip the activation there). */
  if (d->act != ACT_TANH && d->act != ACT_SIGMOID)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: cell activation %d (only TANH, SIGMOID)", OP,
                   (int)d->act);
  if (!(d->cell_clip >= 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: negative cell clip", OP);
  return xt == MA_INT8 ? prepare_int8(ctx, node, d) : MA_OK;
}

/* ------------------------------------------------------------------ float */

static float sigmoid(float v) {
  /* TFLM's reference float logistic, with its cut-offs. */
  if (v > 16.619047164916992188f) return 1.0f;
  if (v < -9.0f) return expf(v);
  return 1.0f / (1.0f + expf(-v));
}

static float dot(const float *w, const float *v, int32_t n) {
  float s = 0.0f;
  for (int32_t k = 0; k < n; ++k) s += w[k] * v[k];
  return s;
}

/* One cell unit j of one step, float. */
static float unit_f32(const lstm_data *d, const ma_node *node, const float *x, const float *h,
                      float *c, int32_t j) {
  const int32_t n_in = node->inputs[IN_X]->dims[2], n_cell = node->inputs[IN_W]->dims[0];
  float gate[4];
  for (int32_t g = 0; g < 4; ++g) {
    const float *w = (const float *)node->inputs[IN_W + g]->data + (size_t)j * n_in;
    const float *r = (const float *)node->inputs[IN_R + g]->data + (size_t)j * n_cell;
    const float in_part = dot(w, x, n_in) + ((const float *)node->inputs[IN_B + g]->data)[j];
    gate[g] = in_part + dot(r, h, n_cell);
  }
  const float ig = sigmoid(gate[GATE_I]), fg = sigmoid(gate[GATE_F]), og = sigmoid(gate[GATE_O]);
  const float gg = d->act == ACT_SIGMOID ? sigmoid(gate[GATE_G]) : tanhf(gate[GATE_G]);
  float cj = c[j] * fg;
  cj = cj + ig * gg;
  if (d->cell_clip > 0.0f) cj = mak_clampf(cj, -d->cell_clip, d->cell_clip);
  c[j] = cj;
  return tanhf(cj) * og;
}

/* ------------------------------------------------------------------ int8 */

/* TFLM's int16 logistic (Q3.12 in, Q0.15 out), input pre-scaled by `mult`. */
static inline int16_t sigmoid_q15(int32_t x, int32_t mult) {
  const int32_t v = x * mult;
  const uint32_t a = (uint32_t)abs(v), uh = a >> 9;
  uint32_t r;
  if (uh >= 255) {
    r = 0x7FFFu << 10;
  } else {
    const uint32_t ua = mak_sigmoid_table[uh], ub = mak_sigmoid_table[uh + 1];
    r = (ua << 9) + (a & 0x1FFu) * (ub - ua);
  }
  r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
  return (int16_t)(r >> 10);
}

/* TFLM's int16 tanh (input pre-scaled by `mult`, output Q0.15). */
static inline int16_t tanh_q15(int32_t x, int32_t mult) {
  const int32_t v = x * mult;
  const uint32_t a = (uint32_t)abs(v), uh = a >> 8;
  int32_t r;
  if (uh >= 255) {
    r = 0xFFFF << 8;
  } else {
    const uint32_t ua = mak_sigmoid_table[uh], ub = mak_sigmoid_table[uh + 1];
    r = (int32_t)((ua << 8) + (a & 0xFFu) * (ub - ua));
  }
  r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return (int16_t)(r >> 8);
}

static int32_t sat16(int32_t v) { return mak_clamp(v, INT16_MIN, INT16_MAX); }

/* sum_k (w[k] + w_off) * (x[k] + x_off), wrapping like int32: mak_dot_s8's four-wide form for
 * symmetric weights (the usual case), the plain loop otherwise. */
static int32_t dot_off(const int8_t *w, int32_t w_off, const int8_t *x, int32_t x_off,
                       int32_t n) {
  if (w_off == 0) return mak_dot_s8(w, x, n, x_off);
  uint32_t acc = 0;
  for (int32_t k = 0; k < n; ++k) acc += (uint32_t)((w[k] + w_off) * (x[k] + x_off));
  return (int32_t)acc;
}

static gate_rows rows_of(const lstm_data *d, const ma_node *node) {
  gate_rows gr;
  gr.n_in = node->inputs[IN_X]->dims[2];
  gr.n_cell = node->inputs[IN_W]->dims[0];
  gr.symmetric = true;
  for (int32_t g = 0; g < 4; ++g) {
    gr.w[g] = node->inputs[IN_W + g]->data;
    gr.r[g] = node->inputs[IN_R + g]->data;
    gr.bias[g] = node->inputs[IN_B + g]->data;
    gr.symmetric = gr.symmetric && d->in_woff[g] == 0 && d->rec_woff[g] == 0;
    gr.in_q[g] = chan_consts(d->in_mult[g], d->in_shift[g]);
    gr.rec_q[g] = chan_consts(d->rec_mult[g], d->rec_shift[g]);
  }
  gr.fc_q = chan_consts(d->fc_mult, d->fc_shift);
  gr.ig_q = chan_consts(d->ig_mult, d->ig_shift);
  gr.out_q = chan_consts(d->out_mult, d->out_shift);
  if (FAST_MVE) mak_mve_lstm_lanes(&gr, d);
  return gr;
}

/* A gate pre-activation in Q3.12 from its input and recurrent sums. Both sums wrap like int32
 * and requantize with the 32-bit MultiplyByQuantizedMultiplier: that is what the pip TFLM
 * computes (checked bit for bit; the 64-bit rounding variant differs in the last bit). */
static inline int32_t gate_from_sums(const gate_rows *gr, int32_t g, int32_t acc, int32_t racc) {
  const int32_t in_part = sat16(requant_q(acc, &gr->in_q[g]));
  const int32_t rec_part = sat16(requant_q(racc, &gr->rec_q[g]));
  return sat16(in_part + rec_part);
}

/* The four gate pre-activations of unit j, in GATE_ order: with symmetric weights (the usual
 * case) each input is widened once for the four gates' rows (mak_dot4_s8). */
static void gates_q(const lstm_data *d, const gate_rows *gr, const int8_t *x, const int8_t *h,
                    int32_t j, int32_t pre[4]) {
  const int8_t *w[4], *r[4];
  for (int32_t g = 0; g < 4; ++g) {
    w[g] = gr->w[g] + (size_t)j * gr->n_in;
    r[g] = gr->r[g] + (size_t)j * gr->n_cell;
  }
  int32_t acc[4], racc[4];
  if (gr->symmetric) {
    mak_dot4_s8(w, x, gr->n_in, d->x_off, acc);
    mak_dot4_s8(r, h, gr->n_cell, d->h_off, racc);
  } else {
    for (int32_t g = 0; g < 4; ++g) {
      acc[g] = dot_off(w[g], d->in_woff[g], x, d->x_off, gr->n_in);
      racc[g] = dot_off(r[g], d->rec_woff[g], h, d->h_off, gr->n_cell);
    }
  }
  for (int32_t g = 0; g < 4; ++g) {
    const uint32_t bias = (uint32_t)gr->bias[g][j];
    pre[g] = gate_from_sums(gr, g, (int32_t)(bias + (uint32_t)acc[g]), racc[g]);
  }
}

/* Cell unit j of one step from its gate pre-activations (Q3.12), int8: returns the new hidden
 * value. */
static int8_t cell_q(const lstm_data *d, const gate_rows *gr, const int32_t pre[4], int16_t *c,
                     int32_t j) {
  const int32_t ig = sigmoid_q15(pre[GATE_I], 3);
  const int32_t fg = sigmoid_q15(pre[GATE_F], 3);
  const int32_t gg = d->act == ACT_SIGMOID ? sigmoid_q15(pre[GATE_G], 3) : tanh_q15(pre[GATE_G], 3);
  const int32_t og = sigmoid_q15(pre[GATE_O], 3);
  const int32_t kept = sat16(requant_q(fg * c[j], &gr->fc_q));
  const int32_t added = sat16(requant_q(ig * gg, &gr->ig_q));
  int32_t cj = sat16(kept + added);
  /* As TFLM: the float clip decides; a clip under one cell-state step clamps to 0. */
  if (d->cell_clip > 0.0f) cj = mak_clamp(cj, -d->qclip, d->qclip);
  c[j] = (int16_t)cj;
  /* tanh wants Q3.12: scale the cell value by 2^tanh_shift; a right shift (cell scale below
   * 2^-12) multiplies by 3 first and rounds, as TFLM's Tanh with input_multiplier 3. */
  const int32_t s = -d->tanh_shift;
  const int32_t t = s > 0 ? tanh_q15((cj * 3 + (1 << (s - 1))) >> s, 1)
                          : tanh_q15(cj, 3 << d->tanh_shift);
  const int32_t v = mak_add_sat(requant_q(t * og, &gr->out_q), d->h_zp);
  return (int8_t)mak_clamp(v, INT8_MIN, INT8_MAX);
}

/* Every unit of one step with symmetric weights, UNIT_CHUNK units at a time: each gate's input
 * and recurrent sums of the chunk's units by FULLY_CONNECTED's row sums (fast_s8.c: four weight
 * rows per pass, each input word widened once for them), then the chunk's cells. false, having
 * done nothing, where those loops do not run (the offsets). The chunk's reads of x and h come
 * before its writes, as in unit order. */
enum { UNIT_CHUNK = 16 }; /* 128 sums (512 bytes) on the stack */

/* acc[i] = gate_from_sums(gr, g, bias[i] + acc[i], racc[i]) for the k units of a chunk. */
static void gate_chunk(const gate_rows *gr, int32_t g, const int32_t *bias, int32_t k,
                       int32_t *acc, const int32_t *racc) {
  const chan_q in_q = gr->in_q[g], rec_q = gr->rec_q[g];
  for (int32_t i = 0; i < k; ++i) { /* gate_from_sums */
    const int32_t sum = (int32_t)((uint32_t)bias[i] + (uint32_t)acc[i]);
    const int32_t in_part = sat16(requant_q(sum, &in_q));
    acc[i] = sat16(in_part + sat16(requant_q(racc[i], &rec_q)));
  }
}

static bool units_by_rows(const lstm_data *d, const gate_rows *gr, const int8_t *x,
                          const int8_t *h, int16_t *c, int8_t *out) {
  if (!offsets_ok(d->x_off, 0) || !offsets_ok(d->h_off, 0)) return false;
  for (int32_t j0 = 0; j0 < gr->n_cell; j0 += UNIT_CHUNK) {
    const int32_t k = gr->n_cell - j0 < UNIT_CHUNK ? gr->n_cell - j0 : UNIT_CHUNK;
    int32_t acc[4][UNIT_CHUNK], racc[4][UNIT_CHUNK];
    for (int32_t g = 0; g < 4; ++g) {
      if (!mak_row_sums_s8(x, gr->w[g] + (size_t)j0 * gr->n_in, gr->n_in, k, d->x_off, acc[g]) ||
          !mak_row_sums_s8(h, gr->r[g] + (size_t)j0 * gr->n_cell, gr->n_cell, k, d->h_off,
                           racc[g]))
        return false; /* only at the first chunk: the offsets decide */
    }
    for (int32_t g = 0; g < 4; ++g) /* gate by gate: its constants stay in registers */
      gate_chunk(gr, g, gr->bias[g] + j0, k, acc[g], racc[g]);
    for (int32_t i = 0; i < k; ++i) {
      const int32_t pre[4] = {acc[0][i], acc[1][i], acc[2][i], acc[3][i]};
      out[j0 + i] = cell_q(d, gr, pre, c, j0 + i);
    }
  }
  return true;
}

/* Every unit of one step, int8: out[j] for the n_cell units. */
static void step_q(const lstm_data *d, const gate_rows *gr, const int8_t *x, const int8_t *h,
                   int16_t *c, int8_t *out) {
  int32_t j = 0;
  if (FAST_MVE && gr->symmetric) {
    mak_mve_lstm_step_q(d, gr, x, h, c, out);
    return;
  }
  if (gr->symmetric && units_by_rows(d, gr, x, h, c, out)) return;
  for (; j < gr->n_cell; ++j) {
    int32_t pre[4];
    gates_q(d, gr, x, h, j, pre);
    out[j] = cell_q(d, gr, pre, c, j);
  }
}

static ma_status lstm_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const lstm_data *d = node->user_data;
  const ma_tensor *xt = node->inputs[IN_X];
  const bool q = xt->type == MA_INT8;
  const size_t esize = q ? 1 : sizeof(float);
  uint8_t *h_state = node->inputs[IN_H]->data;
  uint8_t *out = node->outputs[0]->data;
  const int32_t n_in = xt->dims[2], n_cell = node->inputs[IN_W]->dims[0];
  const int32_t steps = d->time_major ? xt->dims[0] : xt->dims[1];
  const int32_t batch = d->time_major ? xt->dims[1] : xt->dims[0];
  const gate_rows gr = q ? rows_of(d, node) : (gate_rows){0};
  for (int32_t t = 0; t < steps; ++t) {
    for (int32_t b = 0; b < batch; ++b) {
      /* Row (t, b) of the input and output, in either layout. */
      const size_t row = d->time_major ? (size_t)t * batch + b : (size_t)b * steps + t;
      const size_t prev = d->time_major ? (size_t)(t - 1) * batch + b : (size_t)b * steps + t - 1;
      const uint8_t *x = (const uint8_t *)xt->data + row * n_in * esize;
      const uint8_t *h = t == 0 ? h_state + (size_t)b * n_cell * esize
                                : out + prev * n_cell * esize;
      if (q) {
        step_q(d, &gr, (const int8_t *)x, (const int8_t *)h,
               (int16_t *)node->inputs[IN_C]->data + (size_t)b * n_cell,
               (int8_t *)out + row * n_cell);
        continue;
      }
      for (int32_t j = 0; j < n_cell; ++j) {
        float *c = (float *)node->inputs[IN_C]->data + (size_t)b * n_cell;
        ((float *)out)[row * n_cell + j] =
            unit_f32(d, node, (const float *)x, (const float *)h, c, j);
      }
    }
  }
  /* The hidden-state variable keeps the last step's output. */
  for (int32_t b = 0; b < batch && steps > 0; ++b) {
    const size_t last = d->time_major ? (size_t)(steps - 1) * batch + b
                                      : (size_t)b * steps + steps - 1;
    memcpy(h_state + (size_t)b * n_cell * esize, out + last * n_cell * esize,
           (size_t)n_cell * esize);
  }
  return MA_OK;
}

const ma_kernel mak_unidirectional_sequence_lstm = {lstm_prepare, lstm_eval, 0};
