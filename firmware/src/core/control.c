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

static void copy(ma_tensor *dst, const ma_tensor *src) {
  if (dst->data != src->data && dst->bytes > 0) memmove(dst->data, src->data, dst->bytes);
}

static void copy_to_inputs(ma_interp *it, ma_tensor **from, int32_t count, int32_t callee) {
  ma_subgraph *c = &it->subgraphs[callee];
  ma_tensor t;
  for (int32_t i = 0; i < count; i++) copy(sg_tensor(it, callee, c->inputs, (uint32_t)i, &t), from[i]);
}

static void copy_from_outputs(ma_interp *it, ma_tensor **to, int32_t count, int32_t callee) {
  ma_subgraph *c = &it->subgraphs[callee];
  ma_tensor t;
  for (int32_t i = 0; i < count; i++) copy(to[i], sg_tensor(it, callee, c->outputs, (uint32_t)i, &t));
}

static int truthy(const ma_tensor *t) { return ((const uint8_t *)t->data)[0] != 0; }

static ma_status eval_while(ma_interp *it, ma_frame *f) {
  ma_node *node = &f->node;
  int32_t cond = f->callee[0], body = f->callee[1];
  ma_tensor cond_desc;
  const ma_tensor *cond_out = sg_tensor(it, cond, it->subgraphs[cond].outputs, 0, &cond_desc);
  copy_to_inputs(it, node->inputs, node->n_inputs, cond);
  ma_status st = ma_invoke_subgraph(it, cond);
  if (st != MA_OK) return st;
  for (int32_t i = 0; i < node->n_inputs; i++) copy(node->outputs[i], node->inputs[i]);
  for (int32_t iter = 0; truthy(cond_out); iter++) {
    if (iter >= it->max_while) {
      return ma_fail(it, MA_ERR_KERNEL, "WHILE ran %d iterations without ending",
                     (int)it->max_while);
    }
    copy_to_inputs(it, node->outputs, node->n_outputs, body);
    st = ma_invoke_subgraph(it, body);
    if (st != MA_OK) return st;
    copy_from_outputs(it, node->outputs, node->n_outputs, body);
    copy_to_inputs(it, node->outputs, node->n_outputs, cond);
    st = ma_invoke_subgraph(it, cond);
    if (st != MA_OK) return st;
  }
  return MA_OK;
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

ma_status ma_core_eval(ma_interp *it, ma_inode *n, ma_frame *f) {
  ma_node *node = &f->node;
  switch (node->builtin_code) {
    case MA_OP_IF: {
      int32_t branch = truthy(node->inputs[0]) ? f->callee[0] : f->callee[1];
      copy_to_inputs(it, node->inputs + 1, node->n_inputs - 1, branch);
      ma_status st = ma_invoke_subgraph(it, branch);
      if (st == MA_OK) copy_from_outputs(it, node->outputs, node->n_outputs, branch);
      return st;
    }
    case MA_OP_WHILE:
      return eval_while(it, f);
    case MA_OP_CALL_ONCE:
      if (n->state != 0) return MA_OK;
      n->state = 1;
      return ma_invoke_subgraph(it, f->callee[0]);
    default:
      return eval_resource(it, node);
  }
}

ma_status ma_invoke_subgraph(ma_interp *it, int32_t sg) {
  if (it->depth >= MA_MAX_NESTING) {
    return ma_fail(it, MA_ERR_KERNEL, "subgraph nesting deeper than %d", MA_MAX_NESTING);
  }
  it->depth++;
  ma_subgraph *s = &it->subgraphs[sg];
  ma_status st = MA_OK;
  for (int32_t k = 0; k < s->n_nodes && st == MA_OK; k++) {
    ma_inode *n = &s->nodes[k];
    ma_frame f;
    ma_build_eval_frame(it, sg, n, &f);
    const ma_op_hook hook = it->cb.op_hook;
    if (hook != NULL) hook(it->log_ctx, sg, k, n->code, 0);
    if (f.kernel == NULL) {
      st = ma_core_eval(it, n, &f);
    } else {
      st = f.kernel->eval(it, &f.node);
      if (st != MA_OK) st = ma_at_operator(it, st, sg, k, "eval");
    }
    if (hook != NULL) hook(it->log_ctx, sg, k, n->code, 1);
  }
  it->depth--;
  return st;
}
