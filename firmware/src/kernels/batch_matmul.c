/* BATCH_MATMUL: out[..., i, j] = sum_k x[..., i, k] * y[..., k, j], float32, int8 and int16,
 * with adj_x / adj_y (transposed operands) and batch dimensions broadcast (ranks 2 to 5).
 *
 * Same arithmetic as TFLM's reference: float sums in k order from 0; int8 sums
 * (x - x_zp) * (y - y_zp) in int32 and requantizes with the multiplier of
 * float(x_scale * y_scale) / out_scale (TFLM forms that product in float), no activation;
 * int16 (zero points 0) sums in int64 and uses the 64-bit MultiplyByQuantizedMultiplier.
 * TFLM keeps transposed copies of the operands in persistent memory (the whole y when adj_y is
 * false, the usual case); this kernel indexes the operands in place instead.
 */
#include "kernel_util.h"
#include "kernels.h"

static const char OP[] = "BATCH_MATMUL";

/* BatchMatMulOptions slots. */
enum { OPT_ADJ_X, OPT_ADJ_Y, OPT_ASYMMETRIC_QUANTIZE_INPUTS };

typedef struct {
  int32_t mult, x_offset, y_offset, out_offset, act_min, act_max;
  int8_t shift;
} bmm_data;

/* Rows, depth and columns of the product and the element strides of both operands. */
typedef struct {
  int32_t rank;                               /* output rank */
  int32_t batch[MA_MAX_DIMS];                 /* output batch dims (rank - 2 of them) */
  int32_t x_batch_stride[MA_MAX_DIMS], y_batch_stride[MA_MAX_DIMS]; /* 0 where broadcast */
  int32_t rows, depth, cols;
  int32_t x_row, x_k, y_k, y_col;             /* strides of x[i][k] and y[k][j] */
} bmm_geom;

/* Batch strides of t for the output's batch dims (right-aligned, 0 where t's dim is 1). */
static void batch_strides(const ma_tensor *t, const bmm_geom *g, int32_t *stride) {
  int32_t s = t->dims[t->ndims - 1] * t->dims[t->ndims - 2];
  for (int32_t d = g->rank - 3; d >= 0; --d) {
    const int32_t td = d - (g->rank - t->ndims);
    const int32_t n = td >= 0 ? t->dims[td] : 1;
    stride[d] = n == 1 ? 0 : s;
    s *= n;
  }
}

static ma_status geometry(struct ma_context *ctx, const ma_node *node, bmm_geom *g) {
  const ma_tensor *x = node->inputs[0], *y = node->inputs[1], *out = node->outputs[0];
  const bool adj_x = ma_opt_i32(&node->options, OPT_ADJ_X, 0) != 0;
  const bool adj_y = ma_opt_i32(&node->options, OPT_ADJ_Y, 0) != 0;
  if (x->ndims < 2 || x->ndims > 5 || y->ndims < 2 || y->ndims > 5)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: operand ranks %d and %d, expected 2 to 5", OP,
                   (int)x->ndims, (int)y->ndims);
  g->rank = x->ndims > y->ndims ? x->ndims : y->ndims;
  const int32_t x0 = x->dims[x->ndims - 2], x1 = x->dims[x->ndims - 1];
  const int32_t y0 = y->dims[y->ndims - 2], y1 = y->dims[y->ndims - 1];
  g->rows = adj_x ? x1 : x0;
  g->depth = adj_x ? x0 : x1;
  g->cols = adj_y ? y0 : y1;
  g->x_row = adj_x ? 1 : x1;
  g->x_k = adj_x ? x1 : 1;
  g->y_k = adj_y ? 1 : y1;
  g->y_col = adj_y ? y1 : 1;
  if ((adj_y ? y1 : y0) != g->depth)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: depths %d and %d differ", OP, (int)g->depth,
                   (int)(adj_y ? y1 : y0));
  int64_t total = (int64_t)g->rows * g->cols;
  for (int32_t d = 0; d < g->rank - 2; ++d) {
    const int32_t xd = d - (g->rank - x->ndims), yd = d - (g->rank - y->ndims);
    const int32_t a = xd >= 0 ? x->dims[xd] : 1, b = yd >= 0 ? y->dims[yd] : 1;
    if (a != b && a != 1 && b != 1)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: batch dims %d and %d do not broadcast", OP,
                     (int)a, (int)b);
    g->batch[d] = a == 1 ? b : a;
    total *= g->batch[d];
  }
  /* TFLM reshapes the output to the product's shape; it must hold as many elements. */
  if (total != ma_num_elements(out))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output has %d elements, the product %ld", OP,
                   (int)ma_num_elements(out), (long)total);
  batch_strides(x, g, g->x_batch_stride);
  batch_strides(y, g, g->y_batch_stride);
  return MA_OK;
}

