/* Interpreter life cycle: open (parse, allocate variables, prepare, plan) and invoke. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef struct {
  int32_t *depth;  /* call depth (1 = calls nothing); 0 = unknown, -1 = on the stack */
  int64_t *scopes; /* scopes the planner's walk of the subgraph opens, capped past the limit */
} call_info;

/* Call depth of subgraph `sg`, and (memoised, so linear in the model) the scopes a walk of
 * it opens: one per operator and one per callee, plus the callee's own. Recursion stops at
 * MA_MAX_NESTING, so cycles and deep nesting are both rejected. */
static int32_t call_depth(ma_interp *it, int32_t sg, call_info *ci, int32_t level) {
  if (ci->depth[sg] > 0) return ci->depth[sg];
  if (ci->depth[sg] < 0 || level > MA_MAX_NESTING) return MA_MAX_NESTING + 1;
  ci->depth[sg] = -1;
  int32_t best = 1;
  int64_t scopes = 0;
  ma_subgraph *s = &it->subgraphs[sg];
  for (int32_t k = 0; k < s->n_nodes && best <= MA_MAX_NESTING; k++) {
    int32_t callees[2];
    ma_op_callees(it, &s->nodes[k], callees);
    scopes += 1;
    for (int c = 0; c < 2; c++) {
      int32_t callee = callees[c];
      if (callee < 0) continue;
      int32_t d = call_depth(it, callee, ci, level + 1) + 1;
      if (d > best) best = d;
      scopes += 1 + ci->scopes[callee];
    }
    if (scopes > MA_MAX_SCOPES) scopes = MA_MAX_SCOPES + 1; /* no overflow however wide */
  }
  ci->depth[sg] = best;
  ci->scopes[sg] = scopes;
  return best;
}

static ma_status check_call_graph(ma_interp *it) {
  size_t n = (size_t)it->n_subgraphs;
  call_info ci = {ma_temp_alloc(it, sizeof(int32_t) * n, 4), NULL};
  ci.scopes = ma_temp_alloc(it, sizeof(int64_t) * n, 8);
  if (ci.depth == NULL || ci.scopes == NULL) return MA_ERR_ARENA;
  memset(ci.depth, 0, sizeof(int32_t) * n);
  memset(ci.scopes, 0, sizeof(int64_t) * n);
  for (int32_t s = 0; s < it->n_subgraphs; s++) {
    if (call_depth(it, s, &ci, 1) > MA_MAX_NESTING) {
      return ma_fail(it, MA_ERR_UNSUPPORTED, "subgraph calls are recursive or nested deeper "
                     "than %d (from subgraph %d)", MA_MAX_NESTING, (int)s);
    }
  }
  if (ci.scopes[0] > MA_MAX_SCOPES) {
    return ma_fail(it, MA_ERR_UNSUPPORTED, "the subgraph call graph unfolds into more than %d "
                   "operator visits (subgraphs called from many places); the planner walks "
                   "every call, as TFLM does", MA_MAX_SCOPES);
  }
  ma_temp_reset(it);
  return MA_OK;
}

/* Variable tensors are reset as TFLM does: int8 to its zero point, others to 0. */
static void reset_variable(ma_tensor *t) {
  int value = 0;
  if (t->type == MA_INT8 && t->quant.zero_point != NULL) value = (int)t->quant.zero_point[0];
  if (t->data != NULL && t->bytes > 0) memset(t->data, value, t->bytes);
}

/* Variable tensors without an offline offset live in the tail (TFLM does the same). */
static ma_status allocate_variables(ma_interp *it) {
  for (int32_t s = 0; s < it->n_subgraphs; s++) {
    ma_subgraph *sg = &it->subgraphs[s];
    for (int32_t i = 0; i < sg->n_tensors; i++) {
      ma_tensor t;
      ma_describe(it, s, i, &t);
      int offline = it->offline != NULL && it->offline[sg->first_global + i] != -1;
      if (!t.is_variable || offline || t.bytes == 0) continue;
      sg->data[i] = ma_tail_alloc(it, t.bytes, MA_ALIGN, MA_REC_VARIABLE);
      if (sg->data[i] == NULL) return MA_ERR_ARENA;
    }
  }
  return MA_OK;
}

