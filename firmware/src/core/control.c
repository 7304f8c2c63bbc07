/* The operator loop (ma_invoke_subgraph) and the operators the core runs itself: control
 * flow (IF, WHILE, CALL_ONCE), which invokes subgraphs through that loop, and resource
 * variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE), which own per-interpreter state.
 * Semantics follow TFLM's kernels of the same names. */
#include <string.h>

#include "internal.h"

/* Descriptor of the i-th tensor of index vector v (a subgraph's inputs or outputs). */
static ma_tensor *sg_tensor(ma_interp *it, int32_t sg, fb_vec v, uint32_t i, ma_tensor *t) {
  ma_describe(it, sg, fb_vec_i32(&it->rd, v, i), t);
  return t;
}

/* Pairs of tensors that get copied must have equal byte sizes. */
static ma_status same_bytes(ma_interp *it, const ma_tensor *a, const ma_tensor *b, int32_t callee) {
  if (b->is_const) return ma_fail(it, MA_ERR_UNSUPPORTED, "constant subgraph %d output", (int)callee);
  if (a->bytes != b->bytes || a->type != b->type) {
    return ma_fail(it, MA_ERR_MODEL, "tensor %d (%lu bytes) does not match tensor %d of "
                   "subgraph %d (%lu bytes)", (int)a->index, (unsigned long)a->bytes, (int)b->index, (int)callee,
                   (unsigned long)b->bytes);
  }
  return MA_OK;
}

static ma_status callee_index(ma_interp *it, ma_frame *f, int which) {
  if (f->callee[which] < 0) {
    return ma_fail(it, MA_ERR_MODEL, "%s refers to a subgraph the model lacks (it has %d)",
                   ma_op_name(f->node.builtin_code), (int)it->n_subgraphs);
  }
  return MA_OK;
}

/* Checks op tensors [from, from+count) against the subgraph's inputs (or outputs). */
static ma_status match(ma_interp *it, ma_tensor **op, int32_t count, int32_t callee, int outputs) {
  ma_subgraph *c = &it->subgraphs[callee];
  fb_vec v = outputs ? c->outputs : c->inputs;
  if ((int64_t)v.len != count) {
    return ma_fail(it, MA_ERR_MODEL, "subgraph %d has %u %s, the calling operator has %d",
                   (int)callee, (unsigned)v.len, outputs ? "outputs" : "inputs", (int)count);
  }
  for (int32_t i = 0; i < count; i++) {
    if (op[i] == NULL) return ma_fail(it, MA_ERR_MODEL, "missing control-flow operand");
    ma_tensor t;
    ma_status st = same_bytes(it, op[i], sg_tensor(it, callee, v, (uint32_t)i, &t), callee);
    if (st != MA_OK) return st;
  }
  return MA_OK;
}