static ma_status bmm_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 2, 2, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *x = node->inputs[0], *y = node->inputs[1], *out = node->outputs[0];
  const uint32_t types = MAK_TYPE_BIT(MA_FLOAT32) | MAK_TYPE_BIT(MA_INT8) | MAK_TYPE_BIT(MA_INT16);
  if ((st = mak_check_input_type(ctx, OP, x, types, "float32, int8, int16")) != MA_OK ||
      (st = mak_check_type(ctx, OP, "second input", y, x->type)) != MA_OK ||
      (st = mak_check_type(ctx, OP, "output", out, x->type)) != MA_OK)
    return st;
  bmm_geom g;
  if ((st = geometry(ctx, node, &g)) != MA_OK) return st;
  bmm_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  if (x->type == MA_FLOAT32) return MA_OK;
  if (x->quant.count != 1 || y->quant.count != 1 || out->quant.count != 1)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: %s needs per-tensor quantization", OP,
                   mak_type_name(x->type));
  const float xs = mak_scale(x, 0), ys = mak_scale(y, 0), os = mak_scale(out, 0);
  if (!(xs > 0.0f) || !(ys > 0.0f) || !(os > 0.0f))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: quantized tensors need positive scales", OP);
  d->x_offset = -mak_zero_point(x, 0);
  d->y_offset = -mak_zero_point(y, 0);
  d->out_offset = mak_zero_point(out, 0);
  if (x->type == MA_INT16 && (d->x_offset != 0 || d->y_offset != 0 || d->out_offset != 0))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: int16 zero points must be 0", OP);
  int shift;
  /* In double: TFLM's source forms xs * ys in float, but the pip TFLM's outputs are those of
   * the product in double (a crafted int8 case of tests/runtime/test_requant_sweep.py). */
  mak_quantize_multiplier((double)xs * (double)ys / (double)os, &d->mult, &shift);
  d->shift = (int8_t)shift;
  return mak_act_range_q(ctx, OP, MAK_ACT_NONE, out, &d->act_min, &d->act_max);
}

/* One output element: the dot product of row i of x and column j of y. */
static void dot(const ma_node *node, const bmm_data *d, const bmm_geom *g, size_t xo, size_t yo,
                size_t oi) {
  const uint8_t type = node->inputs[0]->type;
  if (type == MA_FLOAT32) {
    const float *x = (const float *)node->inputs[0]->data + xo;
    const float *y = (const float *)node->inputs[1]->data + yo;
    float total = 0.0f;
    for (int32_t k = 0; k < g->depth; ++k) total += x[k * g->x_k] * y[k * g->y_k];
    ((float *)node->outputs[0]->data)[oi] = total;
  } else if (type == MA_INT8) {
    const int8_t *x = (const int8_t *)node->inputs[0]->data + xo;
    const int8_t *y = (const int8_t *)node->inputs[1]->data + yo;
    uint32_t acc = 0; /* wraps like TFLM's int32 */
    for (int32_t k = 0; k < g->depth; ++k)
      acc += (uint32_t)((x[k * g->x_k] + d->x_offset) * (y[k * g->y_k] + d->y_offset));
    ((int8_t *)node->outputs[0]->data)[oi] = (int8_t)mak_requantize(
        (int32_t)acc, d->mult, d->shift, d->out_offset, d->act_min, d->act_max);
  } else {
    const int16_t *x = (const int16_t *)node->inputs[0]->data + xo;
    const int16_t *y = (const int16_t *)node->inputs[1]->data + yo;
    int64_t acc = 0; /* |x * y| < 2^30: no overflow below 2^33 terms */
    for (int32_t k = 0; k < g->depth; ++k) acc += (int64_t)x[k * g->x_k] * y[k * g->y_k];
    const int32_t v = mak_mbqm64(acc, d->mult, d->shift);
    ((int16_t *)node->outputs[0]->data)[oi] = (int16_t)mak_clamp(v, d->act_min, d->act_max);
  }
}

static ma_status bmm_eval(struct ma_context *ctx, ma_node *node) {
  bmm_geom g;
  const ma_status st = geometry(ctx, node, &g);
  if (st != MA_OK) return st;
  const bmm_data *d = node->user_data;
  if (ma_num_elements(node->outputs[0]) == 0) return MA_OK;
  int32_t idx[MA_MAX_DIMS] = {0};
  size_t xb = 0, yb = 0, oi = 0;
  const int32_t nb = g.rank - 2;
  for (;;) {
    for (int32_t i = 0; i < g.rows; ++i)
      for (int32_t j = 0; j < g.cols; ++j)
        dot(node, d, &g, xb + (size_t)i * g.x_row, yb + (size_t)j * g.y_col, oi++);
    int32_t b = nb - 1;
    for (; b >= 0; --b) { /* next batch index, odometer style */
      xb += (size_t)g.x_batch_stride[b];
      yb += (size_t)g.y_batch_stride[b];
      if (++idx[b] < g.batch[b]) break;
      xb -= (size_t)g.x_batch_stride[b] * (size_t)g.batch[b];
      yb -= (size_t)g.y_batch_stride[b] * (size_t)g.batch[b];
      idx[b] = 0;
    }
    if (b < 0) return MA_OK;
  }
}

const ma_kernel mak_batch_matmul = {bmm_prepare, bmm_eval, 0};