/* TFLM refuses ("Dynamic tensors are not supported") an operator output with a dimension
 * <= 0 once the operator is prepared; shape [0] is its legacy scalar and passes. Such an
 * output (a converter's empty SPLIT_V part, say) would hold no data, so refuse it the same. */
static ma_status check_output_shapes(ma_interp *it, const ma_node *node) {
  for (int32_t o = 0; o < node->n_outputs; o++) {
    const ma_tensor *t = node->outputs[o];
    if (t == NULL || (t->ndims == 1 && t->dims[0] == 0)) continue;
    for (int32_t d = 0; d < t->ndims; d++) {
      if (t->dims[d] <= 0) {
        return ma_fail(it, MA_ERR_UNSUPPORTED, "output tensor %d has dimension %d of size %d: "
                       "dynamic tensors are not supported (as in TFLM)",
                       (int)t->index, (int)d, (int)t->dims[d]);
      }
    }
  }
  return MA_OK;
}

/* Whether input `slot` of operator `code` is read with alignment-safe loads (mak_load_i64):
 * the int64 biases of 16x8 convolutions and fully connected layers, the 8-byte constants that
 * real files store only 4-byte aligned (model.c). */
static bool reads_unaligned(int32_t code, int32_t slot) {
  switch (code) {
    case MA_OP_CONV_2D:
    case MA_OP_DEPTHWISE_CONV_2D:
    case MA_OP_FULLY_CONNECTED: return slot == 2;
    case MA_OP_TRANSPOSE_CONV: return slot == 3;
    default: return false;
  }
}

/* Refuses, naming the cause, an 8-byte constant that is not 8-byte aligned where the kernel
 * reads it in place with aligned loads (a fault on Cortex-M, undefined behaviour in C). */
static ma_status check_const_alignment(ma_interp *it, const ma_node *node) {
  for (int32_t i = 0; i < node->n_inputs; i++) {
    const ma_tensor *t = node->inputs[i];
    if (t == NULL || !t->is_const || ma_type_size(t->type) != 8) continue;
    if (((uintptr_t)t->data & 7u) == 0 || reads_unaligned(node->builtin_code, i)) continue;
    return ma_fail(it, MA_ERR_UNSUPPORTED,
                   "%s reads constant tensor %d (8-byte elements) in place, but the file stores "
                   "it only 4-byte aligned: re-save the model with 8-byte aligned buffers",
                   ma_op_name(node->builtin_code), (int)t->index);
  }
  return MA_OK;
}

/* Prepares operator n from its built frame f (one copy for both frame sizes: set-up is not
 * the hot path). */
__attribute__((noinline)) static ma_status prepare_built(ma_interp *it, ma_inode *n, ma_frame *f) {
  ma_status st;
  if (ma_is_core_op(n->code)) {
    st = ma_core_prepare(it, n, f);
  } else {
    st = check_const_alignment(it, &f->node);
    if (st == MA_OK && f->kernel->prepare != NULL) st = f->kernel->prepare(it, &f->node);
    n->user_data = f->node.user_data;
    n->state = f->node.eval_data_only != 0 &&
                       f->node.n_inputs + f->node.n_outputs <= MA_FEW_OPERANDS
                   ? MA_EVAL_DATA
                   : MA_EVAL_FULL;
  }
  if (st == MA_OK) st = check_output_shapes(it, &f->node);
  return st;
}

/* prepare_operator for an operator of more operands than its frame holds. */
__attribute__((noinline)) static ma_status prepare_large(ma_interp *it, int32_t s, ma_inode *n) {
  ma_tensor *list[MA_MAX_OPERANDS];
  ma_tensor desc[MA_MAX_OPERANDS];
  ma_frame f;
  ma_frame_room(&f, list, desc, MA_MAX_OPERANDS);
  ma_build_frame(it, s, n, &f);
  return prepare_built(it, n, &f);
}

/* Prepares operator n of subgraph s in a frame of its operands' size (as the invoke runs it):
 * not inlined, so that the frame is off the stack once it returns. */
