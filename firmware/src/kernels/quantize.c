/* QUANTIZE (float32 -> int8/int16, and the requantizations TFLM runs: int8 -> int8/uint8/int16/
 * int32, uint8 -> int8, int16 -> int8/int16/int32, int32 -> int8/int16) and DEQUANTIZE
 * (int8/int16/uint8 -> float32), per-tensor.
 *
 * Float quantization rounds value / scale in float, half away from zero, as TFLM's
 * AffineQuantize; dequantization gives the float of the double product TFLM's Dequantize forms.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "fast/dsp/fast_dsp_quantize.h"
#include "fast/fast_s8_core.h"
#include "fast/mve/fast_mve_quantize.h"
#include "kernel_util.h"
#include "kernels.h"

/* Everything eval needs but the operands' data (eval_data_only), in the 32 bytes it took
 * before the count and types came in (the count in the padding before in_scale). */
typedef struct {
  float out_scale;
  int32_t count; /* the input's (and output's) values */
  double in_scale;
  int32_t in_zp, out_zp, mult;
  int8_t shift;
  uint8_t in_type, out_type;
} quant_data;
_Static_assert(sizeof(quant_data) == 32, "QUANTIZE's op data: 32 bytes, as planned");

/* The integer pairs TFLM's QUANTIZE evaluates (its Prepare accepts more, which Eval refuses). */
static bool requantizes(uint8_t in, uint8_t out) {
  switch (in) {
    case MA_INT8: return out == MA_INT8 || out == MA_UINT8 || out == MA_INT16 || out == MA_INT32;
    case MA_UINT8: return out == MA_INT8;
    case MA_INT16: return out == MA_INT8 || out == MA_INT16 || out == MA_INT32;
    case MA_INT32: return out == MA_INT8 || out == MA_INT16;
    default: return false;
  }
}

static ma_status quant_prepare_common(struct ma_context *ctx, ma_node *node, bool dequant) {
  const char *op = dequant ? "DEQUANTIZE" : "QUANTIZE";
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  if (st != MA_OK) return st;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (ma_num_elements(in) != ma_num_elements(out))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", op);
  bool ok;
  if (dequant)
    ok = (in->type == MA_INT8 || in->type == MA_INT16 || in->type == MA_UINT8) &&
         out->type == MA_FLOAT32;
  else
    ok = (in->type == MA_FLOAT32 && (out->type == MA_INT8 || out->type == MA_INT16)) ||
         requantizes(in->type, out->type);
  if (!ok)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: %s to %s", op, mak_type_name(in->type),
                   mak_type_name(out->type));
  const ma_tensor *q = dequant ? in : out;
  if (!(mak_scale(q, 0) > 0.0f) || q->quant.count != 1 ||
      (in->type != MA_FLOAT32 && !(mak_scale(in, 0) > 0.0f)))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: needs one positive per-tensor scale", op);
  quant_data *d = ma_persistent(ctx, sizeof *d);
  if (d == NULL) return MA_ERR_ARENA;
  memset(d, 0, sizeof *d);
  node->user_data = d;
  node->eval_data_only = 1;
  d->count = ma_num_elements(in);
  d->in_type = in->type;
  d->out_type = out->type;
  d->in_scale = (double)mak_scale(in, 0);
  d->in_zp = mak_zero_point(in, 0);
  d->out_scale = mak_scale(out, 0);
  d->out_zp = mak_zero_point(out, 0);
  if (!dequant && in->type != MA_FLOAT32) {
    int shift;
    mak_quantize_multiplier(d->in_scale / (double)d->out_scale, &d->mult, &shift);
    d->shift = (int8_t)shift; /* -31 to 30 */
  }
  return MA_OK;
}

static ma_status quantize_prepare(struct ma_context *ctx, ma_node *node) {
  return quant_prepare_common(ctx, node, false);
}

static ma_status dequantize_prepare(struct ma_context *ctx, ma_node *node) {
  return quant_prepare_common(ctx, node, true);
}

/* Beyond this |value / scale| saturates every output type whatever a zero point of at most
 * 2^16, and within it the int32 conversion is defined and exact. */
#define QUANT_SATURATED 1048576.0f

/* roundf(v / scale) + zp, saturated; the rounding (half away from zero) by truncation and the
 * exact remainder, because roundf and a float -> int64 conversion are library calls on Arm. */
