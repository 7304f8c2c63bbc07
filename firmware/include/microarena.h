/* microarena public runtime API: load a .tflite from memory into one caller arena and run it.
 *
 * Usage (the arena size comes from `python -m host.plan model.tflite --target
 * microarena-cortex-m`: exact, one byte less fails; ma_arena_shortfall then says how many
 * bytes the model needs):
 *
 *   static uint8_t arena[ARENA_BYTES] __attribute__((aligned(16)));
 *   static char msg[128];
 *   ma_interp *it;
 *   if (ma_open(&it, model_data, model_size, arena, sizeof arena, msg, sizeof msg) != MA_OK)
 *     return fail(msg);                          // says what is wrong, and with what
 *   memcpy(ma_input(it, 0)->data, features, ma_input(it, 0)->bytes);
 *   if (ma_invoke(it) != MA_OK) return fail(ma_error(it));
 *   use(ma_output(it, 0)->data);                 // valid until the next ma_invoke
 *
 * Arena layout (low to high addresses):
 *   head  - non-persistent tensors and kernel scratch at planned offsets
 *   temp  - scoped set-up allocations (planner working memory), reset before the head is sized
 *   tail  - persistent data: interpreter, tensor descriptors, nodes, kernel op data, variables
 * No heap is used and there is no global mutable state: any number of interpreters may
 * coexist, each in its own arena.
 */
#ifndef MICROARENA_H
#define MICROARENA_H

#include <stddef.h>
#include <stdint.h>

#include "ma_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The interpreter is the kernels' context; it lives in the tail of its arena. */
typedef struct ma_context ma_interp;

/* Recorder categories, in TFLM RecordingMicroAllocator order. */
typedef enum {
  MA_REC_EVAL_TENSOR = 0,   /* 'TfLiteEvalTensor data': per-tensor data pointers */
  MA_REC_TENSOR,            /* 'Persistent TfLiteTensor data': model input/output descriptors */
  MA_REC_QUANT,             /* 'Persistent TfLiteTensor quantization data' (unused) */
  MA_REC_PERSISTENT_BUFFER, /* 'Persistent buffer data': kernel ma_persistent + runtime tables */
  MA_REC_VARIABLE,          /* 'TfLiteTensor variable buffer data': variable/resource buffers */
  MA_REC_NODES,             /* 'NodeAndRegistration struct': nodes and their tensor lists */
  MA_REC_OP_DATA,           /* 'Operator runtime data' (unused) */
  MA_REC_COUNT
} ma_rec_category;

/* TFLM's name of a category ("TfLiteEvalTensor data", ...) and the unit of its count. */
const char *ma_rec_category_name(ma_rec_category c);
const char *ma_rec_category_unit(ma_rec_category c);

typedef struct {
  size_t requested; /* bytes asked for */
  size_t used;      /* bytes consumed including alignment padding */
  size_t count;     /* number of allocations (or tensors / nodes) */
} ma_rec;

typedef struct {
  size_t head;      /* planned non-persistent bytes */
  size_t tail;      /* persistent bytes */
  size_t total;     /* head + tail, comparable to TFLM's "Arena allocation total" */
  size_t temp_peak; /* largest temporary section during set-up */
  size_t required;  /* smallest arena (16-aligned start) that loads: max over set-up of
                       temp + tail, and head + tail */
  ma_rec rec[MA_REC_COUNT];
} ma_arena_stats;

/* Limits a hostile model cannot exceed. */
#define MA_MAX_NESTING 8                /* subgraph call depth (IF/WHILE/CALL_ONCE) */
#define MA_MAX_SCOPES 262144            /* operators the planner's walk visits, callees' included */
#define MA_MAX_WHILE_ITERATIONS 1000000 /* per WHILE invocation, default */

/* Loads `model` (must stay valid and unchanged while the interpreter lives, 8-byte aligned)
 * into `arena`. On failure returns an error status and writes a message into `msg`
 * (may be NULL). `msg` stays the interpreter's message buffer for later errors, so it must
 * live as long as the interpreter. */
ma_status ma_open(ma_interp **out, const void *model, size_t model_size, void *arena,
                  size_t arena_size, char *msg, size_t msg_size);