__attribute__((noinline)) static ma_status prepare_operator(ma_interp *it, int32_t s,
                                                            ma_inode *n) {
  ma_tensor *list[MA_FEW_OPERANDS];
  ma_tensor desc[MA_FEW_OPERANDS];
  ma_frame f;
  ma_frame_room(&f, list, desc, MA_FEW_OPERANDS);
  if (!ma_build_frame(it, s, n, &f)) return prepare_large(it, s, n);
  return prepare_built(it, n, &f);
}

static ma_status prepare_all(ma_interp *it) {
  int32_t handles = 0;
  for (int32_t s = 0; s < it->n_subgraphs; s++) {
    for (int32_t k = 0; k < it->subgraphs[s].n_nodes; k++) {
      handles += it->subgraphs[s].nodes[k].code == MA_OP_VAR_HANDLE;
    }
  }
  ma_status st = check_call_graph(it);
  if (st != MA_OK) return st;
  if (handles > 0) {
    it->resources = ma_tail_alloc(it, sizeof(ma_resource) * (size_t)handles,
                                  _Alignof(ma_resource), MA_REC_PERSISTENT_BUFFER);
    if (it->resources == NULL) return MA_ERR_ARENA;
  }
  /* Until planned, tensors to plan point at the arena start: kernels may test data for
   * NULL in prepare but never read or write activations there. */
  for (int32_t s = 0; s < it->n_subgraphs; s++) {
    for (int32_t i = 0; i < it->subgraphs[s].n_tensors; i++) {
      ma_tensor t;
      ma_describe(it, s, i, &t);
      if (t.data == NULL && t.bytes > 0) it->subgraphs[s].data[i] = it->arena_start;
    }
  }
  it->phase = MA_PHASE_PREPARE;
  for (int32_t s = 0; s < it->n_subgraphs; s++) {
    ma_subgraph *sg = &it->subgraphs[s];
    for (int32_t k = 0; k < sg->n_nodes; k++) {
      ma_inode *n = &sg->nodes[k];
      if (n->code == MA_UNSUPPORTED_NODE) continue; /* listed at load */
      it->cur_subgraph = s;
      it->cur_node = k;
      if (it->msg != NULL && it->msg_size > 0) it->msg[0] = 0;
      st = prepare_operator(it, s, n);
      if (st == MA_ERR_UNSUPPORTED) {
        ma_at_operator(it, st, s, k, "prepare");
        ma_list_unsupported(it);
        continue;
      }
      if (st != MA_OK) return ma_at_operator(it, st, s, k, "prepare");
    }
  }
  /* The caller's view of the model inputs and outputs (TFLM also keeps these persistent). */
  int32_t n_io = (int32_t)(it->subgraphs[0].inputs.len + it->subgraphs[0].outputs.len);
  if (n_io > 0) {
    it->io = ma_tail_alloc(it, sizeof(ma_tensor) * (size_t)n_io, _Alignof(ma_tensor),
                           MA_REC_TENSOR);
    if (it->io == NULL) return MA_ERR_ARENA;
    it->rec[MA_REC_TENSOR].count += (size_t)n_io;
  }
  if (it->n_scratch > 0) {
    it->scratch_offsets = ma_tail_alloc(it, sizeof(int32_t) * (size_t)it->n_scratch, 4,
                                        MA_REC_PERSISTENT_BUFFER);
    if (it->scratch_offsets == NULL) return MA_ERR_ARENA;
  }
  return MA_OK;
}

/* Bytes of `arena` the runtime uses: from its first MA_ALIGN-aligned address, whole units. */
static size_t usable_size(const void *arena, size_t arena_size) {
  uintptr_t start = ((uintptr_t)arena + (MA_ALIGN - 1)) & ~(uintptr_t)(MA_ALIGN - 1);
  size_t pad = (size_t)(start - (uintptr_t)arena);
  return arena_size > pad ? (arena_size - pad) & ~(size_t)(MA_ALIGN - 1) : 0;
}

ma_status ma_open(ma_interp **out, const void *model, size_t model_size, void *arena,
                  size_t arena_size, char *msg, size_t msg_size) {
  return ma_open_logged(out, model, model_size, arena, arena_size, msg, msg_size, NULL, NULL);
}

