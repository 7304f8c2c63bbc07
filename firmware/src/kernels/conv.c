/* CONV_2D and DEPTHWISE_CONV_2D, float32, int8 (per-channel) and 16x8 (int16 activations,
 * int8 weights), NHWC.
 *
 * Same arithmetic as TFLM's reference ConvPerChannel / DepthwiseConvPerChannel: int32
 * accumulation of filter * (input - input_zero_point), bias, per-channel requantization,
 * clamp. 16x8 applies no zero points (as TFLM; models with them are refused) and sums in
 * int64 with an int64 bias, in int32 with an int32 one (mak_requantize16); TFLM's 16x8
 * depthwise kernel takes int64 biases only. Floats
 * accumulate in the same order as the reference, so results agree to rounding.
 */
#include <string.h>

#include "fast/fast_s8.h"
#include "fast/mve/fast_mve_s8.h"
#include "kernel_util.h"
#include "kernels.h"

/* Schema slots: Conv2DOptions and DepthwiseConv2DOptions differ after stride_h. */
enum { SLOT_PADDING = 0, SLOT_STRIDE_W = 1, SLOT_STRIDE_H = 2 };
enum { SLOT_CONV_QUANTIZED_BIAS_TYPE = 6 }; /* Conv2DOptions */

static ma_status conv_prepare_common(struct ma_context *ctx, ma_node *node, const char *op,
                                     bool depthwise) {
  ma_status st = mak_check_node(ctx, node, op, 2, 3, 2, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *filter = node->inputs[1];
  const ma_tensor *bias = mak_input(node, 2), *out = node->outputs[0];
  if (in->ndims != 4 || filter->ndims != 4 || out->ndims != 4)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input, filter and output must be 4-D", op);

  const ma_options *o = &node->options;
  const int32_t padding = ma_opt_i32(o, SLOT_PADDING, 0);
  const int32_t stride_w = ma_opt_i32(o, SLOT_STRIDE_W, 0);
  const int32_t stride_h = ma_opt_i32(o, SLOT_STRIDE_H, 0);
  const int32_t act = ma_opt_i32(o, depthwise ? 4 : 3, 0);
  const int32_t dil_w = ma_opt_i32(o, depthwise ? 5 : 4, 1);
  const int32_t dil_h = ma_opt_i32(o, depthwise ? 6 : 5, 1);

  const int32_t cin = in->dims[3], cout = out->dims[3];
  if (in->dims[0] != out->dims[0])
    return ma_fail(ctx, MA_ERR_MODEL, "%s: batch %d in, %d out", op, (int)in->dims[0],
                   (int)out->dims[0]);
  const int32_t kh = filter->dims[1], kw = filter->dims[2];
  if (cin <= 0 || cout <= 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d -> %d channels", op, (int)cin, (int)cout);
  if (depthwise) {
    if (filter->dims[0] != 1 || filter->dims[3] != cout || cout % cin != 0)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: filter shape does not match %d -> %d channels", op,
                     (int)cin, (int)cout);
    /* TFLM's kernels loop over the option, not the shapes: another value reads and writes
     * past the tensors there, so refuse it. */
    const int32_t multiplier = ma_opt_i32(o, 3, 0);
    if ((int64_t)multiplier * cin != cout)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: depth multiplier %d does not match %d -> %d "
                     "channels", op, (int)multiplier, (int)cin, (int)cout);
  } else {
    const int32_t fin = filter->dims[3];
    if (filter->dims[0] != cout || fin <= 0 || fin > cin || cin % fin != 0 ||
        cout % (cin / fin) != 0)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: filter shape does not match %d -> %d channels", op,
                     (int)cin, (int)cout);
  }
  if (bias != NULL && ma_num_elements(bias) != cout)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: bias has %d values for %d channels", op,
                   (int)ma_num_elements(bias), (int)cout);

  st = mak_check_weighted_types(ctx, op, in, filter, bias, out,
                                MA_INT64, depthwise ? MA_INT64 : MA_INT32);
  if (st != MA_OK) return st;
  const bool is_f32 = in->type == MA_FLOAT32;

  mak_conv_data *d = mak_conv_data_alloc(ctx, is_f32 ? 0 : (filter->quant.count > 1 ? cout : 1));
  if (d == NULL) return MA_ERR_ARENA;
  if ((st = mak_conv_geometry(ctx, op, padding, in->dims[1], kh, stride_h, dil_h, out->dims[1],
                              &d->pad_h)) != MA_OK ||
      (st = mak_conv_geometry(ctx, op, padding, in->dims[2], kw, stride_w, dil_w, out->dims[2],
                              &d->pad_w)) != MA_OK)
    return st;
  d->stride_w = (int16_t)stride_w;
  d->stride_h = (int16_t)stride_h;
  d->dil_w = (int16_t)dil_w;
  d->dil_h = (int16_t)dil_h;
  node->user_data = d;
  if (is_f32) return mak_act_range_f(ctx, op, act, &d->f_min, &d->f_max);

  if ((st = mak_conv_quantize(ctx, op, d, in, filter, out, act, cout)) != MA_OK) return st;
  /* TFLM's 16x8 kernel applies no zero points at all: refuse models that have them. */
  if (in->type == MA_INT16 && (d->input_offset != 0 || d->output_offset != 0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: int16 activations need zero points 0", op);
  return MA_OK;
}

static ma_status conv_prepare(struct ma_context *ctx, ma_node *node) {
  return conv_prepare_common(ctx, node, "CONV_2D", false);
}

static ma_status dwconv_prepare(struct ma_context *ctx, ma_node *node) {
  return conv_prepare_common(ctx, node, "DEPTHWISE_CONV_2D", true);
}

/* The sliding-window geometry of a convolution node. */
static mak_window_geom window_geom(const ma_node *node, const mak_conv_data *d) {
  const ma_tensor *in = node->inputs[0], *filter = node->inputs[1], *out = node->outputs[0];
  const mak_window_geom g = {in->dims[0],     in->dims[1],     in->dims[2], out->dims[1],
                             out->dims[2],    filter->dims[1], filter->dims[2], d->stride_h,
                             d->stride_w,     d->dil_h,        d->dil_w,    d->pad_h,
                             d->pad_w};
  return g;
}

/* Input element offset of tap (fy, fx) of window w, channel 0. */
static size_t tap_offset(const mak_window_geom *g, const mak_window *w, const mak_conv_data *d,
                         int32_t fy, int32_t fx, int32_t cin) {
  return (((size_t)w->b * g->in_h + w->iy0 + d->dil_h * fy) * g->in_w + w->ix0 + d->dil_w * fx) *
         (size_t)cin;
}

/* One 16x8 output value: exact int64 sum of filter * input (|product| < 2^22), bias, then
 * mak_requantize16. */
static int32_t conv_16x8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g,
                         const mak_window *w, int32_t oc, size_t ic0, bool acc64) {
  const int16_t *in = node->inputs[0]->data;
  const int8_t *f = node->inputs[1]->data;
  const ma_tensor *bias = mak_input(node, 2);
  const int32_t cin = node->inputs[0]->dims[3], fin = node->inputs[1]->dims[3];
  int64_t acc = 0;
  for (int32_t fy = w->fy0; fy < w->fy1; ++fy) {
    for (int32_t fx = w->fx0; fx < w->fx1; ++fx) {
      const int16_t *ip = in + tap_offset(g, w, d, fy, fx, cin) + ic0;
      const int8_t *fp = f + (((size_t)oc * g->kh + fy) * g->kw + fx) * fin;
      for (int32_t ic = 0; ic < fin; ++ic) acc += (int32_t)fp[ic] * ip[ic];
    }
  }
  /* Wraps on hostile biases instead of overflowing. */
  const uint64_t total = (uint64_t)acc + (uint64_t)mak_bias16(bias, oc);
  const int32_t mi = d->n_mult > 1 ? oc : 0;
  return mak_requantize16((int64_t)total, acc64, d->mult[mi], mak_conv_shifts(d)[mi],
                          d->output_offset, d->act_min, d->act_max);
}

