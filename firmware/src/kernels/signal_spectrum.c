/* TFLM signal library, int16 spectrum stage: SignalWindow, SignalFftAutoScale, SignalRfft,
 * SignalIrfft, SignalEnergy (custom operators; options in a flexbuffer map).
 *
 * Bit-exact with TFLM's signal/src kernels. SignalRfft is kissfft's fixed-point (16-bit) real
 * FFT as TFLM builds it: a complex FFT of half the length (radix 4 first, then 2, 3, 5, each
 * stage dividing by its radix with rounding), twiddles floor(0.5 + 32767 cos/sin(phase))
 * computed in double, then the split into the real spectrum. Unlike TFLM it needs no scratch
 * and no work buffer: the half-length FFT reads the (zero-padded) input in place and writes
 * straight into the output tensor, whose extra element the split then fills in place.
 * SignalIrfft is kissfft's kiss_fftri: the real spectrum merged into half-length complex
 * values (in a work row kept with the twiddles, as TFLM keeps its tmpbuf), then the inverse
 * complex FFT (conjugate twiddles) straight into the output; no scaling beyond the stages'.
 */
#include <math.h>
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"
#include "signal_util.h"

enum { TYPE_INT16 = 7 };
#define RFFT_MAX_FACTORS 32
#define RFFT_MAX_LENGTH (1 << 20)

/* ---- SignalWindow: out = (in * window) >> shift, saturated to int16, window repeated. */

typedef struct {
  int32_t shift, size, window;
} window_data;

static ma_status window_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalWindow";
  ma_status st = mak_check_node(ctx, node, OP, 2, 2, 2, 1);
  const ma_tensor *in = node->inputs[0], *w = node->inputs[1], *out = node->outputs[0];
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", in, MA_INT16, -1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "window", w, MA_INT16, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", out, MA_INT16, in->ndims);
  window_data d = {0, 0, 0};
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "shift", 0, 31, &d.shift);
  if (st != MA_OK) return st;
  d.size = ma_num_elements(in);
  d.window = ma_num_elements(w);
  if (d.window <= 0 || d.size % d.window != 0 || ma_num_elements(out) != d.size)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d input elements are not whole windows of %d", OP,
                   (int)d.size, (int)d.window);
  window_data *p = ma_persistent(ctx, sizeof *p);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  node->user_data = p;
  return MA_OK;
}

static ma_status window_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const window_data *d = node->user_data;
  const int16_t *in = node->inputs[0]->data, *w = node->inputs[1]->data;
  int16_t *out = node->outputs[0]->data;
  for (int32_t i = 0; i < d->size; i++) {
    const int32_t raw = ((int32_t)in[i] * w[i % d->window]) >> d->shift;
    out[i] = (int16_t)mak_clamp(raw, INT16_MIN, INT16_MAX);
  }
  return MA_OK;
}

/* ---- SignalFftAutoScale: shift the frame left as far as its largest magnitude allows. */

static ma_status auto_scale_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalFftAutoScale";
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 2);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", node->inputs[0], MA_INT16, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_INT16, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "scale bits", node->outputs[1], MA_INT32, 0);
  if (st == MA_OK && ma_num_elements(node->inputs[0]) != ma_num_elements(node->outputs[0]))
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input and output sizes differ", OP);
  return st;
}

static ma_status auto_scale_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const int16_t *in = node->inputs[0]->data;
  int16_t *out = node->outputs[0]->data;
  const int32_t n = ma_num_elements(node->outputs[0]);
  /* TFLM's MaxAbs16 keeps an int16 maximum: -32768 stays negative and, widened to 32 bits,
   * has all high bits set, so no shift is possible (as for an all-zero frame). */
  int16_t max = 0;
  for (int32_t i = 0; i < n; i++) {
    if (in[i] > max) {
      max = in[i];
    } else if (-in[i] > max) {
      max = (int16_t)-in[i];
    }
  }
  int32_t bits = max > 0 ? 15 - (int32_t)mak_bit_length32((uint32_t)max) : 0;
  for (int32_t i = 0; i < n; i++) out[i] = (int16_t)(in[i] * (1 << bits));
  *(int32_t *)node->outputs[1]->data = bits;
  return MA_OK;
}

/* ---- SignalRfft (int16): kissfft fixed point. */

typedef struct {
  int16_t r, i;
} c16;