static ma_status prepare_resource(ma_interp *it, ma_inode *n, ma_node *node) {
  if (node->builtin_code == MA_OP_VAR_HANDLE) {
    if (node->n_outputs != 1 || node->outputs[0]->bytes != 4) {
      return ma_fail(it, MA_ERR_MODEL, "VAR_HANDLE needs one 4-byte output");
    }
    /* Key: (container, shared_name), read from the options table verified at load. */
    fb_rd *rd = &it->rd;
    fb_tab t = {0, 0, 0, 0};
    if (node->options.table != NULL) t = fb_table_at(rd, (uint32_t)(node->options.table - rd->buf));
    uint32_t clen = 0, nlen = 0;
    const char *container = fb_string(rd, &t, 0, &clen);
    const char *name = fb_string(rd, &t, 1, &nlen);
    if (rd->bad) return ma_fail(it, MA_ERR_MODEL, "malformed VAR_HANDLE options");
    int32_t id = 0;
    for (; id < it->n_resources; id++) {
      ma_resource *r = &it->resources[id];
      if (r->name_len == nlen && r->container_len == clen &&
          (nlen == 0 || memcmp(r->name, name, nlen) == 0) &&
          (clen == 0 || memcmp(r->container, container, clen) == 0)) {
        break;
      }
    }
    if (id == it->n_resources) {
      ma_resource *r = &it->resources[it->n_resources++];
      r->name = name;
      r->name_len = nlen;
      r->container = container;
      r->container_len = clen;
    }
    /* As in TFLM the handle lives in persistent node state, so it is not planned. */
    n->state = id;
    it->subgraphs[it->cur_subgraph].data[node->outputs[0]->index] = &n->state;
    return MA_OK;
  }
  if (node->n_inputs < 1 || node->inputs[0] == NULL || node->inputs[0]->bytes != 4) {
    return ma_fail(it, MA_ERR_MODEL, "%s needs a resource handle input",
                   ma_op_name(node->builtin_code));
  }
  if (node->builtin_code == MA_OP_READ_VARIABLE) {
    if (node->n_outputs != 1) return ma_fail(it, MA_ERR_MODEL, "READ_VARIABLE needs one output");
    return MA_OK;
  }
  if (node->n_inputs != 2 || node->inputs[1] == NULL) {
    return ma_fail(it, MA_ERR_MODEL, "ASSIGN_VARIABLE needs two inputs");
  }
  /* A handle made earlier in this subgraph is known now: size the variable at set-up. A
   * handle passed in from another subgraph still holds the prepare-time placeholder. */
  const int32_t *handle = node->inputs[0]->data;
  if (handle != NULL && (const void *)handle != (const void *)it->arena_start) {
    int32_t id = *handle;
    if (id < 0 || id >= it->n_resources) return ma_fail(it, MA_ERR_MODEL, "bad resource handle");
    ma_resource *r = &it->resources[id];
    size_t bytes = node->inputs[1]->bytes;
    if (r->data == NULL) {
      ma_log_request(it, MA_LOG_RESOURCE, bytes);
      r->data = ma_tail_alloc(it, bytes > 0 ? bytes : 1, MA_ALIGN, MA_REC_VARIABLE);
      if (r->data == NULL) return MA_ERR_ARENA;
      r->bytes = bytes;
    } else if (r->bytes != bytes) {
      return ma_fail(it, MA_ERR_MODEL, "resource variable assigned %lu bytes, holds %lu",
                     (unsigned long)bytes, (unsigned long)r->bytes);
    }
  }
  return MA_OK;
}

ma_status ma_core_prepare(ma_interp *it, ma_inode *n, ma_frame *f) {
  ma_node *node = &f->node;
  const int32_t *callee = f->callee;
  ma_status st = MA_OK;
  switch (node->builtin_code) {
    case MA_OP_IF:
      if (node->n_inputs < 1 || node->inputs[0] == NULL || node->inputs[0]->bytes < 1) {
        return ma_fail(it, MA_ERR_MODEL, "IF needs a condition input");
      }
      st = callee_index(it, f, 0);
      if (st == MA_OK) st = callee_index(it, f, 1);
      for (int c = 0; st == MA_OK && c < 2; c++) {
        st = match(it, node->inputs + 1, node->n_inputs - 1, callee[c], 0);
        if (st == MA_OK) st = match(it, node->outputs, node->n_outputs, callee[c], 1);
      }
      return st;
    case MA_OP_WHILE: {
      st = callee_index(it, f, 0);
      if (st == MA_OK) st = callee_index(it, f, 1);
      if (st != MA_OK) return st;
      if (node->n_inputs != node->n_outputs) {
        return ma_fail(it, MA_ERR_MODEL, "WHILE has %d inputs but %d outputs", (int)node->n_inputs,
                       (int)node->n_outputs);
      }
      st = match(it, node->inputs, node->n_inputs, callee[0], 0);
      if (st == MA_OK) st = match(it, node->inputs, node->n_inputs, callee[1], 0);
      if (st == MA_OK) st = match(it, node->outputs, node->n_outputs, callee[1], 1);
      ma_subgraph *cond = &it->subgraphs[callee[0]];
      ma_tensor t;
      const ma_tensor *cond_out =
          cond->outputs.len < 1 ? NULL : sg_tensor(it, callee[0], cond->outputs, 0, &t);
      if (st == MA_OK && (cond_out == NULL || cond_out->bytes < 1)) {
        return ma_fail(it, MA_ERR_MODEL, "WHILE condition subgraph %d has no output",
                       (int)callee[0]);
      }
      for (int32_t i = 0; st == MA_OK && i < node->n_inputs; i++) {
        if (node->inputs[i]->bytes != node->outputs[i]->bytes) {
          return ma_fail(it, MA_ERR_MODEL, "WHILE input %d and output %d differ in size", (int)i,
                         (int)i);
        }
      }
      return st;
    }
    case MA_OP_CALL_ONCE:
      st = callee_index(it, f, 0);
      if (st == MA_OK && (it->subgraphs[callee[0]].inputs.len != 0 ||
                          it->subgraphs[callee[0]].outputs.len != 0)) {
        return ma_fail(it, MA_ERR_MODEL, "CALL_ONCE subgraph %d must have no inputs or outputs",
                       (int)callee[0]);
      }
      return st;
    default:
      return prepare_resource(it, n, node);
  }
}

