/* Allocation report: TFLM RecordingMicroAllocator lines, then microarena's own lines. */
#include <stdio.h>

#include "internal.h"

static const char *const kCategory[MA_REC_COUNT] = {
    "TfLiteEvalTensor data",
    "Persistent TfLiteTensor data",
    "Persistent TfLiteTensor quantization data",
    "Persistent buffer data",
    "TfLiteTensor variable buffer data",
    "NodeAndRegistration struct",
    "Operator runtime data",
};

static const char *const kUnit[MA_REC_COUNT] = {
    "allocations", "tensors", "allocations", "allocations",
    "allocations", "NodeAndRegistration structs", "OpData structs",
};

const char *ma_rec_category_name(ma_rec_category c) {
  return (unsigned)c < MA_REC_COUNT ? kCategory[c] : "";
}

const char *ma_rec_category_unit(ma_rec_category c) {
  return (unsigned)c < MA_REC_COUNT ? kUnit[c] : "";
}

void ma_report(const ma_interp *it, ma_emit_fn emit, void *ctx) {
  char line[192];
  ma_arena_stats s;
  ma_arena_stats_get(it, &s);
  snprintf(line, sizeof line, "[RecordingMicroAllocator] Arena allocation total %lu bytes",
           (unsigned long)s.total);
  emit(ctx, line);
  snprintf(line, sizeof line, "[RecordingMicroAllocator] Arena allocation head %lu bytes",
           (unsigned long)s.head);
  emit(ctx, line);
  snprintf(line, sizeof line, "[RecordingMicroAllocator] Arena allocation tail %lu bytes",
           (unsigned long)s.tail);
  emit(ctx, line);
  for (int c = 0; c < MA_REC_COUNT; c++) {
    if (s.rec[c].requested == 0) continue; /* TFLM prints only categories in use */
    snprintf(line, sizeof line,
             "[RecordingMicroAllocator] '%s' used %lu bytes with alignment overhead "
             "(requested %lu bytes for %lu %s)",
             kCategory[c], (unsigned long)s.rec[c].used, (unsigned long)s.rec[c].requested,
             (unsigned long)s.rec[c].count, kUnit[c]);
    emit(ctx, line);
  }
  snprintf(line, sizeof line,
           "[microarena] Arena required %lu bytes (head %lu + tail %lu; set-up temporary peak "
           "%lu)",
           (unsigned long)s.required, (unsigned long)s.head, (unsigned long)s.tail,
           (unsigned long)s.temp_peak);
  emit(ctx, line);
  for (int32_t sg = 0; sg < ma_num_subgraphs(it); sg++) {
    for (int32_t i = 0; i < ma_num_tensors(it, sg); i++) {
      int64_t off = ma_tensor_offset(it, sg, i);
      if (off < 0) continue;
      ma_tensor t;
      ma_describe((ma_interp *)(uintptr_t)it, sg, i, &t);
      snprintf(line, sizeof line, "[microarena] Tensor %d:%d offset %ld bytes %lu%s", (int)sg,
               (int)i, (long)off, (unsigned long)t.bytes, t.is_variable ? " variable" : "");
      emit(ctx, line);
    }
  }
}
