/* Runtime-internal structures shared by the core's source files (not by kernels). */
#ifndef MA_INTERNAL_H
#define MA_INTERNAL_H

#include <stdarg.h>

#include "fb.h"
#include "ma_kernel.h"
#include "ma_ops.h" /* the core itself runs IF, WHILE, CALL_ONCE and the resource operators */
#include "microarena.h"

#define MA_ALIGN 16 /* tensor buffers, scratch and kernel persistent data (as TFLM) */

/* Persistent per-operator state. Everything else about an operator is re-read from the
 * (verified) model when it runs, which keeps the tail small. */
typedef struct {
  void *user_data;   /* set by the kernel's prepare */
  uint32_t op_pos;   /* operator table in the model */
  int32_t code;      /* builtin operator code */
  int32_t state;     /* CALL_ONCE: done flag; VAR_HANDLE: resource id (the handle's data);
                        a kernel's operator: MA_EVAL_* */
} ma_inode;

/* The state of a kernel's operator after prepare: how its eval frames are built. */
enum {
  MA_EVAL_FULL = 0, /* every descriptor in full */
  MA_EVAL_DATA = 1  /* eval_data_only, of operands the operator loop's frame holds (no
                       operator of more sets it today; one would get full frames) */
};

/* Operands per operator (LSTM has 24 inputs), so an operator's view fits a bounded frame. */
#define MA_MAX_OPERANDS 26
/* Operands of the frames the operator loop holds for the operators of most models (CONV_2D,
 * FULLY_CONNECTED, DEPTHWISE_CONV_2D, element-wise: 3 or 4; TRANSPOSE_CONV 5, SVDF 6): an
 * operator with more is built in a frame of MA_MAX_OPERANDS, its own call's. */
#define MA_FEW_OPERANDS 6

/* An operator as kernels see it, built on the stack for each prepare / eval from the
 * (verified) model: descriptors are never stored, only each tensor's data pointer is. The
 * descriptors and the list pointing at them are the builder's caller's: `cap` entries each. */
typedef struct {
  ma_node node;
  const ma_kernel *kernel; /* the operator's kernel, NULL for the core's own operators */
  int32_t callee[2]; /* subgraphs invoked by IF/WHILE/CALL_ONCE, -1 if none */
  ma_tensor **list;
  ma_tensor *desc;
  uint32_t cap;
} ma_frame;

/* Gives f room for `cap` operands: list and desc, arrays of cap entries each. */
static inline void ma_frame_room(ma_frame *f, ma_tensor **list, ma_tensor *desc, uint32_t cap) {
  f->list = list;
  f->desc = desc;
  f->cap = cap;
}

typedef struct {
  void **data;            /* per tensor: model (constant), head, tail (variable) or NULL */
  ma_inode *nodes;
  fb_vec tensor_tabs;     /* the model's tensor tables */
  fb_vec inputs, outputs; /* validated int32 tensor indices in the model */
  int32_t n_tensors, n_nodes;
  int32_t first_global; /* index of tensor 0 in the all-subgraphs numbering */
} ma_subgraph;

typedef struct {
  const char *name; /* container + shared_name key, in the model */
  uint32_t name_len;
  const char *container;
  uint32_t container_len;
  void *data;
  size_t bytes;
} ma_resource;

typedef struct {
  size_t bytes;
  int32_t subgraph, node; /* requesting operator */
} ma_scratch_req;

struct ma_context {
  fb_rd rd;
  uint8_t *arena_start, *arena_end; /* 16-aligned start of usable arena */
  uint8_t *temp, *tail;             /* temp bump pointer (up); tail grows down */
  size_t head_size, temp_peak, required;
  char *msg;
  size_t msg_size;
  ma_subgraph *subgraphs;
  int32_t n_subgraphs, n_tensors_total;
  const int32_t *offline; /* OfflineMemoryAllocation offsets (all subgraphs) or NULL */
  fb_vec buffers, opcodes;
  ma_tensor *io;          /* subgraph 0 inputs then outputs, for the caller */
  ma_resource *resources;
  int32_t n_resources;
  /* Operators the runtime cannot run are listed, not fatal at once (ma_list_unsupported):
   * msg then points msg_shift bytes into the caller's buffer of msg_total bytes (both capped at
   * 65535: the list uses no more), past the list. 16-bit, in padding: no tail grows. */
  uint16_t msg_shift, msg_total;
  ma_scratch_req *scratch_reqs; /* in temp during prepare */
  int32_t n_scratch;
  uint16_t n_unsupported, n_unlisted; /* operators listed; counted but not named (saturating) */
  int32_t *scratch_offsets; /* tail, after prepare */
  int32_t depth;            /* current subgraph nesting while invoking */
  int32_t max_while;        /* iterations one WHILE may run (ma_set_while_limit) */
  /* The set-up request log (ma_open_logged), then, once open, the operator hook
   * (ma_set_op_hook): never both, so they share a slot and the context does not grow. */
  union {
    ma_request_log_fn log;
    ma_op_hook op_hook;
  } cb;
  void *log_ctx; /* either's context */
  int32_t cur_subgraph, cur_node; /* operator being prepared (scratch ownership) */
  int32_t phase;                  /* MA_PHASE_* */
  ma_rec rec[MA_REC_COUNT];
};