/* The operands of a control-flow operator, read from the model when it runs (never optional:
 * ma_core_prepare checked), so that no frame of it stays on the stack while its subgraphs run. */
typedef struct {
  fb_vec ins, outs;
  int32_t callee[2];
} flow_op;

/* Data of the i-th tensor of index vector v of subgraph sg (operands, inputs or outputs). */
static void *data_of(ma_interp *it, int32_t sg, fb_vec v, uint32_t i) {
  return it->subgraphs[sg].data[(int32_t)fbt_u32(it->rd.buf, v.pos + 4 * i)];
}

/* Copies src over the tensor described by dst (whole, the sizes being equal: prepare). */
static void copy(const ma_tensor *dst, const void *src) {
  if (dst->data != src && dst->bytes > 0) memmove(dst->data, src, dst->bytes);
}

/* Operands [from, from + count) of v in subgraph sg to the callee's inputs. Not inlined (nor
 * the copies below), so that their descriptor is not in the frame a WHILE keeps while its
 * subgraphs run. */
__attribute__((noinline)) static void copy_to_inputs(ma_interp *it, int32_t sg, fb_vec v,
                                                     uint32_t from, uint32_t count,
                                                     int32_t callee) {
  ma_subgraph *c = &it->subgraphs[callee];
  ma_tensor t;
  for (uint32_t i = 0; i < count; i++) {
    copy(sg_tensor(it, callee, c->inputs, i, &t), data_of(it, sg, v, from + i));
  }
}

/* The callee's outputs to the operands in v of subgraph sg. */
__attribute__((noinline)) static void copy_from_outputs(ma_interp *it, int32_t sg, fb_vec v,
                                                        int32_t callee) {
  ma_subgraph *c = &it->subgraphs[callee];
  ma_tensor t;
  for (uint32_t i = 0; i < v.len; i++) {
    copy(sg_tensor(it, sg, v, i, &t), data_of(it, callee, c->outputs, i));
  }
}

/* Operands `from` of subgraph sg to operands `to` (WHILE's inputs to its outputs). */
__attribute__((noinline)) static void copy_operands(ma_interp *it, int32_t sg, fb_vec from,
                                                    fb_vec to) {
  ma_tensor t;
  for (uint32_t i = 0; i < to.len; i++) {
    copy(sg_tensor(it, sg, to, i, &t), data_of(it, sg, from, i));
  }
}

static int truthy(const void *data) { return ((const uint8_t *)data)[0] != 0; }