/* As ma_open, and reports every set-up request whose size the kernels decide, in order:
 * kind 0 = kernel persistent data (ma_persistent), 1 = kernel scratch (ma_request_scratch),
 * 2 = a resource variable's buffer. host/runtime/arena.py replays them to predict the arena. */
typedef void (*ma_request_log_fn)(void *ctx, int kind, size_t bytes, int32_t subgraph,
                                  int32_t node);
ma_status ma_open_logged(ma_interp **out, const void *model, size_t model_size, void *arena,
                         size_t arena_size, char *msg, size_t msg_size, ma_request_log_fn log,
                         void *log_ctx);

/* A model's full arena requirement (the `required` of ma_arena_stats): measured by loading it
 * into `work` (any memory at least that big; its contents are lost). 0 when it does not load
 * there (a model the runtime refuses, or `work` too small). */
size_t ma_arena_required(const void *model, size_t model_size, void *work, size_t work_size);

/* After ma_open(arena, arena_size) failed with MA_ERR_ARENA (set-up stops where the arena runs
 * out, so its message cannot name the whole requirement): opens the model in `work` (any larger
 * memory, which may contain `arena`; its contents are lost). Returns MA_ERR_ARENA with `msg`
 * rewritten as "arena too small: needs at least N bytes, has <arena_size>" (or "needs more than
 * <work_size>"), *need = N (0 when unknown); or, when the model fails for another reason in
 * `work` too, that status with the runtime's message (an unsupported operator, say). */
ma_status ma_arena_shortfall(const void *model, size_t model_size, const void *arena,
                             size_t arena_size, void *work, size_t work_size, char *msg,
                             size_t msg_size, size_t *need);

ma_status ma_invoke(ma_interp *it);

/* Iterations one WHILE operator may run before ma_invoke fails (default
 * MA_MAX_WHILE_ITERATIONS): a model's loop condition is data, so it may never end. */
void ma_set_while_limit(ma_interp *it, int32_t iterations);

/* Operator hook (a profiler): called before (done 0) and after (done 1) every operator an
 * invoke runs, nested subgraphs' operators included (between their caller's two calls), with
 * the operator's subgraph, index and code (builtin, or from MA_CUSTOM_CODE_BASE). NULL removes
 * it. Keep it short: it runs inside ma_invoke. */
typedef void (*ma_op_hook)(void *ctx, int32_t subgraph, int32_t op, int32_t code, int done);
void ma_set_op_hook(ma_interp *it, ma_op_hook hook, void *ctx);

/* The message of the last error, "" if none. */
const char *ma_error(const ma_interp *it);

/* Subgraph 0 inputs and outputs. */
int32_t ma_num_inputs(const ma_interp *it);
int32_t ma_num_outputs(const ma_interp *it);
ma_tensor *ma_input(ma_interp *it, int32_t i);
ma_tensor *ma_output(ma_interp *it, int32_t i);

/* Any tensor: its descriptor is built from the model on request (the runtime stores only
 * each tensor's data pointer). MA_ERR_ARG when out of range. */
int32_t ma_num_subgraphs(const ma_interp *it);
int32_t ma_num_tensors(const ma_interp *it, int32_t subgraph);
ma_status ma_tensor_info(ma_interp *it, int32_t subgraph, int32_t index, ma_tensor *out);

/* Byte offset of a tensor's data from the (aligned) arena start, or -1 when it is not in the
 * arena (constant, or no data). */
int64_t ma_tensor_offset(const ma_interp *it, int32_t subgraph, int32_t index);

void ma_arena_stats_get(const ma_interp *it, ma_arena_stats *out);

/* Report: calls emit once per line (no trailing newline). First the TFLM-format recorder
 * lines, then microarena lines (required size, per-tensor offsets). */
typedef void (*ma_emit_fn)(void *ctx, const char *line);
void ma_report(const ma_interp *it, ma_emit_fn emit, void *ctx);

/* Name of a builtin operator code ("UNKNOWN" when out of range). */
const char *ma_op_name(int32_t builtin_code);

#ifdef __cplusplus
}
#endif
#endif
