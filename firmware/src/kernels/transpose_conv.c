/* TRANSPOSE_CONV, NHWC: float32, int8 (per-channel) and int16 activations with int8 weights.
 *
 * TFLM's reference scatters every input pixel times the filter into the output (int8: into an
 * int32 scratch buffer the size of the output, int16: int64), then adds the bias and
 * requantizes. This kernel gathers instead: output pixel (oy, ox) sums input pixels (iy, ix)
 * with oy = iy * stride - pad + fy. Each (iy, ix) meets a pixel through one filter tap, so
 * visiting iy, ix, then input channels in ascending order adds the same terms in the same
 * order as the scatter: float results are identical and integer sums are exact, and no
 * scratch buffer is needed. TFLM's integer arithmetic: int8 adds the input offset (the
 * filter is symmetric, its zero point unused) and requantizes per channel; int16 uses no
 * offsets, an int64 bias (or int16, widened) and the 64-bit MultiplyByQuantizedMultiplier.
 * int8 sums four output channels per pass over an input pixel (mak_dot4_s8: SMLAD on the DSP;
 * fast/mve/fast_mve_transpose_conv.h on Helium) into a block of int32 sums on the stack; each
 * output pixel is written after all its reads, as before.
 */
#include "fast/fast_dot_s8.h"
#include "kernel_util.h"
#include "kernels.h"

static const char OP[] = "TRANSPOSE_CONV";

/* Inputs and TransposeConvOptions slots. */
enum { IN_SHAPE, IN_FILTER, IN_INPUT, IN_BIAS };
enum { OPT_PADDING, OPT_STRIDE_W, OPT_STRIDE_H, OPT_ACTIVATION };