static ma_status eval_while(ma_interp *it, int32_t sg, const flow_op *op) {
  int32_t cond = op->callee[0], body = op->callee[1];
  const void *cond_out = data_of(it, cond, it->subgraphs[cond].outputs, 0);
  copy_to_inputs(it, sg, op->ins, 0, op->ins.len, cond);
  ma_status st = ma_invoke_subgraph(it, cond);
  if (st != MA_OK) return st;
  copy_operands(it, sg, op->ins, op->outs);
  for (int32_t iter = 0; truthy(cond_out); iter++) {
    if (iter >= it->max_while) {
      return ma_fail(it, MA_ERR_KERNEL, "WHILE ran %d iterations without ending",
                     (int)it->max_while);
    }
    copy_to_inputs(it, sg, op->outs, 0, op->outs.len, body);
    st = ma_invoke_subgraph(it, body);
    if (st != MA_OK) return st;
    copy_from_outputs(it, sg, op->outs, body);
    copy_to_inputs(it, sg, op->outs, 0, op->outs.len, cond);
    st = ma_invoke_subgraph(it, cond);
    if (st != MA_OK) return st;
  }
  return MA_OK;
}

/* IF, WHILE or CALL_ONCE, without a frame: the subgraphs it runs nest only this call's few
 * bytes on the stack, not a frame of descriptors per level. */
static ma_status eval_flow(ma_interp *it, int32_t sg, ma_inode *n) {
  flow_op op;
  const fb_tab t = fbt_table(it->rd.buf, n->op_pos); /* verified at load */
  op.ins = fbt_vector(it->rd.buf, &t, 1);
  op.outs = fbt_vector(it->rd.buf, &t, 2);
  ma_op_callees(it, n, op.callee);
  switch (n->code) {
    case MA_OP_IF: {
      int32_t branch = truthy(data_of(it, sg, op.ins, 0)) ? op.callee[0] : op.callee[1];
      copy_to_inputs(it, sg, op.ins, 1, op.ins.len - 1, branch);
      ma_status st = ma_invoke_subgraph(it, branch);
      if (st == MA_OK) copy_from_outputs(it, sg, op.outs, branch);
      return st;
    }
    case MA_OP_WHILE:
      return eval_while(it, sg, &op);
    default: /* CALL_ONCE */
      if (n->state != 0) return MA_OK;
      n->state = 1;
      return ma_invoke_subgraph(it, op.callee[0]);
  }
}

static ma_status eval_resource(ma_interp *it, ma_node *node) {
  if (node->builtin_code == MA_OP_VAR_HANDLE) return MA_OK; /* handle set at prepare */
  int32_t id = *(const int32_t *)node->inputs[0]->data;
  if (id < 0 || id >= it->n_resources) return ma_fail(it, MA_ERR_KERNEL, "bad resource handle");
  ma_resource *r = &it->resources[id];
  if (node->builtin_code == MA_OP_READ_VARIABLE) {
    if (r->data == NULL) return ma_fail(it, MA_ERR_KERNEL, "READ_VARIABLE before any assignment");
    if (r->bytes != node->outputs[0]->bytes) {
      return ma_fail(it, MA_ERR_KERNEL, "READ_VARIABLE output size differs from the variable");
    }
    if (r->bytes > 0) memcpy(node->outputs[0]->data, r->data, r->bytes);
    return MA_OK;
  }
  if (r->data == NULL || r->bytes != node->inputs[1]->bytes) {
    return ma_fail(it, MA_ERR_KERNEL, "ASSIGN_VARIABLE to a variable not sized at set-up");
  }
  if (r->bytes > 0) memcpy(r->data, node->inputs[1]->data, r->bytes);
  return MA_OK;
}

/* Entries of an operand list for the tensor indices in v, and their descriptors, each with its
 * data pointer alone (v's indices were checked against the subgraph by parse_operator). */
static inline void data_descriptors(const uint8_t *buf, void *const *data, fb_vec v,
                                    ma_tensor **list, ma_tensor *desc) {
  for (uint32_t j = 0; j < v.len; j++) {
    const int32_t x = (int32_t)fbt_u32(buf, v.pos + 4 * j);
    if (x < 0) {
      list[j] = NULL;
      continue;
    }
#if !defined(__arm__) /* host builds (the conformance suite): a read of another field shows */
    memset(&desc[j], 0xA5, sizeof desc[j]);
#endif
    desc[j].data = data[x];
    list[j] = &desc[j];
  }
}

