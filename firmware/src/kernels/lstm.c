/* UNIDIRECTIONAL_SEQUENCE_LSTM, float32, without peepholes, projection or layer norm (as
 * TFLM's kernel). The integer variant (int8 input, int16 cell state) is not implemented.
 *
 * Per step: gate = act(W x + b + R h), for the input, forget, cell and output gates;
 * c = f * c + i * g (clipped to +-cell_clip when set); h = o * tanh(c). The float operations
 * follow TFLM's order (input FC plus bias, then plus the recurrent FC). No scratch is
 * needed: each cell unit's four gates are formed together, the previous hidden state is read
 * from the output of the previous step (or the hidden-state variable at the first step), and
 * the variables are updated in place.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"

enum {
  IN_X = 0, IN_W = 1,    /* input-to-gate weights 1..4: input, forget, cell, output */
  IN_R = 5,              /* recurrent-to-gate weights 5..8 */
  IN_PEEP = 9,           /* peepholes 9..11 */
  IN_B = 12,             /* gate biases 12..15 */
  IN_PROJ_W = 16, IN_PROJ_B = 17, IN_H = 18, IN_C = 19, IN_NORM = 20, N_IN = 24
};
enum { GATE_I = 0, GATE_F = 1, GATE_G = 2, GATE_O = 3 };
enum { ACT_TANH = 4, ACT_SIGMOID = 6 }; /* ActivationFunctionType */

typedef struct {
  int32_t act; /* the cell gate's activation */
  float cell_clip;
  int32_t time_major;
} lstm_data;

static const char OP[] = "UNIDIRECTIONAL_SEQUENCE_LSTM";

static ma_status lstm_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, N_IN, N_IN, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *x = node->inputs[IN_X], *out = node->outputs[0];
  if (x->type != MA_FLOAT32)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: only float32 is implemented, not %s", OP,
                   mak_type_name(x->type));
  for (int32_t i = IN_PEEP; i < IN_PEEP + 3; ++i)
    if (mak_input(node, i) != NULL)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: peephole connections", OP);
  if (mak_input(node, IN_PROJ_W) != NULL || mak_input(node, IN_PROJ_B) != NULL)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: projection", OP);
  for (int32_t i = IN_NORM; i < N_IN; ++i)
    if (mak_input(node, i) != NULL)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: layer normalization", OP);
  const ma_tensor *h = mak_input(node, IN_H), *c = mak_input(node, IN_C);
  if (h == NULL || c == NULL || x->ndims != 3 || out->ndims != 3)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: needs 3-D input/output and both state tensors", OP);
  const int32_t n_in = x->dims[2];
  const ma_tensor *w0 = mak_input(node, IN_W);
  if (w0 == NULL || w0->ndims != 2 || w0->dims[1] != n_in)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input weights must be [cells, %d]", OP, (int)n_in);
  const int32_t n_cell = w0->dims[0];
  const bool time_major = ma_opt_i32(&node->options, 3, 0) != 0; /* [T, B, in] */
  const int32_t batch = time_major ? x->dims[1] : x->dims[0];
  for (int32_t g = 0; g < 4; ++g) {
    const ma_tensor *w = mak_input(node, IN_W + g), *r = mak_input(node, IN_R + g);
    const ma_tensor *b = mak_input(node, IN_B + g);
    if (w == NULL || r == NULL || b == NULL)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: CIFG (no input gate) or missing gate", OP);
    if (w->type != MA_FLOAT32 || r->type != MA_FLOAT32 || b->type != MA_FLOAT32)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: hybrid weights are not supported", OP);
    if (w->ndims != 2 || w->dims[0] != n_cell || w->dims[1] != n_in || r->ndims != 2 ||
        r->dims[0] != n_cell || r->dims[1] != n_cell || ma_num_elements(b) != n_cell)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: gate %d weights do not match %d cells", OP, (int)g,
                     (int)n_cell);
  }
  if (h->type != MA_FLOAT32 || c->type != MA_FLOAT32 || out->type != MA_FLOAT32 ||
      ma_num_elements(h) != batch * n_cell || ma_num_elements(c) != batch * n_cell ||
      out->dims[0] != x->dims[0] || out->dims[1] != x->dims[1] || out->dims[2] != n_cell)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: state or output shape does not match", OP);
  lstm_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  d->act = ma_opt_i32(&node->options, 0, 0);
  d->cell_clip = ma_opt_f32(&node->options, 1, 0.0f);
  d->time_major = ma_opt_i32(&node->options, 3, 0);
  node->user_data = d;
  /* TFLM's kernel implements only these two (others silently skip the activation there). */
  if (d->act != ACT_TANH && d->act != ACT_SIGMOID)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: cell activation %d (only TANH, SIGMOID)", OP,
                   (int)d->act);
  return MA_OK;
}