enum { MA_PHASE_PARSE, MA_PHASE_PREPARE, MA_PHASE_READY };

/* Lets the compiler check every message format in the core (int32_t is long on Cortex-M). */
#if defined(__GNUC__)
ma_status ma_fail(struct ma_context *ctx, ma_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif

enum { MA_LOG_PERSISTENT = 0, MA_LOG_SCRATCH = 1, MA_LOG_RESOURCE = 2 };

/* arena.c */
void ma_log_request(ma_interp *it, int kind, size_t bytes);
void *ma_tail_alloc(ma_interp *it, size_t bytes, size_t align, ma_rec_category cat);
void *ma_temp_alloc(ma_interp *it, size_t bytes, size_t align);
void ma_temp_reset(ma_interp *it);
ma_status ma_vfail(ma_interp *it, ma_status status, const char *fmt, va_list ap);
size_t ma_tail_used(const ma_interp *it);
/* After an operator failed with MA_ERR_UNSUPPORTED: keeps its message in the list and points
 * later messages past it, so set-up can go on and name every operator it cannot run. */
void ma_list_unsupported(ma_interp *it);
/* At the end of set-up: MA_ERR_UNSUPPORTED with the list as the message if any operator was
 * listed (whatever failed after it), else `st`. */
ma_status ma_unsupported_result(ma_interp *it, ma_status st);
#define MA_UNSUPPORTED_NODE (-1) /* a node's code once listed: never prepared */
/* The smallest arena that loads, from what set-up has used so far. */
size_t ma_required(const ma_interp *it);
/* Prefixes a failed operator's message with its name, what failed ("prepare", "eval") and
 * where (subgraph, operator); returns `st`. */
ma_status ma_at_operator(ma_interp *it, ma_status st, int32_t sg, int32_t k, const char *what);

/* model.c */
ma_status ma_parse_model(ma_interp *it);
/* The frame of operator n, every descriptor in full, in f's room (ma_frame_room). Returns 0,
 * building nothing, when the operator has more operands than the room holds (never more
 * than MA_MAX_OPERANDS: parse_operator). */
int ma_build_frame(ma_interp *it, int32_t sg, ma_inode *n, ma_frame *f);
/* ma_build_frame for an invoke of an operator run by `kernel` (NULL: a resource operator)
 * that did not set eval_data_only (control.c builds those itself). Returns 0 as
 * ma_build_frame does. */
int ma_build_eval_frame(ma_interp *it, int32_t sg, ma_inode *n, const ma_kernel *kernel,
                        ma_frame *f);
/* The operator's input and output index vectors (validated at load). */
void ma_op_io(ma_interp *it, const ma_inode *n, fb_vec *ins, fb_vec *outs);
/* Subgraphs an operator invokes (IF/WHILE: 2, CALL_ONCE: 1), -1 when none or invalid. */
void ma_op_callees(ma_interp *it, const ma_inode *n, int32_t callee[2]);
/* A tensor's descriptor, built from the model and its data pointer. */
void ma_describe(ma_interp *it, int32_t sg, int32_t index, ma_tensor *out);
int ma_is_const(const ma_interp *it, int32_t sg, int32_t index);
/* Whether the core runs the operator itself (control flow, resource variables). */
int ma_is_core_op(int32_t code);

/* planner.c */
ma_status ma_plan(ma_interp *it);

/* control.c: the operator loop and the core's own operators. IF, WHILE and CALL_ONCE run
 * subgraphs through the loop that runs them, so the recursion stays in this one file: the
 * core's files call each other without a cycle (tests/runtime/test_core_calls.py). */
ma_status ma_invoke_subgraph(ma_interp *it, int32_t sg);
/* Runs subgraph 0 (ma_invoke), as ma_invoke_subgraph(it, 0) from nesting depth 0. */
ma_status ma_invoke_main(ma_interp *it);
ma_status ma_core_prepare(ma_interp *it, ma_inode *n, ma_frame *f);

#endif
