/* TFLM's streaming Signal* custom operators, which carry samples from one invocation to the
 * next: SignalDelay, SignalFramer, SignalStacker (int16) and SignalOverlapAdd (int16,
 * float32).
 *
 * TFLM keeps each stream in a circular buffer of twice its capacity; here each stream is a
 * plain array in persistent memory (zeroed at open, as TFLM resets it) holding the samples
 * not yet consumed, oldest first, shifted down when consumed: the same outputs, half the
 * state. Where TFLM's buffer would overflow or its output would be written past its end
 * (options that do not fit the shapes), the model is refused at open. A frame TFLM marks
 * invalid (not enough samples yet) is left unwritten by TFLM; here it is zeroed.
 */
#include <string.h>

#include "kernel_util.h"
#include "kernels.h"
#include "signal_util.h"

enum { MAX_STREAM = 1 << 24 }; /* bound on option sizes: keeps products in int32 */

/* Rows (product of all but the last dimension) and the last dimension of t. */
static void rows_and_depth(const ma_tensor *t, int32_t *rows, int32_t *depth) {
  *depth = t->ndims > 0 ? t->dims[t->ndims - 1] : 1;
  *rows = *depth > 0 ? ma_num_elements(t) / *depth : 0;
}

static ma_status check_elements(struct ma_context *ctx, const char *op, const char *what,
                                const ma_tensor *t, int64_t expected) {
  if (ma_num_elements(t) == expected) return MA_OK;
  return ma_fail(ctx, MA_ERR_MODEL, "%s: %s has %d elements, the options give %ld", op, what,
                 (int)ma_num_elements(t), (long)expected);
}

/* Persistent state: the header, then `bytes` more, zeroed. */
static void *state_alloc(struct ma_context *ctx, ma_node *node, size_t header, size_t bytes) {
  uint8_t *p = ma_persistent(ctx, header + bytes);
  if (p != NULL) memset(p, 0, header + bytes);
  node->user_data = p;
  return p;
}

/* ---- SignalDelay: each row's samples come out delay_length samples later (zeros first). */

typedef struct {
  int32_t frame, delay, rows;
} delay_data; /* then int16 state[rows][delay]: the last delay samples seen */

static ma_status delay_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalDelay";
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", node->inputs[0], MA_INT16, -1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_INT16, -1);
  delay_data d;
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "delay_length", 0, MAX_STREAM, &d.delay);
  if (st != MA_OK) return st;
  rows_and_depth(node->inputs[0], &d.rows, &d.frame);
  if ((st = check_elements(ctx, OP, "output", node->outputs[0],
                           ma_num_elements(node->inputs[0]))) != MA_OK)
    return st;
  delay_data *p = state_alloc(ctx, node, sizeof d, sizeof(int16_t) * (size_t)d.rows * d.delay);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  return MA_OK;
}

static ma_status delay_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const delay_data *d = node->user_data;
  int16_t *state = (int16_t *)(void *)((delay_data *)node->user_data + 1);
  const int32_t n = d->frame, k = d->delay;
  for (int32_t r = 0; r < d->rows; ++r) {
    const int16_t *x = (const int16_t *)node->inputs[0]->data + (size_t)r * n;
    int16_t *y = (int16_t *)node->outputs[0]->data + (size_t)r * n;
    int16_t *s = state + (size_t)r * k;
    /* The stream is s followed by x: the first n samples go out, the last k stay. */
    const int32_t from_state = n < k ? n : k;
    memcpy(y, s, sizeof *y * (size_t)from_state);
    memcpy(y + from_state, x, sizeof *y * (size_t)(n - from_state));
    if (n >= k) {
      memcpy(s, x + (n - k), sizeof *s * (size_t)k);
    } else {
      memmove(s, s + n, sizeof *s * (size_t)(k - n));
      memcpy(s + (k - n), x, sizeof *s * (size_t)n);
    }
  }
  return MA_OK;
}

/* ---- SignalFramer: frames of frame_size samples every frame_step samples of each row. */

typedef struct {
  int32_t size, step, rows, n_frames, capacity;
} framer_data; /* then int32 count[rows], int16 samples[rows][capacity] */