static int32_t quantize_one(const quant_data *d, float v, int32_t lo, int32_t hi) {
  const float q = v / d->out_scale;
#if FAST_FPU
  if (!(q > -QUANT_SATURATED)) return q != q ? mak_clamp(d->out_zp, lo, hi) : lo;
  if (q > QUANT_SATURATED) return hi;
  int32_t r = (int32_t)q;
  const float rest = q - (float)r; /* exact: r is q truncated and below 2^24 */
  if (rest >= 0.5f) ++r;
  else if (rest <= -0.5f) --r;
#else
  /* Without a floating-point unit (M0+, M3; and the host, which checks it) from q's bits, as
   * each float operation there is a library call. From 2^20 up (exponent e of 147: infinities
   * too) the output saturates to the sign's end, as above (2^20 itself rounds to 2^20, past
   * every int8 and int16 output whatever the zero point); below, q is the significand m (24
   * bits) times 2^(e - 150) and its magnitude rounded half up is (m + 2^(s - 1)) >> s with
   * s = 150 - e, 0 below 0.5 (e < 126). */
  uint32_t bits;
  memcpy(&bits, &q, sizeof bits);
  const int32_t e = (int32_t)(bits >> 23 & 0xFFu), s = 150 - e;
  if (e >= 147) {
    if (e == 255 && (bits & 0x7FFFFFu) != 0) return mak_clamp(d->out_zp, lo, hi); /* NaN */
    return bits >> 31 ? lo : hi;
  }
  int32_t r = 0;
  if (e >= 126) {
    const uint32_t m = (bits & 0x7FFFFFu) | 0x800000u;
    r = (int32_t)((m + (UINT32_C(1) << (s - 1))) >> s);
    if (bits >> 31) r = -r;
  }
#endif
  const int64_t z = (int64_t)r + d->out_zp;
  return z < lo ? lo : (z > hi ? hi : (int32_t)z);
}

static int32_t load_int(const void *data, uint8_t type, int32_t i) {
  switch (type) {
    case MA_INT8: return ((const int8_t *)data)[i];
    case MA_UINT8: return ((const uint8_t *)data)[i];
    case MA_INT16: return ((const int16_t *)data)[i];
    default: return ((const int32_t *)data)[i];
  }
}

/* (x - zp_in) * scale_in / scale_out + zp_out, saturated to the output type. */
static void requantize(const quant_data *d, const ma_tensor *in, ma_tensor *out, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    const int32_t x = mak_wrap_sub(load_int(in->data, d->in_type, i), d->in_zp);
    const int32_t v = mak_add_sat(mak_mbqm(x, d->mult, d->shift), d->out_zp);
    switch (d->out_type) {
      case MA_INT8: ((int8_t *)out->data)[i] = (int8_t)mak_clamp(v, INT8_MIN, INT8_MAX); break;
      case MA_UINT8: ((uint8_t *)out->data)[i] = (uint8_t)mak_clamp(v, 0, UINT8_MAX); break;
      case MA_INT16: ((int16_t *)out->data)[i] = (int16_t)mak_clamp(v, INT16_MIN, INT16_MAX); break;
      default: ((int32_t *)out->data)[i] = v; break;
    }
  }
}

/* int8 or uint8 to int8 with a multiplier of exactly 1 (equal scales: mak_quantize_multiplier
 * gives 2^30 and a shift of 1, and MultiplyByQuantizedMultiplier of x - zp by it is x - zp, for
 * zero points of at most 2^16): x - in_zp + out_zp saturated, four values per word. uint8
 * becomes int8 by flipping each byte's top bit (x - 128), so the offset left is out_zp - in_zp
 * (+ 128 for uint8): none for the converter's uint8 inputs (same scale, zero point 128
 * lower), else one QADD8 (saturating per byte) on the DSP (fast/dsp/fast_dsp_quantize.h).
 * Word i is read before it is written, as the reference order wants. False, having done
 * nothing, for other nodes. */