static float sigmoid(float v) {
  /* TFLM's reference float logistic, with its cut-offs. */
  if (v > 16.619047164916992188f) return 1.0f;
  if (v < -9.0f) return expf(v);
  return 1.0f / (1.0f + expf(-v));
}

static float cell_activation(int32_t act, float v) {
  return act == ACT_SIGMOID ? sigmoid(v) : tanhf(v);
}

static float dot(const float *w, const float *v, int32_t n) {
  float s = 0.0f;
  for (int32_t k = 0; k < n; ++k) s += w[k] * v[k];
  return s;
}

static ma_status lstm_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const lstm_data *d = node->user_data;
  const ma_tensor *xt = node->inputs[IN_X];
  float *h_state = node->inputs[IN_H]->data, *c_state = node->inputs[IN_C]->data;
  float *out = node->outputs[0]->data;
  const int32_t n_in = xt->dims[2], n_cell = node->inputs[IN_W]->dims[0];
  const int32_t steps = d->time_major ? xt->dims[0] : xt->dims[1];
  const int32_t batch = d->time_major ? xt->dims[1] : xt->dims[0];
  const float *w[4], *r[4], *bias[4];
  for (int32_t g = 0; g < 4; ++g) {
    w[g] = node->inputs[IN_W + g]->data;
    r[g] = node->inputs[IN_R + g]->data;
    bias[g] = node->inputs[IN_B + g]->data;
  }
  for (int32_t t = 0; t < steps; ++t) {
    for (int32_t b = 0; b < batch; ++b) {
      /* Row (t, b) of the input and output, in either layout. */
      const size_t row = d->time_major ? (size_t)t * batch + b : (size_t)b * steps + t;
      const size_t prev = d->time_major ? (size_t)(t - 1) * batch + b : (size_t)b * steps + t - 1;
      const float *x = (const float *)xt->data + row * n_in;
      const float *h = t == 0 ? h_state + (size_t)b * n_cell : out + prev * n_cell;
      float *c = c_state + (size_t)b * n_cell;
      for (int32_t j = 0; j < n_cell; ++j) {
        float gate[4];
        for (int32_t g = 0; g < 4; ++g) {
          const float in_part = dot(w[g] + (size_t)j * n_in, x, n_in) + bias[g][j];
          gate[g] = in_part + dot(r[g] + (size_t)j * n_cell, h, n_cell);
        }
        const float ig = sigmoid(gate[GATE_I]), fg = sigmoid(gate[GATE_F]);
        const float gg = cell_activation(d->act, gate[GATE_G]), og = sigmoid(gate[GATE_O]);
        float cj = c[j] * fg;
        cj = cj + ig * gg;
        if (d->cell_clip > 0.0f) cj = mak_clampf(cj, -d->cell_clip, d->cell_clip);
        c[j] = cj;
        out[row * n_cell + j] = tanhf(cj) * og;
      }
    }
  }
  /* The hidden-state variable keeps the last step's output. */
  for (int32_t b = 0; b < batch && steps > 0; ++b) {
    const size_t last = d->time_major ? (size_t)(steps - 1) * batch + b
                                      : (size_t)b * steps + steps - 1;
    memcpy(h_state + (size_t)b * n_cell, out + last * n_cell, (size_t)n_cell * sizeof(float));
  }
  return MA_OK;
}

const ma_kernel mak_unidirectional_sequence_lstm = {lstm_prepare, lstm_eval};