static ma_status framer_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalFramer";
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 2);
  const ma_tensor *in = node->inputs[0];
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", in, MA_INT16, -1);
  if (st == MA_OK)
    st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_INT16, in->ndims + 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "valid output", node->outputs[1], MA_BOOL, 0);
  framer_data d;
  int32_t prefill = 0, depth;
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "frame_size", 1, MAX_STREAM, &d.size);
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "frame_step", 1, MAX_STREAM, &d.step);
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "prefill", 0, 1, &prefill);
  if (st != MA_OK) return st;
  rows_and_depth(in, &d.rows, &depth);
  if (depth < d.step || depth % d.step != 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: frame_step %d does not divide the input's %d samples",
                   OP, (int)d.step, (int)depth);
  if (prefill && d.size < d.step) /* TFLM would prefill a negative count */
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: prefill needs frame_size >= frame_step", OP);
  d.n_frames = depth / d.step;
  d.capacity = (d.size + d.step - 1) / d.step * d.step;
  if ((st = check_elements(ctx, OP, "output", node->outputs[0],
                           (int64_t)d.rows * d.n_frames * d.size)) != MA_OK)
    return st;
  const size_t rows = (size_t)d.rows;
  framer_data *p = state_alloc(ctx, node, sizeof d,
                               rows * sizeof(int32_t) + rows * d.capacity * sizeof(int16_t));
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  int32_t *count = (int32_t *)(void *)(p + 1);
  for (size_t r = 0; r < rows; ++r) count[r] = prefill ? d.size - d.step : 0; /* zeros */
  return MA_OK;
}

static ma_status framer_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const framer_data *d = node->user_data;
  int32_t *count = (int32_t *)(void *)((framer_data *)node->user_data + 1);
  int16_t *samples = (int16_t *)(void *)(count + d->rows);
  bool valid = true;
  for (int32_t r = 0; r < d->rows; ++r) {
    int16_t *s = samples + (size_t)r * d->capacity;
    for (int32_t f = 0; f < d->n_frames; ++f) {
      const size_t frame = (size_t)r * d->n_frames + f;
      const int16_t *x = (const int16_t *)node->inputs[0]->data + frame * d->step;
      int16_t *y = (int16_t *)node->outputs[0]->data + frame * d->size;
      /* count < size before the write, and the capacity holds count + step (TFLM's). */
      memcpy(s + count[r], x, sizeof *s * (size_t)d->step);
      count[r] += d->step;
      if (count[r] < d->size) {
        valid = false;
        memset(y, 0, sizeof *y * (size_t)d->size);
        continue;
      }
      memcpy(y, s, sizeof *y * (size_t)d->size);
      count[r] -= d->step;
      memmove(s, s + d->step, sizeof *s * (size_t)count[r]);
    }
  }
  *(bool *)node->outputs[1]->data = valid;
  return MA_OK;
}

/* ---- SignalStacker: the last left + 1 + right input frames, every stacker_step frames. */

typedef struct {
  int32_t channels, frames, left, step;
  int32_t count, started; /* frames held; whether the first frame was seen */
} stacker_data; /* then int16 samples[frames][channels] */

static ma_status stacker_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalStacker";
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 2);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", node->inputs[0], MA_INT16, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], MA_INT16, 1);
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "valid output", node->outputs[1], MA_BOOL, 0);
  stacker_data d = {0, 0, 0, 0, 0, 0};
  int32_t right = 0;
  if (st == MA_OK)
    st = mak_custom_option(ctx, node, OP, "num_channels", 1, MAX_STREAM, &d.channels);
  if (st == MA_OK)
    st = mak_custom_option(ctx, node, OP, "stacker_left_context", 0, 1024, &d.left);
  if (st == MA_OK)
    st = mak_custom_option(ctx, node, OP, "stacker_right_context", 0, 1024, &right);
  d.frames = d.left + right + 1;
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "stacker_step", 1, d.frames, &d.step);
  if (st == MA_OK) st = check_elements(ctx, OP, "input", node->inputs[0], d.channels);
  if (st == MA_OK)
    st = check_elements(ctx, OP, "output", node->outputs[0], (int64_t)d.channels * d.frames);
  if (st != MA_OK) return st;
  stacker_data *p =
      state_alloc(ctx, node, sizeof d, sizeof(int16_t) * (size_t)d.channels * d.frames);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  return MA_OK;
}

static ma_status stacker_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  stacker_data *d = node->user_data;
  int16_t *s = (int16_t *)(void *)(d + 1);
  const size_t frame_bytes = sizeof *s * (size_t)d->channels;
  /* count < frames here: it reaches frames at most, and then drops by step >= 1. */
  memcpy(s + (size_t)d->count * d->channels, node->inputs[0]->data, frame_bytes);
  d->count++;
  if (!d->started) { /* the first frame also fills the left context */
    for (int32_t i = 0; i < d->left; ++i) memcpy(s + (size_t)(1 + i) * d->channels, s, frame_bytes);
    d->count += d->left;
    d->started = 1;
  }
  bool *valid = node->outputs[1]->data;
  *valid = d->count >= d->frames;
  if (!*valid) {
    memset(node->outputs[0]->data, 0, frame_bytes * (size_t)d->frames);
    return MA_OK;
  }
  memcpy(node->outputs[0]->data, s, frame_bytes * (size_t)d->frames);
  d->count -= d->step;
  memmove(s, s + (size_t)d->step * d->channels, frame_bytes * (size_t)d->count);
  return MA_OK;
}

