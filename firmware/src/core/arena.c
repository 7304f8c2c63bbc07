/* Arena sections, the allocation recorder, and the services the core gives kernels. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "options_schema.h"

static uintptr_t align_up(uintptr_t v, size_t a) { return (v + (a - 1)) & ~(uintptr_t)(a - 1); }

static size_t usage(const ma_interp *it) {
  return (size_t)(it->temp - it->arena_start) + (size_t)(it->arena_end - it->tail);
}

static void note_usage(ma_interp *it) {
  size_t u = usage(it);
  if (u > it->required) it->required = u;
  size_t t = (size_t)(it->temp - it->arena_start);
  if (t > it->temp_peak) it->temp_peak = t;
}

size_t ma_tail_used(const ma_interp *it) { return (size_t)(it->arena_end - it->tail); }

size_t ma_required(const ma_interp *it) {
  /* The usable arena is a multiple of MA_ALIGN, so that is the granularity of "required". */
  return (it->required + (MA_ALIGN - 1)) & ~(size_t)(MA_ALIGN - 1);
}

static void *out_of_arena(ma_interp *it, size_t bytes) {
  /* Set-up stopped here, so the model's full requirement is unknown: only a caller with more
   * memory can measure it (ma_arena_shortfall), so no "needs at least" figure is given. */
  size_t need = usage(it) + bytes;
  ma_fail(it, MA_ERR_ARENA, "arena too small: has %lu bytes, set-up ran out at %lu",
          (unsigned long)(it->arena_end - it->arena_start),
          (unsigned long)align_up(need, MA_ALIGN));
  return NULL;
}

void *ma_tail_alloc(ma_interp *it, size_t bytes, size_t align, ma_rec_category cat) {
  size_t room = (size_t)(it->tail - it->temp);
  if (bytes > room) return out_of_arena(it, bytes);
  uintptr_t p = ((uintptr_t)it->tail - bytes) & ~(uintptr_t)(align - 1);
  if (p < (uintptr_t)it->temp) return out_of_arena(it, bytes + ((uintptr_t)it->tail - bytes - p));
  size_t used = (size_t)((uintptr_t)it->tail - p);
  it->tail = (uint8_t *)p;
  it->rec[cat].requested += bytes;
  it->rec[cat].used += used;
  /* Tensor and node tables are counted per tensor / per node by their callers, as TFLM does. */
  if (cat != MA_REC_EVAL_TENSOR && cat != MA_REC_NODES && cat != MA_REC_TENSOR) {
    it->rec[cat].count++;
  }
  note_usage(it);
  memset(it->tail, 0, used);
  return it->tail;
}

void *ma_temp_alloc(ma_interp *it, size_t bytes, size_t align) {
  uintptr_t p = align_up((uintptr_t)it->temp, align);
  if (p > (uintptr_t)it->tail || bytes > (size_t)((uintptr_t)it->tail - p)) {
    return out_of_arena(it, bytes + (p - (uintptr_t)it->temp));
  }
  it->temp = (uint8_t *)(p + bytes);
  note_usage(it);
  return (void *)p;
}

void ma_temp_reset(ma_interp *it) { it->temp = it->arena_start; }

ma_status ma_vfail(ma_interp *it, ma_status status, const char *fmt, va_list ap) {
  if (it->msg != NULL && it->msg_size > 0) vsnprintf(it->msg, it->msg_size, fmt, ap);
  return status;
}

ma_status ma_fail(struct ma_context *ctx, ma_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ma_vfail(ctx, status, fmt, ap);
  va_end(ap);
  return status;
}

/* Adds the failing operator to a kernel's message, so errors say where they happened. */
ma_status ma_at_operator(ma_interp *it, ma_status st, int32_t sg, int32_t k, const char *what) {
  if (st == MA_OK || it->msg == NULL || it->msg_size == 0) return st;
  char inner[160];
  snprintf(inner, sizeof inner, "%s", it->msg[0] != 0 ? it->msg : "no message");
  int32_t code = it->subgraphs[sg].nodes[k].code;
  const char *custom = ma_custom_op_name(code);
  snprintf(it->msg, it->msg_size, "%s %s (subgraph %d, operator %d) failed: %s",
           custom != NULL ? custom : ma_op_name(code), what, (int)sg, (int)k, inner);
  return st;
}

/* ------------------------------------------------------------ kernel services */

void ma_log_request(ma_interp *it, int kind, size_t bytes) {
  if (it->cb.log != NULL) it->cb.log(it->log_ctx, kind, bytes, it->cur_subgraph, it->cur_node);
}

void *ma_persistent(struct ma_context *ctx, size_t bytes) {
  if (ctx->phase != MA_PHASE_PREPARE) {
    ma_fail(ctx, MA_ERR_KERNEL, "ma_persistent called outside prepare");
    return NULL;
  }
  ma_log_request(ctx, MA_LOG_PERSISTENT, bytes);
  return ma_tail_alloc(ctx, bytes, MA_ALIGN, MA_REC_PERSISTENT_BUFFER);
}