typedef struct {
  int32_t fft_length, half, input_length, frames, inverse;
  int32_t factors[2 * RFFT_MAX_FACTORS]; /* radix, remaining length; ... until length 1 */
} rfft_data; /* followed by int16 twiddles[2 * half] then split twiddles[2 * (half / 2)],
                and for the inverse a work row[2 * half] */

/* Conversions to int16 wrap, as kissfft's stores into int16 do with gcc. */
static inline int16_t w16(int32_t x) { return (int16_t)x; }
static inline int16_t sround(int32_t x) { return (int16_t)((x + (1 << 14)) >> 15); }
static inline int16_t smul(int32_t a, int32_t b) { return sround(a * b); }
static inline c16 cadd(c16 a, c16 b) { return (c16){w16(a.r + b.r), w16(a.i + b.i)}; }
static inline c16 csub(c16 a, c16 b) { return (c16){w16(a.r - b.r), w16(a.i - b.i)}; }
/* b is always a twiddle (|b| <= 32767), so the int32 sums cannot overflow. */
static inline c16 cmul(c16 a, c16 b) {
  return (c16){sround(a.r * b.r - a.i * b.i), sround(a.r * b.i + a.i * b.r)};
}
static inline c16 fixdiv(c16 c, int32_t div) {
  return (c16){smul(c.r, 32767 / div), smul(c.i, 32767 / div)};
}
static inline c16 ld(const int16_t *p, size_t k) { return (c16){p[2 * k], p[2 * k + 1]}; }
static inline void st(int16_t *p, size_t k, c16 v) {
  p[2 * k] = v.r;
  p[2 * k + 1] = v.i;
}

static const int16_t *twiddles(const rfft_data *d) { return (const int16_t *)(d + 1); }

static void bfly2(int16_t *F, size_t fstride, const int16_t *tw, size_t m) {
  for (size_t k = 0; k < m; k++) {
    c16 a = fixdiv(ld(F, k), 2), b = fixdiv(ld(F, k + m), 2);
    c16 t = cmul(b, ld(tw, k * fstride));
    st(F, k + m, csub(a, t));
    st(F, k, cadd(a, t));
  }
}

static void bfly3(int16_t *F, size_t fstride, const int16_t *tw, size_t m) {
  const c16 epi3 = ld(tw, fstride * m);
  for (size_t k = 0; k < m; k++) {
    c16 f0 = fixdiv(ld(F, k), 3), f1 = fixdiv(ld(F, k + m), 3), f2 = fixdiv(ld(F, k + 2 * m), 3);
    c16 s1 = cmul(f1, ld(tw, k * fstride)), s2 = cmul(f2, ld(tw, 2 * k * fstride));
    c16 s3 = cadd(s1, s2), s0 = csub(s1, s2);
    c16 fm = {w16(f0.r - (s3.r >> 1)), w16(f0.i - (s3.i >> 1))};
    s0 = (c16){smul(s0.r, epi3.i), smul(s0.i, epi3.i)};
    st(F, k, cadd(f0, s3));
    st(F, k + 2 * m, (c16){w16(fm.r + s0.i), w16(fm.i - s0.r)});
    st(F, k + m, (c16){w16(fm.r - s0.i), w16(fm.i + s0.r)});
  }
}

static void bfly4(int16_t *F, size_t fstride, const int16_t *tw, size_t m, bool inverse) {
  for (size_t k = 0; k < m; k++) {
    c16 f0 = fixdiv(ld(F, k), 4), f1 = fixdiv(ld(F, k + m), 4);
    c16 f2 = fixdiv(ld(F, k + 2 * m), 4), f3 = fixdiv(ld(F, k + 3 * m), 4);
    c16 s0 = cmul(f1, ld(tw, k * fstride)), s1 = cmul(f2, ld(tw, 2 * k * fstride));
    c16 s2 = cmul(f3, ld(tw, 3 * k * fstride));
    c16 s5 = csub(f0, s1);
    f0 = cadd(f0, s1);
    c16 s3 = cadd(s0, s2), s4 = csub(s0, s2);
    st(F, k + 2 * m, csub(f0, s3));
    st(F, k, cadd(f0, s3));
    const c16 s4j = inverse ? (c16){w16(-s4.i), s4.r} : (c16){s4.i, w16(-s4.r)}; /* -+i s4 */
    st(F, k + m, (c16){w16(s5.r + s4j.r), w16(s5.i + s4j.i)});
    st(F, k + 3 * m, (c16){w16(s5.r - s4j.r), w16(s5.i - s4j.i)});
  }
}