/* The reference loop (float, int16, and int8 where no fast path serves). Not inlined: its
 * locals stay off the stack of the fast paths. */
__attribute__((noinline)) static void conv_ref(const ma_node *node, const mak_conv_data *d,
                                               const mak_window_geom *gp) {
  const int8_t *shift = mak_conv_shifts(d);
  const mak_window_geom g = *gp;
  const ma_tensor *bias_t = mak_input(node, 2);
  const int32_t cin = node->inputs[0]->dims[3], cout = node->outputs[0]->dims[3];
  const int32_t fin = node->inputs[1]->dims[3];
  const int32_t per_group = cout / (cin / fin);
  const bool is_f32 = node->inputs[0]->type == MA_FLOAT32;
  const bool acc64 = mak_acc64(bias_t, ma_opt_i32(&node->options, SLOT_CONV_QUANTIZED_BIAS_TYPE, 0));
  mak_window w;
  mak_window_start(&g, &w);
  while (mak_window_next(&g, &w)) {
    const size_t out_base = w.pixel * (size_t)cout;
    for (int32_t oc = 0; oc < cout; ++oc) {
      const size_t ic0 = (size_t)(oc / per_group) * fin;
      if (is_f32) {
        const float *in = node->inputs[0]->data, *f = node->inputs[1]->data;
        float total = 0.0f;
        for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
          for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
            const float *ip = in + tap_offset(&g, &w, d, fy, fx, cin) + ic0;
            const float *fp = f + (((size_t)oc * g.kh + fy) * g.kw + fx) * fin;
            for (int32_t ic = 0; ic < fin; ++ic) total += ip[ic] * fp[ic];
          }
        }
        const float bias = bias_t ? ((const float *)bias_t->data)[oc] : 0.0f;
        ((float *)node->outputs[0]->data)[out_base + oc] =
            mak_clampf(total + bias, d->f_min, d->f_max);
      } else if (node->inputs[0]->type == MA_INT16) {
        ((int16_t *)node->outputs[0]->data)[out_base + oc] =
            (int16_t)conv_16x8(node, d, &g, &w, oc, ic0, acc64);
      } else {
        const int8_t *in = node->inputs[0]->data, *f = node->inputs[1]->data;
        const int32_t off = d->input_offset;
        uint32_t acc = 0; /* wraps like TFLM's int32 on hostile weights, without UB */
        for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
          for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
            const int8_t *ip = in + tap_offset(&g, &w, d, fy, fx, cin) + ic0;
            const int8_t *fp = f + (((size_t)oc * g.kh + fy) * g.kw + fx) * fin;
            for (int32_t ic = 0; ic < fin; ++ic) acc += (uint32_t)(fp[ic] * (ip[ic] + off));
          }
        }
        if (bias_t) acc += (uint32_t)((const int32_t *)bias_t->data)[oc];
        const int32_t mi = d->n_mult > 1 ? oc : 0;
        ((int8_t *)node->outputs[0]->data)[out_base + oc] = (int8_t)mak_requantize(
            (int32_t)acc, d->mult[mi], shift[mi], d->output_offset, d->act_min, d->act_max);
      }
    }
  }
}

