/* TFLM signal library, filter-bank stage: SignalFilterBank, SignalFilterBankSquareRoot,
 * SignalFilterBankSpectralSubtraction, SignalPCAN, SignalFilterBankLog (custom operators).
 *
 * Bit-exact with TFLM's signal/src kernels (unsigned wrap-around where TFLM's C++ wraps).
 * Differences in memory only: SignalFilterBank accumulates straight into its output instead
 * of TFLM's (channels + 1) x 8-byte persistent work area; SignalFilterBankSpectralSubtraction
 * keeps its noise estimate (state carried between invocations, zeroed at open) in the tail,
 * as TFLM does.
 */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"
#include "signal_util.h"

/* ---- SignalFilterBank: triangular mel filters; inputs 1-5 are the constant configuration
 * (weights, unweights, and per channel + 1: frequency start, weight start, width). */

typedef struct {
  int32_t channels;
} filter_bank_data;

enum { FB_IN, FB_WEIGHTS, FB_UNWEIGHTS, FB_FREQ_STARTS, FB_WEIGHT_STARTS, FB_WIDTHS };

/* Every channel's band must lie inside the spectrum and the weight tables. */
static ma_status check_bands(struct ma_context *ctx, const char *op, const ma_node *node,
                             int32_t channels) {
  const ma_tensor *const *in = (const ma_tensor *const *)node->inputs;
  const int16_t *freq = in[FB_FREQ_STARTS]->data, *wstart = in[FB_WEIGHT_STARTS]->data;
  const int16_t *width = in[FB_WIDTHS]->data;
  const int32_t bins = ma_num_elements(in[FB_IN]);
  int32_t weights = ma_num_elements(in[FB_WEIGHTS]);
  if (ma_num_elements(in[FB_UNWEIGHTS]) < weights) weights = ma_num_elements(in[FB_UNWEIGHTS]);
  for (int32_t i = 0; i <= channels; i++) {
    if (freq[i] < 0 || wstart[i] < 0 || width[i] < 0 || freq[i] + width[i] > bins ||
        wstart[i] + width[i] > weights)
      return ma_fail(ctx, MA_ERR_MODEL,
                     "%s: channel %d (start %d, weights from %d, width %d) is outside the %d "
                     "bins or %d weights",
                     op, (int)i, (int)freq[i], (int)wstart[i], (int)width[i], (int)bins,
                     (int)weights);
  }
  return MA_OK;
}

static ma_status filter_bank_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalFilterBank";
  static const char *const WHAT[] = {"input", "weights", "unweights", "channel frequency starts",
                                     "channel weight starts", "channel widths"};
  ma_status st = mak_check_node(ctx, node, OP, 6, 6, 6, 1);
  for (int i = 0; i < 6 && st == MA_OK; i++) {
    st = mak_signal_tensor(ctx, OP, WHAT[i], node->inputs[i], i == 0 ? MA_UINT32 : MA_INT16, 1);
    if (st == MA_OK && i > 0 && !node->inputs[i]->is_const)
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: the %s must be constant", OP, WHAT[i]);
  }
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_UINT64, 1);
  filter_bank_data d = {0};
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "num_channels", 1, 65535, &d.channels);
  if (st != MA_OK) return st;
  for (int i = FB_FREQ_STARTS; i <= FB_WIDTHS; i++) {
    if (ma_num_elements(node->inputs[i]) < d.channels + 1)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: %s has fewer than %d entries", OP, WHAT[i],
                     (int)d.channels + 1);
  }
  if (ma_num_elements(node->outputs[0]) != d.channels)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: output has %d elements for %d channels", OP,
                   (int)ma_num_elements(node->outputs[0]), (int)d.channels);
  if ((st = check_bands(ctx, OP, node, d.channels)) != MA_OK) return st;
  filter_bank_data *p = ma_persistent(ctx, sizeof *p);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  node->user_data = p;
  return MA_OK;
}

