/* Fills an ma_wire_report from a microarena interpreter (ma_wire_interp.h). */
#include "ma_wire_interp.h"

#include <string.h>

typedef struct {
  ma_interp *it;
  size_t head; /* offsets below this are in the head, the rest in the tail */
} tensor_walk;

/* The i-th tensor (all subgraphs, in order) that has data in the arena; tensors outside the
 * arena (constants, empty) are skipped, so this scans from the start each time: reports are
 * rare and models have hundreds of tensors at most. */
static void tensor_at(const void *src, size_t i, ma_wire_tensor *out) {
  const tensor_walk *w = (const tensor_walk *)src;
  size_t seen = 0;
  for (int32_t sg = 0; sg < ma_num_subgraphs(w->it); sg++) {
    for (int32_t t = 0; t < ma_num_tensors(w->it, sg); t++) {
      int64_t off = ma_tensor_offset(w->it, sg, t);
      if (off < 0 || seen++ != i) continue;
      ma_tensor info;
      out->subgraph = (uint16_t)sg;
      out->index = (uint32_t)t;
      out->offset = (uint32_t)off;
      out->bytes = ma_tensor_info(w->it, sg, t, &info) == MA_OK ? (uint32_t)info.bytes : 0u;
      out->region = (size_t)off < w->head ? MA_WIRE_HEAD : MA_WIRE_TAIL;
      return;
    }
  }
}

static size_t count_arena_tensors(ma_interp *it) {
  size_t n = 0;
  for (int32_t sg = 0; sg < ma_num_subgraphs(it); sg++) {
    for (int32_t t = 0; t < ma_num_tensors(it, sg); t++) n += ma_tensor_offset(it, sg, t) >= 0;
  }
  return n;
}

static uint32_t output_crc(ma_interp *it, uint32_t *bytes) {
  uint32_t crc = 0;
  *bytes = 0;
  for (int32_t i = 0; i < ma_num_outputs(it); i++) {
    const ma_tensor *t = ma_output(it, i);
    if (t == NULL || t->data == NULL) continue;
    crc = ma_wire_crc32(crc, t->data, t->bytes);
    *bytes += (uint32_t)t->bytes;
  }
  return crc;
}

void ma_wire_emit_interp(ma_interp *it, const ma_wire_run *run, ma_wire_put_fn put, void *ctx) {
  ma_arena_stats st;
  ma_arena_stats_get(it, &st);
  ma_wire_category cats[MA_REC_COUNT];
  size_t n_cats = 0;
  for (int c = 0; c < MA_REC_COUNT; c++) {
    if (st.rec[c].count == 0) continue; /* as TFLM: empty categories are not printed */
    ma_wire_category *k = &cats[n_cats++];
    k->name = ma_rec_category_name((ma_rec_category)c);
    k->unit = ma_rec_category_unit((ma_rec_category)c);
    k->used = (uint32_t)st.rec[c].used;
    k->requested = (uint32_t)st.rec[c].requested;
    k->count = (uint32_t)st.rec[c].count;
  }
  tensor_walk walk = {it, st.head};
  ma_wire_report r;
  memset(&r, 0, sizeof r);
  r.status = run->status;
  r.message = run->status != MA_OK ? ma_error(it) : NULL;
  r.bytes_needed = run->status == MA_ERR_ARENA ? (uint32_t)st.required : 0u;
  r.has_arena = 1;
  r.arena_size = run->arena_size;
  r.head = (uint32_t)st.head;
  r.tail = (uint32_t)st.tail;
  r.total = (uint32_t)st.total;
  r.temp_peak = (uint32_t)st.temp_peak;
  r.has_cycles = run->has_cycles;
  r.cycles = run->cycles;
  r.clock_hz = run->clock_hz;
  r.has_output = run->status == MA_OK;
  if (r.has_output) r.output_crc = output_crc(it, &r.output_bytes);
  r.info = run->info;
  r.categories = cats;
  r.n_categories = n_cats;
  r.tensor_at = tensor_at;
  r.tensor_src = &walk;
  r.n_tensors = count_arena_tensors(it);
  r.has_stack = run->has_stack;
  r.stack_used = run->stack_used;
  r.stack_size = run->stack_size;
  r.stack_measured = run->stack_measured;
  r.ops = run->ops;
  r.n_ops = run->n_ops;
  ma_wire_emit(&r, put, ctx);
}

/* The runtime states an arena shortfall only in its message ("... needs at least N bytes"). */
static uint32_t needed_from_message(const char *msg) {
  static const char key[] = "needs at least ";
  const char *p = msg != NULL ? strstr(msg, key) : NULL;
  if (p == NULL) return 0;
  uint32_t v = 0;
  for (p += sizeof key - 1; *p >= '0' && *p <= '9'; p++) {
    if (v > (UINT32_MAX - 9u) / 10u) return UINT32_MAX;
    v = v * 10u + (uint32_t)(*p - '0');
  }
  return v;
}

void ma_wire_emit_failure(int32_t status, const char *message, uint32_t bytes_needed,
                          const char *info, ma_wire_put_fn put, void *ctx) {
  ma_wire_report r;
  memset(&r, 0, sizeof r);
  r.status = status;
  r.message = message;
  r.bytes_needed = bytes_needed;
  if (status == MA_ERR_ARENA && bytes_needed == 0) r.bytes_needed = needed_from_message(message);
  r.info = info;
  ma_wire_emit(&r, put, ctx);
}
