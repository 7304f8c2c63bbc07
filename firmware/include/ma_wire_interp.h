/* One call to report a loaded microarena interpreter in the wire format (ma_wire.h):
 * arena regions and categories from ma_arena_stats_get(), every arena tensor's offset,
 * the output checksum, and the caller's timing. For the model and probe applications.
 */
#ifndef MA_WIRE_INTERP_H
#define MA_WIRE_INTERP_H

#include "ma_wire.h"
#include "microarena.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int32_t status;     /* MA_OK, or the status ma_invoke returned (its message is ma_error) */
  uint32_t arena_size;
  int has_cycles;
  uint64_t cycles;    /* one invoke */
  uint32_t clock_hz;
  const char *info;   /* board, model name...; or NULL */
  const ma_wire_op *ops; /* a per-operator profile (ma_wire_report.ops), or NULL */
  size_t n_ops;
  int has_stack;      /* the stack high-water (ma_wire_report.stack_*) */
  uint32_t stack_used, stack_size, stack_measured;
} ma_wire_run;

/* Text lines and record for an interpreter that loaded (ma_open returned MA_OK). */
void ma_wire_emit_interp(ma_interp *it, const ma_wire_run *run, ma_wire_put_fn put, void *ctx);

/* For a model that did not load: status and message from ma_open. For MA_ERR_ARENA with
 * bytes_needed 0, the "needs at least N bytes" of the runtime's message is used. */
void ma_wire_emit_failure(int32_t status, const char *message, uint32_t bytes_needed,
                          const char *info, ma_wire_put_fn put, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