static ma_status filter_bank_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const filter_bank_data *d = node->user_data;
  const uint32_t *in = node->inputs[FB_IN]->data;
  const int16_t *w = node->inputs[FB_WEIGHTS]->data, *uw = node->inputs[FB_UNWEIGHTS]->data;
  const int16_t *freq = node->inputs[FB_FREQ_STARTS]->data;
  const int16_t *wstart = node->inputs[FB_WEIGHT_STARTS]->data;
  const int16_t *width = node->inputs[FB_WIDTHS]->data;
  uint64_t *out = node->outputs[0]->data;
  /* Each bin adds weight x energy to its channel and unweight x energy to the next; channel
   * 0 only collects the first channel's unweighted part and is dropped. Negative weights
   * wrap modulo 2^64, as in TFLM. */
  uint64_t weighted = 0, unweighted = 0;
  for (int32_t i = 0; i <= d->channels; i++) {
    for (int32_t j = 0; j < width[i]; j++) {
      const uint64_t x = in[freq[i] + j];
      weighted += (uint64_t)(int64_t)w[wstart[i] + j] * x;
      unweighted += (uint64_t)(int64_t)uw[wstart[i] + j] * x;
    }
    if (i > 0) out[i - 1] = weighted;
    weighted = unweighted;
    unweighted = 0;
  }
  return MA_OK;
}

/* ---- SignalFilterBankSquareRoot: integer square root (rounded), shifted down. */

/* TFLM's Sqrt32 (result truncated to 16 bits) and Sqrt64 (32-bit shortcut below 2^32). */
static uint32_t sqrt_bits(uint64_t num, int top) {
  if (num == 0) return 0;
  uint64_t res = 0;
  int max_bit = (top + 1 - (int)mak_bit_length64(num)) | 1;
  uint64_t bit = (uint64_t)1 << (top - max_bit);
  for (int n = (top - max_bit) / 2 + 1; n > 0; n--) {
    if (num >= res + bit) {
      num -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
    bit >>= 2;
  }
  const uint64_t limit = top == 31 ? 0xFFFFu : 0xFFFFFFFFu;
  if (num > res && res != limit) ++res;
  return top == 31 ? (uint16_t)res : (uint32_t)res;
}

static uint32_t sqrt64(uint64_t x) { return (x >> 32) == 0 ? sqrt_bits(x, 31) : sqrt_bits(x, 63); }

static ma_status sqrt_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalFilterBankSquareRoot";
  ma_status st = mak_check_node(ctx, node, OP, 2, 2, 2, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", node->inputs[0], MA_UINT64, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "scale bits", node->inputs[1], MA_INT32, 0);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_UINT32, 1);
  if (st == MA_OK && ma_num_elements(node->outputs[0]) != ma_num_elements(node->inputs[0]))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", OP);
  return st;
}

static ma_status sqrt_eval(struct ma_context *ctx, ma_node *node) {
  const uint64_t *in = node->inputs[0]->data;
  const int32_t shift = *(const int32_t *)node->inputs[1]->data;
  uint32_t *out = node->outputs[0]->data;
  if (shift < 0 || shift > 31)
    return ma_fail(ctx, MA_ERR_KERNEL, "SignalFilterBankSquareRoot: scale bits %d", (int)shift);
  const int32_t n = ma_num_elements(node->inputs[0]);
  for (int32_t i = 0; i < n; i++) out[i] = sqrt64(in[i]) >> shift;
  return MA_OK;
}

/* ---- SignalFilterBankSpectralSubtraction: subtract a smoothed noise estimate. */

typedef struct {
  int32_t channels, smoothing, one_minus_smoothing, alternate_smoothing,
      alternate_one_minus_smoothing, min_signal_remaining, smoothing_bits, subtraction_bits,
      clamping;
} subtraction_data; /* followed by uint32 noise_estimate[channels] */

static ma_status subtraction_options(struct ma_context *ctx, const ma_node *node, const char *op,
                                     subtraction_data *d) {
  static const struct {
    const char *key;
    int32_t hi;
    size_t field;
  } OPTS[] = {
      {"num_channels", 65535, offsetof(subtraction_data, channels)},
      {"smoothing", INT32_MAX, offsetof(subtraction_data, smoothing)},
      {"one_minus_smoothing", INT32_MAX, offsetof(subtraction_data, one_minus_smoothing)},
      {"alternate_smoothing", INT32_MAX, offsetof(subtraction_data, alternate_smoothing)},
      {"alternate_one_minus_smoothing", INT32_MAX,
       offsetof(subtraction_data, alternate_one_minus_smoothing)},
      {"min_signal_remaining", INT32_MAX, offsetof(subtraction_data, min_signal_remaining)},
      {"smoothing_bits", 31, offsetof(subtraction_data, smoothing_bits)},
      {"spectral_subtraction_bits", 63, offsetof(subtraction_data, subtraction_bits)},
      {"clamping", 1, offsetof(subtraction_data, clamping)},
  };
  for (size_t i = 0; i < sizeof OPTS / sizeof OPTS[0]; i++) {
    int32_t *field = (int32_t *)(void *)((char *)d + OPTS[i].field);
    ma_status st = mak_custom_option(ctx, node, op, OPTS[i].key, 0, OPTS[i].hi, field);
    if (st != MA_OK) return st;
  }
  return MA_OK;
}

static ma_status subtraction_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalFilterBankSpectralSubtraction";
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 2);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", node->inputs[0], MA_UINT32, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_UINT32, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "noise estimate", node->outputs[1], MA_UINT32, 1);
  subtraction_data d;
  if (st == MA_OK) st = subtraction_options(ctx, node, OP, &d);
  if (st != MA_OK) return st;
  for (int i = 0; i < 3; i++) {
    const ma_tensor *t = i == 0 ? node->inputs[0] : node->outputs[i - 1];
    if (ma_num_elements(t) != d.channels)
      return ma_fail(ctx, MA_ERR_MODEL, "%s: tensors must have num_channels = %d elements", OP,
                     (int)d.channels);
  }
  subtraction_data *p = ma_persistent(ctx, sizeof d + sizeof(uint32_t) * (size_t)d.channels);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  memset(p + 1, 0, sizeof(uint32_t) * (size_t)d.channels);
  node->user_data = p;
  return MA_OK;
}