/* The frame of an invoke of operator n of subgraph sg whose kernel's eval reads only its
 * operands' data (eval_data_only) in list and desc, which hold its operands (prepare
 * counted them: MA_EVAL_DATA): only its operand vectors are read from the model; the node's
 * options, custom options and the descriptors' other fields are left unset (poisoned on the
 * host, where the conformance suite would see a read of them). */
static inline void build_data_frame(ma_interp *it, int32_t sg, const ma_inode *n,
                                    const ma_kernel *kernel, ma_tensor **list, ma_tensor *desc,
                                    ma_frame *f) {
  const uint8_t *buf = it->rd.buf;
  const ma_subgraph *s = &it->subgraphs[sg];
  void *const *data = s->data;
  const fb_tab op = fbt_table(buf, n->op_pos);
  const fb_vec ins = fbt_vector(buf, &op, 1);
  const fb_vec outs = fbt_vector(buf, &op, 2);
  data_descriptors(buf, data, ins, list, desc);
  data_descriptors(buf, data, outs, list + ins.len, desc + ins.len);
#if !defined(__arm__)
  memset(&f->node, 0xA5, sizeof f->node);
#endif
  f->node.n_inputs = (int32_t)ins.len;
  f->node.n_outputs = (int32_t)outs.len;
  f->node.inputs = list;
  f->node.outputs = list + ins.len;
  f->node.user_data = n->user_data;
  f->node.builtin_code = n->code;
  f->node.eval_data_only = 1;
  f->node.index = (int32_t)(n - s->nodes);
  f->node.variant = kernel->variant;
  f->kernel = kernel;
}

/* The operator loop's frame: room for the operands of most operators. */
typedef struct {
  ma_frame f;
  ma_tensor *list[MA_FEW_OPERANDS];
  ma_tensor desc[MA_FEW_OPERANDS];
} few_frame;

/* Builds the frame of operator n of subgraph sg for an invoke in ff: 1 if built, 0 if its
 * operands are more than ff holds, -1 if it is one that invokes a subgraph (IF, WHILE,
 * CALL_ONCE), which runs without a frame. Not inlined: the loop around it keeps fewer
 * registers. */
__attribute__((noinline)) static int build_few_frame(ma_interp *it, int32_t sg, ma_inode *n,
                                                     few_frame *ff) {
  const ma_kernel *kernel = ma_find_kernel(n->code); /* NULL for the core's operators */
  if (kernel != NULL && n->state == MA_EVAL_DATA) {
    build_data_frame(it, sg, n, kernel, ff->list, ff->desc, &ff->f);
    return 1;
  }
  if (kernel == NULL && n->code != MA_OP_VAR_HANDLE && n->code != MA_OP_READ_VARIABLE &&
      n->code != MA_OP_ASSIGN_VARIABLE) {
    return -1;
  }
  return ma_build_eval_frame(it, sg, n, kernel, &ff->f); /* in the room run_span gave */
}

/* Runs operator k of subgraph sg, whose frame f is built: its kernel's eval, or a resource
 * operator's, between the operator hook's calls. */
static inline ma_status run_built(ma_interp *it, int32_t sg, int32_t k, ma_frame *f) {
  const ma_op_hook hook = it->cb.op_hook;
  if (hook != NULL) hook(it->log_ctx, sg, k, it->subgraphs[sg].nodes[k].code, 0);
  ma_status st;
  if (f->kernel == NULL) {
    st = eval_resource(it, &f->node);
  } else {
    st = f->kernel->eval(it, &f->node);
    if (st != MA_OK) st = ma_at_operator(it, st, sg, k, "eval");
  }
  if (hook != NULL) hook(it->log_ctx, sg, k, it->subgraphs[sg].nodes[k].code, 1);
  return st;
}

/* Operator k, of more operands than the operator loop's frame holds, in a frame of its own (a
 * full one: data frames fit the loop's, MA_EVAL_DATA). */