static ma_status conv_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const mak_conv_data *d = node->user_data;
  const mak_window_geom g = window_geom(node, d);
  if (mak_mve_conv_s8(node, d, &g) || mak_fast_conv_s8(node, d, &g)) return MA_OK;
  conv_ref(node, d, &g);
  return MA_OK;
}



/* 16x8 depthwise: each output channel's exact int64 sum, its bias, mak_requantize16. Not
 * inlined, as dwconv_ref. */
__attribute__((noinline)) static void dwconv_16x8(const ma_node *node, const mak_conv_data *d,
                                                  const mak_window_geom *g) {
  const int16_t *in = node->inputs[0]->data;
  const int8_t *f = node->inputs[1]->data;
  const ma_tensor *bias = mak_input(node, 2);
  int16_t *out = node->outputs[0]->data;
  const int32_t cin = node->inputs[0]->dims[3], cout = node->outputs[0]->dims[3];
  const int32_t mult = cout / cin;
  mak_window w;
  mak_window_start(g, &w);
  while (mak_window_next(g, &w)) {
    for (int32_t oc = 0; oc < cout; ++oc) {
      int64_t acc = 0;
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy)
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx)
          acc += (int32_t)f[((size_t)fy * g->kw + fx) * cout + oc] *
                 in[tap_offset(g, &w, d, fy, fx, cin) + oc / mult];
      /* Wraps on hostile biases instead of overflowing. */
      const uint64_t total = (uint64_t)acc + (uint64_t)mak_bias16(bias, oc);
      const int32_t mi = d->n_mult > 1 ? oc : 0;
      out[w.pixel * (size_t)cout + oc] =
          (int16_t)mak_requantize16((int64_t)total, true, d->mult[mi], mak_conv_shifts(d)[mi],
                                    d->output_offset, d->act_min, d->act_max);
    }
  }
}