static ma_status subtraction_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const subtraction_data *d = node->user_data;
  uint32_t *noise = (uint32_t *)(void *)(((subtraction_data *)node->user_data) + 1);
  const uint32_t *in = node->inputs[0]->data;
  uint32_t *out = node->outputs[0]->data;
  for (int32_t i = 0; i < d->channels; i++) {
    const int odd = i & 1; /* odd channels use the alternate smoothing */
    const uint64_t smoothing = (uint32_t)(odd ? d->alternate_smoothing : d->smoothing);
    const uint64_t keep =
        (uint32_t)(odd ? d->alternate_one_minus_smoothing : d->one_minus_smoothing);
    const uint32_t signal = in[i] << d->smoothing_bits;
    noise[i] = (uint32_t)((signal * smoothing + noise[i] * keep) >> d->subtraction_bits);
    uint32_t estimate = noise[i];
    if (estimate > signal) {
      estimate = signal;
      if (d->clamping) noise[i] = estimate;
    }
    const uint32_t floor =
        (uint32_t)(((uint64_t)in[i] * (uint32_t)d->min_signal_remaining) >> d->subtraction_bits);
    const uint32_t subtracted = (signal - estimate) >> d->smoothing_bits;
    out[i] = subtracted > floor ? subtracted : floor;
  }
  memcpy(node->outputs[1]->data, noise, sizeof(uint32_t) * (size_t)d->channels);
  return MA_OK;
}

/* ---- SignalPCAN: per-channel automatic gain control from the noise estimate. */

enum { PCAN_SNR_BITS = 12, PCAN_OUTPUT_BITS = 6, PCAN_LUT_MIN = 4 * 32 - 6 + 3 };

typedef struct {
  int32_t snr_shift;
} pcan_data;

/* TFLM's WideDynamicFunction: piecewise quadratic in the lut, per power of two of x. */
static int16_t wide_dynamic(uint32_t x, const int16_t *lut) {
  if (x <= 2) return lut[x];
  const int32_t interval = (int32_t)mak_bit_length32(x);
  lut += 4 * interval - 6;
  const int32_t frac =
      (int32_t)((interval < 11 ? x << (11 - interval) : x >> (interval - 11)) & 0x3FF);
  /* lut[1] << 5 through uint32 (TFLM's cast), then back to int32: lut[1] * 32. */
  int32_t result = (((int32_t)lut[2] * frac) >> 5) + (int32_t)lut[1] * 32;
  result *= frac; /* |result| < 2^31 for any int16 lut */
  result = (result + (1 << 14)) >> 15;
  return (int16_t)(result + lut[0]);
}