static void bfly5(int16_t *F, size_t fstride, const int16_t *tw, size_t m) {
  const c16 ya = ld(tw, fstride * m), yb = ld(tw, fstride * 2 * m);
  for (size_t u = 0; u < m; u++) {
    c16 f[5];
    for (size_t j = 0; j < 5; j++) f[j] = fixdiv(ld(F, u + j * m), 5);
    const c16 s0 = f[0];
    c16 s1 = cmul(f[1], ld(tw, u * fstride)), s2 = cmul(f[2], ld(tw, 2 * u * fstride));
    c16 s3 = cmul(f[3], ld(tw, 3 * u * fstride)), s4 = cmul(f[4], ld(tw, 4 * u * fstride));
    c16 s7 = cadd(s1, s4), s10 = csub(s1, s4), s8 = cadd(s2, s3), s9 = csub(s2, s3);
    st(F, u, (c16){w16(s0.r + s7.r + s8.r), w16(s0.i + s7.i + s8.i)});
    c16 s5 = {w16(s0.r + smul(s7.r, ya.r) + smul(s8.r, yb.r)),
              w16(s0.i + smul(s7.i, ya.r) + smul(s8.i, yb.r))};
    c16 s6 = {w16(smul(s10.i, ya.i) + smul(s9.i, yb.i)),
              w16(-smul(s10.r, ya.i) - smul(s9.r, yb.i))};
    st(F, u + m, csub(s5, s6));
    st(F, u + 4 * m, cadd(s5, s6));
    c16 s11 = {w16(s0.r + smul(s7.r, yb.r) + smul(s8.r, ya.r)),
               w16(s0.i + smul(s7.i, yb.r) + smul(s8.i, ya.r))};
    c16 s12 = {w16(-smul(s10.i, yb.i) + smul(s9.i, ya.i)),
               w16(smul(s10.r, yb.i) - smul(s9.r, ya.i))};
    st(F, u + 2 * m, cadd(s11, s12));
    st(F, u + 3 * m, csub(s11, s12));
  }
}

/* Input sample j of the frame, zero beyond its end (TFLM zero-pads a copy). */
static inline int16_t sample(const int16_t *in, int32_t length, size_t j) {
  return j < (size_t)length ? in[j] : 0;
}

/* kissfft's kf_work: decimation in time, recursing once per factor (at most 32 levels). */
static void kf_work(const rfft_data *d, const int16_t *in, int32_t in_length, int16_t *out,
                    size_t f, size_t fstride, const int32_t *factors) {
  const size_t p = (size_t)factors[0], m = (size_t)factors[1];
  for (size_t k = 0; k < p; k++, f += fstride) {
    if (m == 1) {
      st(out, k, (c16){sample(in, in_length, 2 * f), sample(in, in_length, 2 * f + 1)});
    } else {
      kf_work(d, in, in_length, out + 2 * k * m, f, fstride * p, factors + 2);
    }
  }
  const int16_t *tw = twiddles(d);
  if (p == 2) bfly2(out, fstride, tw, m);
  if (p == 3) bfly3(out, fstride, tw, m);
  if (p == 4) bfly4(out, fstride, tw, m, d->inverse != 0);
  if (p == 5) bfly5(out, fstride, tw, m);
}

/* kiss_fftr: half-length complex FFT of the even/odd samples, then the split (in place). */
static void rfft_frame(const rfft_data *d, const int16_t *in, int16_t *out) {
  const size_t n = (size_t)d->half;
  kf_work(d, in, d->input_length, out, 0, 1, d->factors);
  const int16_t *split = twiddles(d) + 2 * n;
  const c16 dc = fixdiv(ld(out, 0), 2);
  st(out, 0, (c16){w16(dc.r + dc.i), 0});
  st(out, n, (c16){w16(dc.r - dc.i), 0});
  for (size_t k = 1; k <= n / 2; k++) {
    const c16 a = ld(out, k), b = ld(out, n - k);
    const c16 fpk = fixdiv(a, 2), fpnk = fixdiv((c16){b.r, w16(-b.i)}, 2);
    const c16 f1k = cadd(fpk, fpnk), tw = cmul(csub(fpk, fpnk), ld(split, k - 1));
    st(out, k, (c16){w16((f1k.r + tw.r) >> 1), w16((f1k.i + tw.i) >> 1)});
    st(out, n - k, (c16){w16((f1k.r - tw.r) >> 1), w16((tw.i - f1k.i) >> 1)});
  }
}