__attribute__((noinline)) static ma_status run_large(ma_interp *it, int32_t sg, int32_t k) {
  ma_tensor *list[MA_MAX_OPERANDS];
  ma_tensor desc[MA_MAX_OPERANDS];
  ma_frame f;
  ma_inode *n = &it->subgraphs[sg].nodes[k];
  ma_frame_room(&f, list, desc, MA_MAX_OPERANDS);
  ma_build_eval_frame(it, sg, n, ma_find_kernel(n->code), &f);
  return run_built(it, sg, k, &f);
}

/* Runs the operators of subgraph sg from k on, in ff, up to one that invokes a subgraph (IF,
 * WHILE, CALL_ONCE): returns its index (n_nodes if none), or minus the status of an operator
 * that failed. */
static inline __attribute__((always_inline)) int32_t run_span(ma_interp *it, int32_t sg,
                                                              int32_t k, few_frame *ff) {
  ma_subgraph *s = &it->subgraphs[sg];
  ma_frame_room(&ff->f, ff->list, ff->desc, MA_FEW_OPERANDS); /* for full frames */
  for (; k < s->n_nodes; k++) {
    const int built = build_few_frame(it, sg, &s->nodes[k], ff);
    if (built < 0) break;
    ma_status st = built ? run_built(it, sg, k, &ff->f) : run_large(it, sg, k);
    if (st != MA_OK) return -(int32_t)st;
  }
  return k;
}

/* run_span in a frame of its own, off the stack once it returns: the subgraphs IF, WHILE and
 * CALL_ONCE run go through this, so that they do not nest frames. */
__attribute__((noinline)) static int32_t run_operators(ma_interp *it, int32_t sg, int32_t k) {
  few_frame ff;
  return run_span(it, sg, k, &ff);
}

/* Operator k of subgraph sg, which invokes a subgraph (IF, WHILE, CALL_ONCE), between the
 * operator hook's calls: as run_span, the index of the next operator or minus a status. Not
 * inlined, so that a subgraph without such operators runs without its frame. */
__attribute__((noinline)) static int32_t run_flow(ma_interp *it, int32_t sg, int32_t k) {
  ma_inode *n = &it->subgraphs[sg].nodes[k];
  const ma_op_hook hook = it->cb.op_hook;
  if (hook != NULL) hook(it->log_ctx, sg, k, n->code, 0);
  ma_status st = eval_flow(it, sg, n);
  if (hook != NULL) hook(it->log_ctx, sg, k, n->code, 1);
  return st != MA_OK ? -(int32_t)st : k + 1;
}

ma_status ma_invoke_subgraph(ma_interp *it, int32_t sg) {
  if (it->depth >= MA_MAX_NESTING) {
    return ma_fail(it, MA_ERR_KERNEL, "subgraph nesting deeper than %d", MA_MAX_NESTING);
  }
  it->depth++;
  const int32_t n_nodes = it->subgraphs[sg].n_nodes;
  int32_t k = run_operators(it, sg, 0);
  while (k >= 0 && k < n_nodes) {
    k = run_flow(it, sg, k);
    if (k >= 0) k = run_operators(it, sg, k);
  }
  it->depth--;
  return k < 0 ? (ma_status)-k : MA_OK;
}

ma_status ma_invoke_main(ma_interp *it) {
  /* The loop's frame is here, not in run_operators: one call fewer per invoke (2% of the
   * smallest model's instructions), for the price of this frame staying on the stack while a
   * control-flow operator's subgraphs run (once, not per level). */
  few_frame ff;
  it->depth = 1;
  const int32_t n_nodes = it->subgraphs[0].n_nodes;
  int32_t k = run_span(it, 0, 0, &ff);
  while (k >= 0 && k < n_nodes) {
    k = run_flow(it, 0, k);
    if (k >= 0) k = run_span(it, 0, k, &ff);
  }
  it->depth = 0;
  return k < 0 ? (ma_status)-k : MA_OK;
}