/* The reference depthwise loop (float, and int8 where no fast path serves). Not inlined: its
 * sums stay off the stack of the fast paths. */
__attribute__((noinline)) static void dwconv_ref(const ma_node *node, const mak_conv_data *d,
                                                 const mak_window_geom *g) {
  const int8_t *shift = mak_conv_shifts(d);
  const ma_tensor *bias_t = mak_input(node, 2);
  const int32_t cin = node->inputs[0]->dims[3], cout = node->outputs[0]->dims[3];
  const int32_t mult = cout / cin;
  const bool is_f32 = node->inputs[0]->type == MA_FLOAT32;
  uint32_t acc[MAK_DW_BLOCK]; /* wrapping int32 sums */
  float total[MAK_DW_BLOCK];
  mak_window w;
  mak_window_start(g, &w);
  while (mak_window_next(g, &w)) {
    const size_t out_base = w.pixel * (size_t)cout;
    for (int32_t oc0 = 0; oc0 < cout; oc0 += MAK_DW_BLOCK) {
      const int32_t n = cout - oc0 < MAK_DW_BLOCK ? cout - oc0 : MAK_DW_BLOCK;
      for (int32_t k = 0; k < n; ++k) {
        acc[k] = 0;
        total[k] = 0.0f;
      }
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
          const size_t ii = tap_offset(g, &w, d, fy, fx, cin);
          const size_t fi = ((size_t)fy * g->kw + fx) * cout + oc0;
          if (is_f32) {
            const float *ip = (const float *)node->inputs[0]->data + ii;
            const float *fp = (const float *)node->inputs[1]->data + fi;
            for (int32_t k = 0; k < n; ++k) total[k] += ip[(oc0 + k) / mult] * fp[k];
          } else {
            const int8_t *ip = (const int8_t *)node->inputs[0]->data + ii;
            const int8_t *fp = (const int8_t *)node->inputs[1]->data + fi;
            const int32_t off = d->input_offset;
            if (mult == 1) {
              ip += oc0;
              for (int32_t k = 0; k < n; ++k) acc[k] += (uint32_t)(fp[k] * (ip[k] + off));
            } else {
              for (int32_t k = 0; k < n; ++k)
                acc[k] += (uint32_t)(fp[k] * (ip[(oc0 + k) / mult] + off));
            }
          }
        }
      }
      for (int32_t k = 0; k < n; ++k) {
        const int32_t oc = oc0 + k;
        if (is_f32) {
          const float bias = bias_t ? ((const float *)bias_t->data)[oc] : 0.0f;
          ((float *)node->outputs[0]->data)[out_base + oc] =
              mak_clampf(total[k] + bias, d->f_min, d->f_max);
        } else {
          const uint32_t bias = bias_t ? (uint32_t)((const int32_t *)bias_t->data)[oc] : 0u;
          const int32_t mi = d->n_mult > 1 ? oc : 0;
          ((int8_t *)node->outputs[0]->data)[out_base + oc] =
              (int8_t)mak_requantize((int32_t)(acc[k] + bias), d->mult[mi], shift[mi],
                                     d->output_offset, d->act_min, d->act_max);
        }
      }
    }
  }
}

static ma_status dwconv_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const mak_conv_data *d = node->user_data;
  const mak_window_geom g = window_geom(node, d);
  if (mak_mve_dwconv_s8(node, d, &g) || mak_fast_dwconv_s8(node, d, &g)) return MA_OK;
  if (node->inputs[0]->type == MA_INT16)
    dwconv_16x8(node, d, &g);
  else
    dwconv_ref(node, d, &g);
  return MA_OK;
}

const ma_kernel mak_conv_2d = {conv_prepare, conv_eval, 0};
const ma_kernel mak_depthwise_conv_2d = {dwconv_prepare, dwconv_eval, 0};