ma_status ma_open_logged(ma_interp **out, const void *model, size_t model_size, void *arena,
                         size_t arena_size, char *msg, size_t msg_size, ma_request_log_fn log,
                         void *log_ctx) {
  if (msg != NULL && msg_size > 0) msg[0] = 0;
  if (out == NULL || model == NULL || arena == NULL) {
    if (msg != NULL && msg_size > 0) snprintf(msg, msg_size, "ma_open: NULL argument");
    return MA_ERR_ARG;
  }
  *out = NULL;
  if (((uintptr_t)model & 7u) != 0) {
    if (msg != NULL && msg_size > 0) snprintf(msg, msg_size, "model must be 8-byte aligned");
    return MA_ERR_ARG;
  }
  if (model_size < 8 || model_size > 0x7fffffffu) {
    if (msg != NULL && msg_size > 0) {
      snprintf(msg, msg_size, "malformed model: size %lu out of range", (unsigned long)model_size);
    }
    return MA_ERR_MODEL;
  }
  uintptr_t start = ((uintptr_t)arena + (MA_ALIGN - 1)) & ~(uintptr_t)(MA_ALIGN - 1);
  size_t usable = usable_size(arena, arena_size);
  size_t self = (sizeof(struct ma_context) + (MA_ALIGN - 1)) & ~(size_t)(MA_ALIGN - 1);
  if (usable < self) {
    if (msg != NULL && msg_size > 0) {
      snprintf(msg, msg_size, "arena too small: needs at least %lu bytes, has %lu",
               (unsigned long)self, (unsigned long)usable);
    }
    return MA_ERR_ARENA;
  }
  ma_interp *it = (ma_interp *)(start + usable - self);
  memset(it, 0, sizeof *it);
  it->arena_start = (uint8_t *)start;
  it->arena_end = (uint8_t *)(start + usable);
  it->temp = it->arena_start;
  it->tail = (uint8_t *)it;
  it->required = self;
  it->msg = msg;
  it->msg_size = msg_size;
  it->msg_total = (uint16_t)(msg_size < UINT16_MAX ? msg_size : UINT16_MAX);
  it->rd.buf = model;
  it->rd.size = (uint32_t)model_size;
  it->phase = MA_PHASE_PARSE;
  it->max_while = MA_MAX_WHILE_ITERATIONS;
  it->cb.log = log;
  it->log_ctx = log_ctx;

  ma_status st = ma_parse_model(it);
  if (st == MA_OK) st = allocate_variables(it);
  if (st == MA_OK) st = prepare_all(it);
  st = ma_unsupported_result(it, st);
  if (st == MA_OK) st = ma_plan(it);
  if (st != MA_OK) return st;
  for (int32_t s = 0; s < it->n_subgraphs; s++) {
    ma_subgraph *sg = &it->subgraphs[s];
    for (int32_t i = 0; i < sg->n_tensors; i++) {
      ma_tensor t;
      ma_describe(it, s, i, &t);
      if (t.is_variable) reset_variable(&t);
    }
  }
  ma_subgraph *main = &it->subgraphs[0];
  for (uint32_t i = 0; i < main->inputs.len + main->outputs.len; i++) {
    int32_t x = i < main->inputs.len ? fb_vec_i32(&it->rd, main->inputs, i)
                                     : fb_vec_i32(&it->rd, main->outputs, i - main->inputs.len);
    ma_describe(it, 0, x, &it->io[i]);
  }
  it->phase = MA_PHASE_READY;
  it->cb.op_hook = NULL; /* the log belongs to set-up: no call after ma_open_logged returns */
  if (msg != NULL && msg_size > 0) msg[0] = 0;
  *out = it;
  return MA_OK;
}

ma_status ma_invoke(ma_interp *it) {
  if (it == NULL) return MA_ERR_ARG;
  if (it->msg != NULL && it->msg_size > 0) it->msg[0] = 0;
  return ma_invoke_main(it);
}

void ma_set_op_hook(ma_interp *it, ma_op_hook hook, void *ctx) {
  if (it == NULL || it->phase != MA_PHASE_READY) return;
  it->cb.op_hook = hook;
  it->log_ctx = ctx;
}

const char *ma_error(const ma_interp *it) {
  return (it != NULL && it->msg != NULL && it->msg_size > 0) ? it->msg : "";
}