/* ---- SignalOverlapAdd: frames summed frame_step apart (int16 saturating, or float). */

typedef struct {
  int32_t type, size, step, rows, n_frames;
} overlap_add_data; /* then T pending[rows][size]: sums not yet output */

static ma_status overlap_add_prepare(struct ma_context *ctx, ma_node *node) {
  static const char OP[] = "SignalOverlapAdd";
  ma_status st = mak_check_node(ctx, node, OP, 1, 1, 1, 1);
  overlap_add_data d;
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "T", 0, 255, &d.type);
  if (st == MA_OK && d.type != MA_INT16 && d.type != MA_FLOAT32)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: type %s is not supported (int16, float32)", OP,
                   mak_type_name((uint8_t)d.type));
  const ma_tensor *in = node->inputs[0];
  if (st == MA_OK) st = mak_signal_tensor(ctx, OP, "input", in, (uint8_t)d.type, -1);
  if (st == MA_OK && in->ndims < 2)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: input needs 2 or more dimensions", OP);
  if (st == MA_OK)
    st = mak_signal_tensor(ctx, OP, "output", node->outputs[0], (uint8_t)d.type, in->ndims - 1);
  if (st == MA_OK) st = mak_custom_option(ctx, node, OP, "frame_step", 1, MAX_STREAM, &d.step);
  if (st != MA_OK) return st;
  d.size = in->dims[in->ndims - 1];
  d.n_frames = in->dims[in->ndims - 2];
  d.rows = d.size > 0 && d.n_frames > 0 ? ma_num_elements(in) / (d.size * d.n_frames) : 0;
  if (d.step > d.size) /* TFLM would output samples past its buffer */
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: frame_step %d exceeds the frame size %d", OP,
                   (int)d.step, (int)d.size);
  if ((st = check_elements(ctx, OP, "output", node->outputs[0],
                           (int64_t)d.rows * d.n_frames * d.step)) != MA_OK)
    return st;
  const size_t elem = d.type == MA_INT16 ? sizeof(int16_t) : sizeof(float);
  overlap_add_data *p = state_alloc(ctx, node, sizeof d, elem * (size_t)d.rows * d.size);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  return MA_OK;
}

/* One frame: added into the pending sums, the first step of them output and shifted out. */
#define OVERLAP_ADD_FRAME(T, ADD)                                     \
  do {                                                                \
    const T *x = (const T *)node->inputs[0]->data + frame * d->size;  \
    T *y = (T *)node->outputs[0]->data + frame * d->step;             \
    T *b = (T *)pending + (size_t)r * d->size;                        \
    for (int32_t i = 0; i < d->size; ++i) b[i] = ADD;                 \
    memcpy(y, b, sizeof *b * (size_t)d->step);                        \
    memmove(b, b + d->step, sizeof *b * (size_t)(d->size - d->step)); \
    memset(b + (d->size - d->step), 0, sizeof *b * (size_t)d->step);  \
  } while (0)

static ma_status overlap_add_eval(struct ma_context *ctx, ma_node *node) {
  (void)ctx;
  const overlap_add_data *d = node->user_data;
  void *pending = (overlap_add_data *)node->user_data + 1;
  for (int32_t r = 0; r < d->rows; ++r) {
    for (int32_t f = 0; f < d->n_frames; ++f) {
      const size_t frame = (size_t)r * d->n_frames + f;
      if (d->type == MA_INT16)
        OVERLAP_ADD_FRAME(int16_t, (int16_t)mak_clamp(x[i] + b[i], INT16_MIN, INT16_MAX));
      else
        OVERLAP_ADD_FRAME(float, b[i] + x[i]);
    }
  }
  return MA_OK;
}

const ma_kernel mak_signal_delay = {delay_prepare, delay_eval, 0};
const ma_kernel mak_signal_framer = {framer_prepare, framer_eval, 0};
const ma_kernel mak_signal_stacker = {stacker_prepare, stacker_eval, 0};
const ma_kernel mak_signal_overlap_add = {overlap_add_prepare, overlap_add_eval, 0};