static int32_t floor_sqrt(int32_t n) {
  int32_t s = 0;
  while ((int64_t)(s + 1) * (s + 1) <= n) s++;
  return s;
}

/* kissfft's kf_factor: powers of 4, then 2, then odd primes; 0 unless every radix is 2-5. */
static int factorize(int32_t n, int32_t *factors) {
  const int32_t root = floor_sqrt(n);
  int32_t p = 4;
  for (int i = 0; n > 1; i++) {
    while (n % p != 0) {
      p = p == 4 ? 2 : (p == 2 ? 3 : p + 2);
      if (p > root) p = n;
    }
    if (p > 5 || i >= RFFT_MAX_FACTORS) return 0;
    n /= p;
    factors[2 * i] = p;
    factors[2 * i + 1] = n;
  }
  return 1;
}

/* kiss_fftr_alloc's tables; the inverse's phases are negated (then rounded, as kissfft). */
static void make_twiddles(int16_t *tw, int32_t half, bool inverse) {
  const double pi = 3.14159265358979323846, sign = inverse ? -1.0 : 1.0;
  for (int32_t i = 0; i < half; i++) {
    const double phase = sign * -2 * pi * i / half;
    tw[2 * i] = (int16_t)floor(.5 + 32767 * cos(phase));
    tw[2 * i + 1] = (int16_t)floor(.5 + 32767 * sin(phase));
  }
  int16_t *split = tw + 2 * half;
  for (int32_t i = 0; i < half / 2; i++) {
    const double phase = sign * -pi * ((double)(i + 1) / half + .5);
    split[2 * i] = (int16_t)floor(.5 + 32767 * cos(phase));
    split[2 * i + 1] = (int16_t)floor(.5 + 32767 * sin(phase));
  }
}

/* Options and tables shared by SignalRfft and SignalIrfft: T (int16 only), fft_length
 * (half of it factoring into 2-5), the row shapes, and the twiddles. */
static ma_status fft_prepare(struct ma_context *ctx, ma_node *node, const char *op, bool inverse) {
  ma_status st = mak_check_node(ctx, node, op, 1, 1, 1, 1);
  int32_t type = 0, length = 0;
  if (st == MA_OK) st = mak_custom_option(ctx, node, op, "T", 0, 255, &type);
  if (st == MA_OK && type != TYPE_INT16)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: only int16 is implemented (T = %s)", op,
                   mak_type_name((uint8_t)type));
  if (st == MA_OK) st = mak_custom_option(ctx, node, op, "fft_length", 4, RFFT_MAX_LENGTH, &length);
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (st == MA_OK) st = mak_signal_tensor(ctx, op, "input", in, MA_INT16, -1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, op, "output", out, MA_INT16, in->ndims);
  if (st != MA_OK) return st;
  rfft_data d = {length, length / 2, 0, 0, inverse, {0}};
  if (length % 2 != 0 || !factorize(d.half, d.factors))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED,
                   "%s: fft_length %d: half of it must factor into 2, 3, 4 and 5", op, (int)length);
  const ma_tensor *spectrum = inverse ? in : out, *signal = inverse ? out : in;
  const int32_t bins = spectrum->ndims > 0 ? spectrum->dims[spectrum->ndims - 1] : 0;
  d.input_length = signal->ndims > 0 ? signal->dims[signal->ndims - 1] : 0;
  d.frames = d.input_length > 0 ? ma_num_elements(signal) / d.input_length : 0;
  /* The spectrum rows: length + 2 values (half + 1 complex bins); an inverse reads those. */
  const bool fits = inverse ? d.input_length == length && bins >= length + 2 && bins % 2 == 0
                            : d.input_length > 0 && d.input_length <= length && bins == length + 2;
  if (!fits || ma_num_elements(spectrum) != (int64_t)d.frames * bins)
    return ma_fail(ctx, MA_ERR_MODEL,
                   "%s: rows of %d samples and of %d spectrum values do not fit fft_length %d",
                   op, (int)d.input_length, (int)bins, (int)length);
  d.input_length = inverse ? bins : d.input_length; /* what a frame reads */
  const size_t tables = sizeof(int16_t) * 2 * ((size_t)d.half + (size_t)d.half / 2);
  const size_t work = inverse ? sizeof(int16_t) * 2 * (size_t)d.half : 0;
  rfft_data *p = ma_persistent(ctx, sizeof d + tables + work);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  make_twiddles((int16_t *)(p + 1), d.half, inverse);
  node->user_data = p;
  return MA_OK;
}