int32_t ma_num_inputs(const ma_interp *it) { return (int32_t)it->subgraphs[0].inputs.len; }
int32_t ma_num_outputs(const ma_interp *it) { return (int32_t)it->subgraphs[0].outputs.len; }

ma_tensor *ma_input(ma_interp *it, int32_t i) {
  if (i < 0 || (uint32_t)i >= it->subgraphs[0].inputs.len) return NULL;
  return &it->io[i];
}

ma_tensor *ma_output(ma_interp *it, int32_t i) {
  if (i < 0 || (uint32_t)i >= it->subgraphs[0].outputs.len) return NULL;
  return &it->io[it->subgraphs[0].inputs.len + (uint32_t)i];
}

int32_t ma_num_subgraphs(const ma_interp *it) { return it->n_subgraphs; }

int32_t ma_num_tensors(const ma_interp *it, int32_t subgraph) {
  if (subgraph < 0 || subgraph >= it->n_subgraphs) return 0;
  return it->subgraphs[subgraph].n_tensors;
}

ma_status ma_tensor_info(ma_interp *it, int32_t subgraph, int32_t index, ma_tensor *out) {
  if (out == NULL || index < 0 || index >= ma_num_tensors(it, subgraph)) return MA_ERR_ARG;
  ma_describe(it, subgraph, index, out);
  return MA_OK;
}

int64_t ma_tensor_offset(const ma_interp *it, int32_t subgraph, int32_t index) {
  if (index < 0 || index >= ma_num_tensors(it, subgraph)) return -1;
  const uint8_t *p = it->subgraphs[subgraph].data[index];
  if (p == NULL || p < it->arena_start || p >= it->arena_end) return -1;
  return (int64_t)(p - it->arena_start);
}

void ma_arena_stats_get(const ma_interp *it, ma_arena_stats *out) {
  memset(out, 0, sizeof *out);
  out->head = it->head_size;
  out->tail = ma_tail_used(it);
  out->total = out->head + out->tail;
  out->temp_peak = it->temp_peak;
  out->required = ma_required(it);
  memcpy(out->rec, it->rec, sizeof out->rec);
}

/* Opens the model in `work`: its status, and in *need the arena it required (0 if none). */
static ma_status measure(const void *model, size_t model_size, void *work, size_t work_size,
                         char *msg, size_t msg_size, size_t *need) {
  char none[1];
  ma_interp *it;
  ma_status st = ma_open(&it, model, model_size, work, work_size, msg != NULL ? msg : none,
                         msg != NULL ? msg_size : sizeof none);
  *need = st == MA_OK ? ma_required(it) : 0;
  return st;
}

size_t ma_arena_required(const void *model, size_t model_size, void *work, size_t work_size) {
  size_t need;
  measure(model, model_size, work, work_size, NULL, 0, &need);
  return need;
}

ma_status ma_arena_shortfall(const void *model, size_t model_size, const void *arena,
                             size_t arena_size, void *work, size_t work_size, char *msg,
                             size_t msg_size, size_t *need) {
  size_t got;
  ma_status st = measure(model, model_size, work, work_size, msg, msg_size, &got);
  if (need != NULL) *need = got;
  if (st != MA_OK && st != MA_ERR_ARENA) return st; /* the model fails anyway: say why */
  if (msg == NULL || msg_size == 0) return MA_ERR_ARENA;
  int n = got > 0 ? snprintf(msg, msg_size, "arena too small: needs at least %lu bytes, has %lu",
                             (unsigned long)got, (unsigned long)arena_size)
                  : snprintf(msg, msg_size, "arena too small: needs more than %lu bytes, has %lu",
                             (unsigned long)work_size, (unsigned long)arena_size);
  size_t usable = usable_size(arena, arena_size);
  if (n > 0 && (size_t)n < msg_size && ((uintptr_t)arena & (MA_ALIGN - 1)) != 0) {
    snprintf(msg + n, msg_size - (size_t)n, " (%lu from its first 16-byte aligned address)",
             (unsigned long)usable);
  }
  return MA_ERR_ARENA;
}

void ma_set_while_limit(ma_interp *it, int32_t iterations) {
  it->max_while = iterations > 0 ? iterations : 1;
}