static ma_status tconv_prepare(struct ma_context *ctx, ma_node *node) {
  ma_status st = mak_check_node(ctx, node, OP, 3, 4, 3, 1);
  if (st != MA_OK) return st;
  const ma_tensor *filter = node->inputs[IN_FILTER], *in = node->inputs[IN_INPUT];
  const ma_tensor *bias = mak_input(node, IN_BIAS), *out = node->outputs[0];
  if ((st = mak_check_weighted_types(ctx, OP, in, filter, bias, out, MA_INT64, MA_INT16)) != MA_OK)
    return st;
  if (in->ndims != 4 || filter->ndims != 4 || out->ndims != 4)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input, filter and output must be 4-D", OP);
  const int32_t cout = out->dims[3];
  if (in->dims[0] != out->dims[0] || filter->dims[0] != cout || filter->dims[3] != in->dims[3])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: filter %dx%dx%dx%d does not map %d to %d channels",
                   OP, (int)filter->dims[0], (int)filter->dims[1], (int)filter->dims[2],
                   (int)filter->dims[3], (int)in->dims[3], (int)cout);
  if (bias != NULL && ma_num_elements(bias) != cout)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: bias has %d values for %d channels", OP,
                   (int)ma_num_elements(bias), (int)cout);
  const bool is_f32 = in->type == MA_FLOAT32;
  mak_conv_data *d = mak_conv_data_alloc(ctx, is_f32 ? 0 : (filter->quant.count > 1 ? cout : 1));
  if (d == NULL) return MA_ERR_ARENA;
  node->user_data = d;
  /* TFLM computes the padding as for a convolution from the output to the input size. */
  const ma_options *o = &node->options;
  const int32_t padding = ma_opt_i32(o, OPT_PADDING, 0), act = ma_opt_i32(o, OPT_ACTIVATION, 0);
  const int32_t stride_w = ma_opt_i32(o, OPT_STRIDE_W, 0), stride_h = ma_opt_i32(o, OPT_STRIDE_H, 0);
  int32_t unused;
  if ((st = mak_padding(ctx, OP, padding, out->dims[1], filter->dims[1], stride_h, 1, &unused,
                        &d->pad_h)) != MA_OK ||
      (st = mak_padding(ctx, OP, padding, out->dims[2], filter->dims[2], stride_w, 1, &unused,
                        &d->pad_w)) != MA_OK)
    return st;
  d->stride_w = (int16_t)stride_w;
  d->stride_h = (int16_t)stride_h;
  d->dil_w = d->dil_h = 1;
  if (is_f32) return mak_act_range_f(ctx, OP, act, &d->f_min, &d->f_max);
  if ((st = mak_conv_quantize(ctx, OP, d, in, filter, out, act, cout)) != MA_OK) return st;
  /* TFLM's int16 kernel applies no zero points at all: refuse models that have them. */
  if (in->type == MA_INT16 && (d->input_offset != 0 || d->output_offset != 0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 activations need zero points 0", OP);
  return MA_OK;
}

/* Input pixels [*first, *end) that reach output coordinate o through a tap in [0, taps). */
static void source_range(int32_t o, int32_t pad, int32_t stride, int32_t taps, int32_t size,
                         int32_t *first, int32_t *end) {
  const int32_t hi = o + pad; /* i * stride <= hi and i * stride > hi - taps */
  int32_t f = hi - taps + 1 <= 0 ? 0 : (hi - taps + stride) / stride;
  int32_t e = hi < 0 ? 0 : hi / stride + 1;
  if (e > size) e = size;
  if (f > e) f = e;
  *first = f;
  *end = e;
}

typedef struct {
  int32_t in_h, in_w, cin, kh, kw;
} tconv_shape;

/* The sum for output channel oc at output pixel (oy, ox) of batch b: float in *fsum,
 * int16's in *isum (int8: sums4_s8). */
static void gather(const ma_node *node, const mak_conv_data *d, const tconv_shape *s, int32_t b,
                   int32_t oy, int32_t ox, int32_t oc, float *fsum, int64_t *isum) {
  const ma_tensor *in = node->inputs[IN_INPUT], *filter = node->inputs[IN_FILTER];
  int32_t y0, y1, x0, x1;
  source_range(oy, d->pad_h, d->stride_h, s->kh, s->in_h, &y0, &y1);
  source_range(ox, d->pad_w, d->stride_w, s->kw, s->in_w, &x0, &x1);
  float f = 0.0f;
  int64_t acc64 = 0;
  for (int32_t iy = y0; iy < y1; ++iy) {
    const int32_t fy = oy + d->pad_h - iy * d->stride_h;
    for (int32_t ix = x0; ix < x1; ++ix) {
      const int32_t fx = ox + d->pad_w - ix * d->stride_w;
      const size_t ii = (((size_t)b * s->in_h + iy) * s->in_w + ix) * s->cin;
      const size_t fi = (((size_t)oc * s->kh + fy) * s->kw + fx) * s->cin;
      if (in->type == MA_FLOAT32) {
        const float *ip = (const float *)in->data + ii, *fp = (const float *)filter->data + fi;
        for (int32_t c = 0; c < s->cin; ++c) f += ip[c] * fp[c];
      } else {
        const int16_t *ip = (const int16_t *)in->data + ii;
        const int8_t *fp = (const int8_t *)filter->data + fi;
        for (int32_t c = 0; c < s->cin; ++c) acc64 += (int64_t)ip[c] * fp[c];
      }
    }
  }
  *fsum = f;
  *isum = acc64;
}

/* Bias, requantization and clamp of one float or int16 output value. */
static void store(const ma_node *node, const mak_conv_data *d, size_t oi, int32_t oc, float fsum,
                  int64_t isum) {
  const ma_tensor *bias = mak_input(node, IN_BIAS), *out = node->outputs[0];
  const int32_t mi = d->n_mult > 1 ? oc : 0; /* integer types only: float has none */
  switch (out->type) {
    case MA_FLOAT32: {
      const float v = bias != NULL ? fsum + ((const float *)bias->data)[oc] : fsum;
      ((float *)out->data)[oi] = mak_clampf(v, d->f_min, d->f_max);
      break;
    }
    default: {
      uint64_t acc = (uint64_t)isum; /* wraps on hostile biases instead of overflowing */
      if (bias != NULL)
        acc += (uint64_t)(bias->type == MA_INT16 ? ((const int16_t *)bias->data)[oc]
                                                 : mak_load_i64(bias->data, oc));
      const int32_t v = mak_mbqm64((int64_t)acc, d->mult[mi], mak_conv_shifts(d)[mi]);
      ((int16_t *)out->data)[oi] = (int16_t)mak_clamp(v, d->act_min, d->act_max);
      break;
    }
  }
}

/* int8 output channels are summed in blocks of this many int32 sums on the stack. */
#define TCONV_BLOCK 32

#if FAST_MVE
#include "fast/mve/fast_mve_transpose_conv.h" /* add_dot4, requant_block, init_block */
#else
/* acc[k] += sum_i w_k[i] * (x[i] + off) for rows w_k = w + k * ws, k < 4, wrapping. */
static inline void add_dot4(int32_t acc[4], const int8_t *x, const int8_t *w, size_t ws,
                            int32_t n, int32_t off) {
  const int8_t *const rows[4] = {w, w + ws, w + 2 * ws, w + 3 * ws};
  int32_t v[4];
  mak_dot4_s8(rows, x, n, off, v);
  for (int32_t k = 0; k < 4; ++k) acc[k] = (int32_t)((uint32_t)acc[k] + (uint32_t)v[k]);
}

/* Requantizes the n sums of channels oc.. into dst. */
static void requant_block(const mak_conv_data *d, int32_t oc, int32_t n, const int32_t *acc,
                          int8_t *dst) {
  const int32_t per_channel = d->n_mult > 1;
  const int8_t *shifts = mak_conv_shifts(d);
  for (int32_t k = 0; k < n; ++k) {
    const int32_t mi = per_channel ? oc + k : 0;
    dst[k] = (int8_t)mak_requantize(acc[k], d->mult[mi], shifts[mi], d->output_offset,
                                    d->act_min, d->act_max);
  }
}

/* acc[0..n) = the n biases, or 0 (bias NULL). */
static inline void init_block(int32_t *acc, const int32_t *bias, int32_t n) {
  for (int32_t k = 0; k < n; ++k) acc[k] = bias != NULL ? bias[k] : 0;
}
#endif

/* The int8 operands of one output pixel: the input pixels [y0, y1) x [x0, x1) it gathers and
 * the filter taps they meet. */
typedef struct {
  const int8_t *in, *filter; /* the input's batch, output channel 0's filter */
  const int32_t *bias;       /* NULL: none */
  size_t oc_stride;          /* filter bytes per output channel */
  int32_t cin, in_w, kw, stride_h, stride_w, y0, y1, x0, x1, fy0, fx0, offset;
} taps_s8;

/* The sums of output channels oc..oc+n-1 (n <= TCONV_BLOCK) with their biases: for each input
 * pixel gathered, four filter rows per pass over it. */
static void sums_s8(const taps_s8 *t, int32_t oc, int32_t n, int32_t *acc) {
  init_block(acc, t->bias != NULL ? t->bias + oc : NULL, n);
  const int8_t *f = t->filter + (size_t)oc * t->oc_stride;
  for (int32_t iy = t->y0, fy = t->fy0; iy < t->y1; ++iy, fy -= t->stride_h) {
    const int8_t *ip = t->in + ((size_t)iy * t->in_w + t->x0) * t->cin;
    for (int32_t ix = t->x0, fx = t->fx0; ix < t->x1; ++ix, fx -= t->stride_w, ip += t->cin) {
      const int8_t *fp = f + ((size_t)fy * t->kw + fx) * t->cin;
      int32_t k = 0;
      for (; k + 4 <= n; k += 4, fp += 4 * t->oc_stride)
        add_dot4(acc + k, ip, fp, t->oc_stride, t->cin, t->offset);
      for (; k < n; ++k, fp += t->oc_stride) /* rows past the last channel are not read */
        acc[k] = (int32_t)((uint32_t)acc[k] + (uint32_t)mak_dot_s8(fp, ip, t->cin, t->offset));
    }
  }
}

/* int8: each output pixel's channels in blocks, the input pixels it gathers read once per four
 * channels; the sums are exact int32 sums, so the order is free. */
static void tconv_eval_s8(const ma_node *node, const mak_conv_data *d, const tconv_shape *s) {
  const ma_tensor *out = node->outputs[0], *bt = mak_input(node, IN_BIAS);
  const int32_t cout = out->dims[3];
  taps_s8 t = {.filter = (const int8_t *)node->inputs[IN_FILTER]->data,
               .bias = bt != NULL ? (const int32_t *)bt->data : NULL,
               .oc_stride = (size_t)s->kh * s->kw * s->cin,
               .cin = s->cin,
               .in_w = s->in_w,
               .kw = s->kw,
               .stride_h = d->stride_h,
               .stride_w = d->stride_w,
               .offset = d->input_offset};
  int8_t *dst = (int8_t *)out->data;
  int32_t acc[TCONV_BLOCK];
  for (int32_t b = 0; b < out->dims[0]; ++b) {
    t.in = (const int8_t *)node->inputs[IN_INPUT]->data + (size_t)b * s->in_h * s->in_w * s->cin;
    for (int32_t oy = 0; oy < out->dims[1]; ++oy) {
      source_range(oy, d->pad_h, d->stride_h, s->kh, s->in_h, &t.y0, &t.y1);
      t.fy0 = oy + d->pad_h - t.y0 * d->stride_h;
      for (int32_t ox = 0; ox < out->dims[2]; ++ox) {
        source_range(ox, d->pad_w, d->stride_w, s->kw, s->in_w, &t.x0, &t.x1);
        t.fx0 = ox + d->pad_w - t.x0 * d->stride_w;
        for (int32_t oc = 0; oc < cout; oc += TCONV_BLOCK) {
          const int32_t n = cout - oc < TCONV_BLOCK ? cout - oc : TCONV_BLOCK;
          sums_s8(&t, oc, n, acc);
          requant_block(d, oc, n, acc, dst);
          dst += n;
        }
      }
    }
  }
}

static ma_status tconv_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const mak_conv_data *d = node->user_data;
  const ma_tensor *in = node->inputs[IN_INPUT], *filter = node->inputs[IN_FILTER];
  const ma_tensor *out = node->outputs[0];
  const tconv_shape s = {in->dims[1], in->dims[2], in->dims[3], filter->dims[1], filter->dims[2]};
  if (in->type == MA_INT8) {
    tconv_eval_s8(node, d, &s);
    return MA_OK;
  }
  const int32_t out_h = out->dims[1], out_w = out->dims[2], cout = out->dims[3];
  size_t oi = 0;
  for (int32_t b = 0; b < out->dims[0]; ++b)
    for (int32_t oy = 0; oy < out_h; ++oy)
      for (int32_t ox = 0; ox < out_w; ++ox)
        for (int32_t oc = 0; oc < cout; ++oc, ++oi) {
          float fsum;
          int64_t isum;
          gather(node, d, &s, b, oy, ox, oc, &fsum, &isum);
          store(node, d, oi, oc, fsum, isum);
        }
  return MA_OK;
}

const ma_kernel mak_transpose_conv = {tconv_prepare, tconv_eval, 0};
