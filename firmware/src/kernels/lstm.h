/* UNIDIRECTIONAL_SEQUENCE_LSTM's int8 state, for lstm.c and its Helium form
 * (fast/mve/fast_mve_lstm.h): the op data prepare keeps, and the gates' rows and
 * requantizations an invocation reads once. */
#ifndef MA_LSTM_H
#define MA_LSTM_H

#include <stdbool.h>
#include <stdint.h>

#include "fast/fast_s8_core.h"
#include "fast/mve/fast_mve_lstm_data.h" /* LSTM_GATE_LANES */

enum { GATE_I = 0, GATE_F = 1, GATE_G = 2, GATE_O = 3 };
enum { ACT_TANH = 4, ACT_SIGMOID = 6 }; /* ActivationFunctionType */

typedef struct {
  int32_t act; /* the cell gate's activation */
  int32_t time_major;
  float cell_clip;
  /* int8 only: gate FC requantization into Q3.12, per gate */
  int32_t in_mult[4], rec_mult[4];
  int8_t in_shift[4], rec_shift[4];
  int32_t in_woff[4], rec_woff[4]; /* -weight zero points */
  int32_t x_off, h_off, h_zp;      /* -input zp, -hidden zp, hidden zp */
  int32_t fc_mult, ig_mult, out_mult; /* f*c -> c, i*g -> c, tanh(c)*o -> h */
  int8_t fc_shift, ig_shift, out_shift;
  int16_t qclip;                   /* cell clip in cell-state units (used if cell_clip > 0) */
  int32_t tanh_shift;              /* 12 + log2(cell scale) */
} lstm_data;

/* The four gates' weight rows and biases, read from the node once per invocation, and the
 * requantizations of an invocation in fast_s8_core.h's one-rounding form (requant_q: equal to
 * MultiplyByQuantizedMultiplier for every multiplier mak_quantize_multiplier gives; built per
 * invocation on the stack, so the persistent lstm_data stays as small). */
typedef struct {
  const int8_t *w[4], *r[4];
  const int32_t *bias[4];
  int32_t n_in, n_cell;
  bool symmetric; /* no weight zero points */
  chan_q in_q[4], rec_q[4], fc_q, ig_q, out_q;
  LSTM_GATE_LANES /* the same for an architecture's vector lanes, or nothing */
} gate_rows;

#endif