ma_status ma_request_scratch(struct ma_context *ctx, size_t bytes, int32_t *index) {
  if (ctx->phase != MA_PHASE_PREPARE || index == NULL) {
    return ma_fail(ctx, MA_ERR_KERNEL, "ma_request_scratch called outside prepare");
  }
  if (bytes > (size_t)INT32_MAX - MA_ALIGN) {
    return ma_fail(ctx, MA_ERR_KERNEL, "scratch request of %lu bytes is too large",
                   (unsigned long)bytes);
  }
  ma_log_request(ctx, MA_LOG_SCRATCH, bytes);
  /* Requests are appended contiguously: nothing else uses temp during prepare. */
  ma_scratch_req *r = ma_temp_alloc(ctx, sizeof *r, _Alignof(ma_scratch_req));
  if (r == NULL) return MA_ERR_ARENA;
  if (ctx->n_scratch == 0) ctx->scratch_reqs = r;
  r->bytes = bytes;
  r->subgraph = ctx->cur_subgraph;
  r->node = ctx->cur_node;
  *index = ctx->n_scratch++;
  return MA_OK;
}

void *ma_scratch(struct ma_context *ctx, int32_t index) {
  if (ctx->phase != MA_PHASE_READY || index < 0 || index >= ctx->n_scratch) return NULL;
  return ctx->arena_start + ctx->scratch_offsets[index];
}

/* ------------------------------------------------------------ options */

/* Position of a field in an options table validated at load, or NULL when absent. */
static const uint8_t *opt_field(const ma_options *o, int slot, size_t width) {
  if (o == NULL || o->table == NULL || slot < 0) return NULL;
  int32_t soff;
  memcpy(&soff, o->table, 4);
  const uint8_t *vt = o->table - soff;
  uint16_t vt_len, tab_len, fo;
  memcpy(&vt_len, vt, 2);
  memcpy(&tab_len, vt + 2, 2);
  size_t vo = 4u + 2u * (size_t)slot;
  if (vo + 2 > vt_len) return NULL;
  memcpy(&fo, vt + vo, 2);
  if (fo < 4 || fo + width > tab_len) return NULL;
  return o->table + fo;
}

int32_t ma_opt_i32(const ma_options *o, int slot, int32_t dflt) {
  /* The schema gives each field's width: reading 4 bytes at a byte field would pick up
   * its neighbours. */
  char kind = o != NULL ? ma_option_kind(o->type, slot) : 0;
  size_t width = (kind == 'b' || kind == 'B') ? 1 : (kind == 'h' || kind == 'H') ? 2
                 : (kind == 'i' || kind == 'I') ? 4 : 0;
  if (width == 0) return dflt;
  const uint8_t *p = opt_field(o, slot, width);
  if (p == NULL) return dflt;
  switch (kind) {
    case 'b': return (int8_t)p[0];
    case 'B': return p[0];
    case 'h': case 'H': {
      uint16_t v;
      memcpy(&v, p, 2);
      return kind == 'h' ? (int32_t)(int16_t)v : (int32_t)v;
    }
    default: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
  }
}

float ma_opt_f32(const ma_options *o, int slot, float dflt) {
  if (o == NULL || ma_option_kind(o->type, slot) != 'f') return dflt;
  const uint8_t *p = opt_field(o, slot, 4);
  if (p == NULL) return dflt;
  float v;
  memcpy(&v, p, 4);
  return v;
}

/* Start of an int32 vector field and its length, bounds-checked against the model end. */
static const uint8_t *opt_vec(const ma_options *o, int slot, uint32_t *len) {
  *len = 0;
  if (o == NULL || ma_option_kind(o->type, slot) != 'v') return NULL;
  const uint8_t *p = opt_field(o, slot, 4);
  if (p == NULL || o->end == NULL) return NULL;
  uint32_t off;
  memcpy(&off, p, 4);
  if (off > (size_t)(o->end - p) || (size_t)(o->end - p) - off < 4) return NULL;
  const uint8_t *v = p + off;
  uint32_t n;
  memcpy(&n, v, 4);
  if ((size_t)n > ((size_t)(o->end - v) - 4) / 4) return NULL;
  *len = n;
  return v + 4;
}

int32_t ma_opt_vec_len(const ma_options *o, int slot) {
  uint32_t n;
  opt_vec(o, slot, &n);
  return n > INT32_MAX ? 0 : (int32_t)n;
}

int32_t ma_opt_vec_i32(const ma_options *o, int slot, int32_t i) {
  uint32_t n;
  const uint8_t *v = opt_vec(o, slot, &n);
  if (v == NULL || i < 0 || (uint32_t)i >= n) return 0;
  int32_t x;
  memcpy(&x, v + 4 * (size_t)i, 4);
  return x;
}

/* ------------------------------------------------------------ tensor helpers */

int32_t ma_num_elements(const ma_tensor *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndims; i++) {
    n *= t->dims[i];
    if (n > INT32_MAX || n < 0) return -1; /* rejected at load; guards kernels' own tensors */
  }
  return (int32_t)n;
}

size_t ma_type_size(uint8_t type) {
  switch (type) {
    case MA_FLOAT32: case MA_INT32: case MA_UINT32: case MA_RESOURCE: return 4;
    case MA_FLOAT16: case MA_INT16: case MA_UINT16: return 2;
    case MA_UINT8: case MA_INT8: case MA_BOOL: return 1;
    case MA_INT64: case MA_UINT64: case MA_FLOAT64: case MA_COMPLEX64: return 8;
    case MA_COMPLEX128: return 16;
    default: return 0; /* string, variant, int4: not supported */
  }
}