static uint32_t pcan_shrink(uint32_t x) {
  if (x < (2u << PCAN_SNR_BITS)) return (x * x) >> (2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS);
  return (x >> (PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - (1u << PCAN_OUTPUT_BITS);
}

static ma_status pcan_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalPCAN";
  ma_status st = mak_check_node(ctx, node, OP, 3, 3, 3, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", node->inputs[0], MA_UINT32, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "noise estimate", node->inputs[1], MA_UINT32, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "gain table", node->inputs[2], MA_INT16, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_UINT32, 1);
  pcan_data d = {0};
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "snr_shift", 0, 63, &d.snr_shift);
  if (st != MA_OK) return st;
  const int32_t n = ma_num_elements(node->inputs[0]);
  if (ma_num_elements(node->inputs[1]) != n || ma_num_elements(node->outputs[0]) != n)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input, noise estimate and output sizes differ", OP);
  if (ma_num_elements(node->inputs[2]) < PCAN_LUT_MIN)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: the gain table needs %d entries", OP, PCAN_LUT_MIN);
  pcan_data *p = ma_persistent(ctx, sizeof *p);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  node->user_data = p;
  return MA_OK;
}

static ma_status pcan_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const pcan_data *d = node->user_data;
  const uint32_t *in = node->inputs[0]->data, *noise = node->inputs[1]->data;
  const int16_t *lut = node->inputs[2]->data;
  uint32_t *out = node->outputs[0]->data;
  const int32_t n = ma_num_elements(node->inputs[0]);
  for (int32_t i = 0; i < n; i++) {
    const uint32_t gain = (uint32_t)(int32_t)wide_dynamic(noise[i], lut);
    const uint32_t snr = (uint32_t)(((uint64_t)in[i] * gain) >> d->snr_shift);
    out[i] = pcan_shrink(snr);
  }
  return MA_OK;
}

/* ---- SignalFilterBankLog: natural log in fixed point, scaled, saturated to int16. */

/* 65536 (log2(1 + i/128) - i/128), rounded, for i = 0..128: the correction the linear
 * interpolation of log2 between powers of two needs (tests/runtime/test_signal_kernels.py
 * recomputes it). */
static const uint16_t LOG2_CORRECTION[129] = {
    0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646,
    2797, 2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460,
    4549, 4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408,
    5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633,
    5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249,
    5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341,
    4264, 4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981,
    2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224,
    1094, 963,  830,  695,  559,  421,  282,  142,  0};

/* ln(x) * out_scale in Q16 arithmetic, as TFLM's Log32 (x > 1). */
static uint32_t log_scaled(uint32_t x, uint32_t out_scale) {
  const uint32_t integer = mak_bit_length32(x) - 1;
  int32_t frac = (int32_t)((int64_t)x - ((int64_t)1 << integer));
  frac = integer < 16 ? frac << (16 - integer) : frac >> (integer - 16);
  const uint32_t seg = (uint32_t)frac >> 9;
  const int32_t c0 = LOG2_CORRECTION[seg], c1 = LOG2_CORRECTION[seg + 1];
  const int32_t rel = ((c1 - c0) * (frac - (int32_t)(512 * seg))) >> 16;
  const uint32_t log2 = (integer << 16) + (uint32_t)(frac + c0 + rel);
  const uint32_t ln = (uint32_t)(((uint64_t)45426 * log2 + 32768) >> 16); /* 45426 = 2^16 ln 2 */
  return (out_scale * ln + 32768) >> 16;
}

typedef struct {
  int32_t correction_bits, output_scale;
} log_data;

static ma_status log_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalFilterBankLog";
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", node->inputs[0], MA_UINT32, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_INT16, 1);
  log_data d = {0, 0};
  if (st == MA_OK)
    st = mak_custom_option(ctx, node, OP, "input_correction_bits", 0, 31, &d.correction_bits);
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "output_scale", 0, INT32_MAX, &d.output_scale);
  if (st != MA_OK) return st;
  if (ma_num_elements(node->outputs[0]) != ma_num_elements(node->inputs[0]))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", OP);
  log_data *p = ma_persistent(ctx, sizeof *p);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  node->user_data = p;
  return MA_OK;
}

static ma_status log_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const log_data *d = node->user_data;
  const uint32_t *in = node->inputs[0]->data;
  int16_t *out = node->outputs[0]->data;
  const int32_t n = ma_num_elements(node->inputs[0]);
  for (int32_t i = 0; i < n; i++) {
    const uint32_t scaled = in[i] << d->correction_bits;
    const uint32_t v = scaled > 1 ? log_scaled(scaled, (uint32_t)d->output_scale) : 0;
    out[i] = (int16_t)(v < INT16_MAX ? v : INT16_MAX);
  }
  return MA_OK;
}

const ma_kernel mak_signal_filter_bank = {filter_bank_prepare, filter_bank_eval, 0};
const ma_kernel mak_signal_filter_bank_square_root = {sqrt_prepare, sqrt_eval, 0};
const ma_kernel mak_signal_filter_bank_spectral_subtraction = {subtraction_prepare,
                                                                subtraction_eval, 0};
const ma_kernel mak_signal_pcan = {pcan_prepare, pcan_eval, 0};
const ma_kernel mak_signal_filter_bank_log = {log_prepare, log_eval, 0};