static ma_status rfft_prepare(struct ma_context *ctx, ma_node *node) {
  return fft_prepare(ctx, node, "SignalRfft", false);
}

static ma_status irfft_prepare(struct ma_context *ctx, ma_node *node) {
  return fft_prepare(ctx, node, "SignalIrfft", true);
}

/* kiss_fftri: the real spectrum in (half + 1 complex bins) merged into half complex values,
 * then their inverse FFT into out (fft_length samples). */
static void irfft_frame(const rfft_data *d, const int16_t *in, int16_t *out) {
  const size_t n = (size_t)d->half;
  const int16_t *split = twiddles(d) + 2 * n;
  int16_t *work = (int16_t *)(uintptr_t)(split + 2 * (n / 2));
  const c16 first = ld(in, 0), last = ld(in, n);
  st(work, 0, fixdiv((c16){w16(first.r + last.r), w16(first.r - last.r)}, 2));
  for (size_t k = 1; k <= n / 2; k++) {
    const c16 b = ld(in, n - k);
    const c16 fk = fixdiv(ld(in, k), 2), fnkc = fixdiv((c16){b.r, w16(-b.i)}, 2);
    const c16 fek = cadd(fk, fnkc), fok = cmul(csub(fk, fnkc), ld(split, k - 1));
    st(work, k, cadd(fek, fok));
    const c16 low = csub(fek, fok);
    st(work, n - k, (c16){low.r, w16(-low.i)});
  }
  kf_work(d, work, d->fft_length, out, 0, 1, d->factors);
}

static ma_status rfft_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const rfft_data *d = node->user_data;
  const int16_t *in = node->inputs[0]->data;
  int16_t *out = node->outputs[0]->data;
  for (int32_t f = 0; f < d->frames; f++) {
    rfft_frame(d, in + (size_t)f * d->input_length, out + (size_t)f * (d->fft_length + 2));
  }
  return MA_OK;
}

static ma_status irfft_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const rfft_data *d = node->user_data;
  const int16_t *in = node->inputs[0]->data;
  int16_t *out = node->outputs[0]->data;
  for (int32_t f = 0; f < d->frames; f++)
    irfft_frame(d, in + (size_t)f * d->input_length, out + (size_t)f * d->fft_length);
  return MA_OK;
}

/* ---- SignalEnergy: re^2 + im^2 of bins [start_index, end_index); other bins are left as
 * they are, as TFLM does. */

typedef struct {
  int32_t start, end;
} energy_data;

static ma_status energy_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalEnergy";
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 1);
  const ma_tensor *in = node->inputs[0], *out = node->outputs[0];
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", in, MA_INT16, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", out, MA_UINT32, 1);
  energy_data d = {0, 0};
  const int32_t bins = st == MA_OK ? ma_num_elements(out) : 0;
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "start_index", 0, bins, &d.start);
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "end_index", d.start, bins, &d.end);
  if (st != MA_OK) return st;
  if (ma_num_elements(in) < 2 * d.end)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d input values hold fewer than %d bins", OP,
                   (int)ma_num_elements(in), (int)d.end);
  energy_data *p = ma_persistent(ctx, sizeof *p);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  node->user_data = p;
  return MA_OK;
}

static ma_status energy_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const energy_data *d = node->user_data;
  const int16_t *in = node->inputs[0]->data;
  uint32_t *out = node->outputs[0]->data;
  for (int32_t i = d->start; i < d->end; i++) {
    const int32_t re = in[2 * i], im = in[2 * i + 1];
    out[i] = (uint32_t)(re * re) + (uint32_t)(im * im); /* wraps as TFLM's int32 sum */
  }
  return MA_OK;
}

const ma_kernel mak_signal_window = {window_prepare, window_eval, 0};
const ma_kernel mak_signal_fft_auto_scale = {auto_scale_prepare, auto_scale_eval, 0};
const ma_kernel mak_signal_rfft = {rfft_prepare, rfft_eval, 0};
const ma_kernel mak_signal_irfft = {irfft_prepare, irfft_eval, 0};
const ma_kernel mak_signal_energy = {energy_prepare, energy_eval, 0};
