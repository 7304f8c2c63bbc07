/* Test harness: the ma_kernel.h services, minimally, so that tests/runtime/test_kernels.py can run
 * single operators through ctypes without the runtime core.
 *
 * Test-only code (built into a shared library by the test, with UBSan). Options do not come
 * from a flatbuffer here: the test decodes them with the `tflite` package and passes a
 * harness_opts table, so this file needs no schema knowledge.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ma_kernel.h"

#define HARNESS_SLOTS 32
#define HARNESS_SCRATCH 16

typedef struct {
  int32_t present[HARNESS_SLOTS]; /* 1 = int, 2 = float, 3 = int vector */
  int32_t ival[HARNESS_SLOTS];
  float fval[HARNESS_SLOTS];
  int32_t vec_len[HARNESS_SLOTS];
  const int32_t *vec[HARNESS_SLOTS];
} harness_opts;

struct ma_context {
  uint8_t *tail;
  size_t tail_cap, tail_used;
  uint8_t *scratch;
  size_t scratch_cap, scratch_used;
  int32_t n_scratch;
  size_t scratch_off[HARNESS_SCRATCH];
  size_t scratch_requested; /* sum of the requested sizes, without alignment */
  int32_t status;
  char message[256];
};

size_t harness_ctx_size(void) { return sizeof(struct ma_context); }
size_t harness_tensor_size(void) { return sizeof(ma_tensor); }
size_t harness_node_size(void) { return sizeof(ma_node); }
size_t harness_opts_size(void) { return sizeof(harness_opts); }

void harness_ctx_init(struct ma_context *c, void *tail, size_t tail_cap, void *scratch,
                      size_t scratch_cap) {
  memset(c, 0, sizeof *c);
  c->tail = tail;
  c->tail_cap = tail_cap;
  c->scratch = scratch;
  c->scratch_cap = scratch_cap;
}

const char *harness_message(const struct ma_context *c) { return c->message; }
size_t harness_tail_used(const struct ma_context *c) { return c->tail_used; }
size_t harness_scratch_requested(const struct ma_context *c) { return c->scratch_requested; }
int32_t harness_scratch_count(const struct ma_context *c) { return c->n_scratch; }

int32_t harness_prepare(struct ma_context *c, ma_node *node) {
  const ma_kernel *k = ma_find_kernel(node->builtin_code);
  if (k == NULL)
    return ma_fail(c, MA_ERR_UNSUPPORTED, "no kernel for builtin %d", (int)node->builtin_code);
  node->variant = k->variant;
  return k->prepare(c, node);
}

int32_t harness_eval(struct ma_context *c, ma_node *node) {
  const ma_kernel *k = ma_find_kernel(node->builtin_code);
  if (k == NULL) return ma_fail(c, MA_ERR_UNSUPPORTED, "no kernel");
  node->variant = k->variant;
  return k->eval(c, node);
}

/* ---- the services of ma_kernel.h ---- */

void *ma_persistent(struct ma_context *c, size_t bytes) {
  const size_t start = (c->tail_used + 15u) & ~(size_t)15u;
  if (start + bytes > c->tail_cap) {
    ma_fail(c, MA_ERR_ARENA, "tail needs %lu bytes, has %lu", (unsigned long)(start + bytes),
            (unsigned long)c->tail_cap);
    return NULL;
  }
  c->tail_used = start + bytes;
  return c->tail + start;
}

ma_status ma_request_scratch(struct ma_context *c, size_t bytes, int32_t *index) {
  const size_t start = (c->scratch_used + 15u) & ~(size_t)15u;
  if (c->n_scratch >= HARNESS_SCRATCH || start + bytes > c->scratch_cap)
    return ma_fail(c, MA_ERR_ARENA, "scratch request of %lu bytes refused",
                   (unsigned long)bytes);
  c->scratch_off[c->n_scratch] = start;
  c->scratch_requested += bytes;
  c->scratch_used = start + bytes;
  *index = c->n_scratch++;
  return MA_OK;
}

void *ma_scratch(struct ma_context *c, int32_t index) {
  if (index < 0 || index >= c->n_scratch) return NULL;
  return c->scratch + c->scratch_off[index];
}

ma_status ma_fail(struct ma_context *c, ma_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->message, sizeof c->message, fmt, ap);
  va_end(ap);
  c->status = status;
  return status;
}

static const harness_opts *opts_of(const ma_options *o) {
  return o != NULL ? (const harness_opts *)o->table : NULL;
}

int32_t ma_opt_i32(const ma_options *o, int slot, int32_t dflt) {
  const harness_opts *h = opts_of(o);
  if (h == NULL || slot < 0 || slot >= HARNESS_SLOTS || h->present[slot] != 1) return dflt;
  return h->ival[slot];
}

float ma_opt_f32(const ma_options *o, int slot, float dflt) {
  const harness_opts *h = opts_of(o);
  if (h == NULL || slot < 0 || slot >= HARNESS_SLOTS || h->present[slot] != 2) return dflt;
  return h->fval[slot];
}

int32_t ma_opt_vec_len(const ma_options *o, int slot) {
  const harness_opts *h = opts_of(o);
  if (h == NULL || slot < 0 || slot >= HARNESS_SLOTS || h->present[slot] != 3) return 0;
  return h->vec_len[slot];
}

int32_t ma_opt_vec_i32(const ma_options *o, int slot, int32_t i) {
  if (i < 0 || i >= ma_opt_vec_len(o, slot)) return 0;
  return opts_of(o)->vec[slot][i];
}

int32_t ma_num_elements(const ma_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndims && d < MA_MAX_DIMS; ++d) {
    if (t->dims[d] < 0) return -1;
    n *= t->dims[d];
    if (n > INT32_MAX) return -1;
  }
  return (int32_t)n;
}

size_t ma_type_size(uint8_t type) {
  switch (type) {
    case MA_FLOAT32: case MA_INT32: case MA_UINT32: return 4;
    case MA_FLOAT16: case MA_INT16: case MA_UINT16: return 2;
    case MA_UINT8: case MA_INT8: case MA_BOOL: return 1;
    case MA_INT64: case MA_FLOAT64: case MA_UINT64: case MA_COMPLEX64: return 8;
    case MA_COMPLEX128: return 16;
    default: return 0;
  }
}