static bool requantize_offset_s8(const quant_data *d, const void *in, int8_t *out, int32_t n) {
  if (d->mult != (INT32_C(1) << 30) || d->shift != 1 || d->out_type != MA_INT8 ||
      (d->in_type != MA_INT8 && d->in_type != MA_UINT8) || d->in_zp < -65536 ||
      d->in_zp > 65536 || d->out_zp < -65536 || d->out_zp > 65536)
    return false;
  const bool u8 = d->in_type == MA_UINT8;
  const int32_t off = d->out_zp - d->in_zp + (u8 ? 128 : 0);
  if (off != 0 && (!FAST_DSP || off < INT8_MIN || off > INT8_MAX)) return false;
  const uint32_t flip = u8 ? 0x80808080u : 0u;
  const uint8_t *x = in;
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t w = load4((const int8_t *)x + i) ^ flip;
    if (FAST_DSP && off != 0) w = mak_dsp_qadd8(w, off);
    memcpy(out + i, &w, 4);
  }
  for (; i < n; ++i)
    out[i] = (int8_t)mak_clamp((int8_t)(uint8_t)(x[i] ^ (uint8_t)flip) + off, INT8_MIN, INT8_MAX);
  return true;
}

/* Reads of the node: its operands' data only (eval_data_only). */
static ma_status quantize_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const quant_data *d = node->user_data;
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  const int32_t n = d->count;
  const uint8_t in_type = d->in_type, out_type = d->out_type;
  const int kind = in_type == MA_INT8 ? MAK_RQ_S8 : in_type == MA_UINT8 ? MAK_RQ_U8 : MAK_RQ_S16;
  if ((in_type == MA_INT8 || in_type == MA_UINT8 || in_type == MA_INT16) &&
      out_type == MA_INT8 &&
      mak_mve_requant_to_s8(in->data, kind, out->data, n, d->in_zp, d->out_zp, d->mult,
                            d->shift))
    return MA_OK;
  if (in_type != MA_FLOAT32) {
    if (!requantize_offset_s8(d, in->data, out->data, n)) requantize(d, in, node->outputs[0], n);
  } else if (out_type == MA_INT8) {
    for (int32_t i = 0; i < n; ++i)
      ((int8_t *)out->data)[i] =
          (int8_t)quantize_one(d, ((const float *)in->data)[i], INT8_MIN, INT8_MAX);
  } else {
    for (int32_t i = 0; i < n; ++i)
      ((int16_t *)out->data)[i] =
          (int16_t)quantize_one(d, ((const float *)in->data)[i], INT16_MIN, INT16_MAX);
  }
  return MA_OK;
}

/* TFLM forms (float)(scale * (v - zp)) in double. Where |v - zp| < 2^24 the float product
 * is the same number: the double product of a 24-bit scale and a 24-bit integer is exact, so
 * both round the exact product once (float arithmetic is not a library call on an FPU). */
#define DEQUANT_FLOAT_ZP 8388608

static float dequantize_one(const quant_data *d, int32_t v) {
  double r = d->in_scale * (double)((int64_t)v - d->in_zp);
  if (r > FLT_MAX) r = FLT_MAX; /* converting an out-of-range double to float is UB */
  if (r < -FLT_MAX) r = -FLT_MAX;
  return (float)r;
}

static float dequantize_float(float scale, int32_t v_minus_zp) {
  const float r = scale * (float)v_minus_zp;
  return r > FLT_MAX ? FLT_MAX : (r < -FLT_MAX ? -FLT_MAX : r);
}

/* Reads of the node: its operands' data only (eval_data_only). */
static ma_status dequantize_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const quant_data *d = node->user_data;
  const void *x = node->inputs[0]->data;
  float *y = node->outputs[0]->data;
  const int32_t n = d->count;
  const bool in_float = d->in_zp > -DEQUANT_FLOAT_ZP && d->in_zp < DEQUANT_FLOAT_ZP;
  const float scale = (float)d->in_scale; /* exact: the scale was a float */
  for (int32_t i = 0; i < n; ++i) {
    int32_t v;
    if (d->in_type == MA_INT8) v = ((const int8_t *)x)[i];
    else if (d->in_type == MA_INT16) v = ((const int16_t *)x)[i];
    else v = ((const uint8_t *)x)[i];
    y[i] = in_float ? dequantize_float(scale, v - d->in_zp) : dequantize_one(d, v);
  }
  return MA_OK;
}

const ma_kernel mak_quantize = {quantize_prepare, quantize_eval, 0};
const ma_kernel mak_dequantize = {dequantize_prepare, dequantize_eval, 0};
