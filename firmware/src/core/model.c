/* Reads and verifies an untrusted .tflite flatbuffer into the interpreter's tail structures.
 * Every index, offset and size is checked here, so the rest of the runtime can trust them. */
#include <stdbool.h>
#include <string.h>

#include "internal.h"

#define MAX_SUBGRAPHS 256

static const char kOfflineKey[] = "OfflineMemoryAllocation";

static ma_status bad(ma_interp *it, const char *what, int32_t sg, int32_t idx) {
  return ma_fail(it, MA_ERR_MODEL, "malformed model: %s (subgraph %d, item %d)", what, (int)sg,
                 (int)idx);
}

/* Product of dims times element size, or -1 on negative dims or overflow past 2 GiB. */
static int64_t tensor_bytes(const ma_tensor *t) {
  int64_t n = (int64_t)ma_type_size(t->type);
  for (int32_t i = 0; i < t->ndims; i++) {
    if (t->dims[i] < 0) return -1;
    n *= t->dims[i];
    if (n > INT32_MAX - 64) return -1; /* planner sizes are int32 after 16-byte rounding */
  }
  return n;
}

/* Data of buffer `index`: NULL with *len 0 when empty. */
static const uint8_t *buffer_data(ma_interp *it, fb_vec bufs, uint32_t index, uint32_t align,
                                  size_t *len) {
  fb_rd *rd = &it->rd;
  *len = 0;
  fb_tab b = fb_vec_table(rd, bufs, index);
  fb_vec data = fb_vector(rd, &b, 0, 1);
  if (rd->bad) return NULL;
  if (data.len > 0) {
    if ((data.pos & (align - 1)) != 0) rd->bad = 1;
    *len = data.len;
    return rd->buf + data.pos;
  }
  /* Models over 2 GiB keep buffers after the flatbuffer, addressed by offset and size. */
  uint64_t off = (uint64_t)fb_int(rd, &b, 1, 8, 0, 0);
  uint64_t size = (uint64_t)fb_int(rd, &b, 2, 8, 0, 0);
  if (off > 1 && size > 0) {
    if (off > rd->size || size > rd->size - off || (off & (align - 1)) != 0) {
      rd->bad = 1;
      return NULL;
    }
    *len = (size_t)size;
    return rd->buf + off;
  }
  return NULL;
}

static ma_status parse_tensor(ma_interp *it, int32_t sg, int32_t i, fb_tab tt, fb_vec bufs,
                              ma_tensor *t) {
  fb_rd *rd = &it->rd;
  fb_vec shape = fb_vector(rd, &tt, 0, 4);
  if (rd->bad) return bad(it, "tensor table", sg, i);
  if (shape.len > MA_MAX_DIMS) {
    return ma_fail(it, MA_ERR_UNSUPPORTED, "tensor %d of subgraph %d has %u dims (max %d)", (int)i,
                   (int)sg,
                   (unsigned)shape.len, MA_MAX_DIMS);
  }
  t->ndims = (int32_t)shape.len;
  for (uint32_t d = 0; d < shape.len; d++) t->dims[d] = fb_vec_i32(rd, shape, d);
  t->type = (uint8_t)fb_int(rd, &tt, 1, 1, 0, 0);
  t->index = i;
  t->is_variable = fb_int(rd, &tt, 5, 1, 0, 0) != 0;
  if (ma_type_size(t->type) == 0) {
    /* TensorType is a signed byte in the schema: name it as written (-1, not 255). */
    return ma_fail(it, MA_ERR_UNSUPPORTED, "tensor %d of subgraph %d has unsupported type %d",
                   (int)i, (int)sg, (int)(int8_t)t->type);
  }
  int64_t bytes = tensor_bytes(t);
  if (bytes < 0) return bad(it, "tensor shape negative or too large", sg, i);
  t->bytes = (size_t)bytes;

  uint32_t buffer = (uint32_t)fb_int(rd, &tt, 2, 4, 0, 0);
  if (buffer >= bufs.len) return bad(it, "tensor buffer index out of range", sg, i);
  /* A flatbuffer writer aligns a buffer's bytes only as a [ubyte] vector: 4 bytes (its length
   * prefix), unless the schema's force_align (16) was honoured. So 8-byte elements may be only
   * 4-byte aligned in a valid file, as TFLM accepts; ma_check_const_alignment decides later
   * whether the operator reading them copes. */
  size_t ts = ma_type_size(t->type);
  size_t len;
  const uint8_t *data = buffer_data(it, bufs, buffer, (uint32_t)(ts > 4 ? 4 : ts), &len);
  if (rd->bad) return bad(it, "tensor buffer outside the file or misaligned for its type", sg, i);
  if (data != NULL) {
    if (len != t->bytes) return bad(it, "constant buffer size does not match tensor shape", sg, i);
    if (t->is_variable) return bad(it, "variable tensor with constant data", sg, i);
    t->data = (void *)(uintptr_t)data; /* constants stay in the model, never written */
    t->is_const = 1;
  }

  fb_tab q = fb_subtable(rd, &tt, 4);
  /* A quantization table that is not a table is refused here, not read as absent: describe()
   * reads it again on every invoke without checks. */
  if (rd->bad) return bad(it, "quantization table", sg, i);
  if (q.pos != 0) {
    fb_vec scale = fb_vector(rd, &q, 2, 4);
    fb_vec zp = fb_vector(rd, &q, 3, 8);
    int32_t qdim = (int32_t)fb_int(rd, &q, 6, 4, 1, 0);
    if (rd->bad) return bad(it, "quantization table", sg, i);
    if (scale.len > 0) {
      if (zp.len != scale.len) return bad(it, "zero_point count differs from scale count", sg, i);
      if (scale.len > 1) {
        /* Converters leave quantized_dimension of the output channel on 1-D biases. */
        if (t->ndims == 1) qdim = 0;
        if (qdim < 0 || qdim >= t->ndims || (uint32_t)t->dims[qdim] != scale.len) {
          return bad(it, "per-channel quantization does not match the shape", sg, i);
        }
      }
      t->quant.scale = (const float *)(const void *)(rd->buf + scale.pos);
      t->quant.zero_point = (const int64_t *)(const void *)(rd->buf + zp.pos);
      t->quant.count = (int32_t)scale.len;
      t->quant.dim = qdim;
    }
  }
  return MA_OK;
}

static ma_status check_indices(ma_interp *it, fb_vec v, int32_t n, int allow_optional, int32_t sg,
                               int32_t item, const char *what) {
  for (uint32_t k = 0; k < v.len; k++) {
    int32_t x = fb_vec_i32(&it->rd, v, k);
    if (x >= n || x < (allow_optional ? -1 : 0)) return bad(it, what, sg, item);
  }
  return MA_OK;
}

int ma_is_core_op(int32_t code) {
  return code == MA_OP_IF || code == MA_OP_WHILE || code == MA_OP_CALL_ONCE ||
         code == MA_OP_VAR_HANDLE || code == MA_OP_READ_VARIABLE || code == MA_OP_ASSIGN_VARIABLE;
}

static ma_status resolve_code(ma_interp *it, uint32_t opcode_index, int32_t sg, int32_t k,
                              ma_inode *n) {
  fb_rd *rd = &it->rd;
  if (opcode_index >= it->opcodes.len) return bad(it, "operator code index out of range", sg, k);
  fb_tab oc = fb_vec_table(rd, it->opcodes, opcode_index);
  int64_t deprecated = fb_int(rd, &oc, 0, 1, 1, 0);
  int64_t code = fb_int(rd, &oc, 3, 4, 1, 0);
  uint32_t name_len;
  const char *name = fb_string(rd, &oc, 1, &name_len);
  if (rd->bad) return bad(it, "operator code table", sg, k);
  if (deprecated > code) code = deprecated; /* old files only fill the byte field */
  if (code < 0 || code > 100000) return bad(it, "operator code out of range", sg, k);
  n->code = (int32_t)code;
  if (ma_is_core_op(n->code)) return MA_OK;
  if (code == MA_OP_CUSTOM && (n->code = ma_find_custom_code(name, name_len)) >= 0) return MA_OK;
  if (code == MA_OP_CUSTOM) {
    int shown = name != NULL ? (int)(name_len > 64 ? 64 : name_len) : 0;
    return ma_fail(it, MA_ERR_UNSUPPORTED,
                   "unsupported operator CUSTOM:%.*s (subgraph %d, operator %d)", shown,
                   name != NULL ? name : "", (int)sg, (int)k);
  }
  if (ma_find_kernel(n->code) == NULL) {
    return ma_fail(it, MA_ERR_UNSUPPORTED,
                   "unsupported operator %s (code %d, subgraph %d, operator %d)",
                   ma_op_name(n->code), (int)code, (int)sg, (int)k);
  }
  return MA_OK;
}

static ma_status parse_operator(ma_interp *it, int32_t sg, int32_t k, fb_tab op, ma_subgraph *s,
                                ma_inode *n) {
  fb_rd *rd = &it->rd;
  uint32_t opcode_index = (uint32_t)fb_int(rd, &op, 0, 4, 0, 0);
  fb_vec ins = fb_vector(rd, &op, 1, 4);
  fb_vec outs = fb_vector(rd, &op, 2, 4);
  (void)fb_int(rd, &op, 3, 1, 0, 0);
  fb_subtable(rd, &op, 4); /* options: verified here, read later through ma_opt_* */
  fb_vector(rd, &op, 5, 1);
  fb_vec inter = fb_vector(rd, &op, 8, 4);
  if (rd->bad) return bad(it, "operator table", sg, k);
  ma_status st = check_indices(it, ins, s->n_tensors, 1, sg, k, "operator input index");
  if (st == MA_OK) st = check_indices(it, outs, s->n_tensors, 0, sg, k, "operator output index");
  if (st == MA_OK) st = check_indices(it, inter, s->n_tensors, 1, sg, k, "intermediate index");
  /* As TFLM (AllocationInfoBuilder::ValidateSubgraph): no kernel here uses an operator's
   * intermediates, and TFLM refuses a model where one holds data. */
  for (uint32_t j = 0; st == MA_OK && j < inter.len; j++) {
    int32_t t = fb_vec_i32(rd, inter, j);
    ma_tensor desc;
    if (t < 0) continue;
    ma_describe(it, sg, t, &desc);
    if (desc.bytes != 0) {
      return ma_fail(it, MA_ERR_MODEL, "operator %d of subgraph %d has intermediate tensor %d "
                     "of %lu bytes: TFLM refuses intermediates that hold data", (int)k, (int)sg,
                     (int)t, (unsigned long)desc.bytes);
    }
  }
  if (st == MA_OK) st = resolve_code(it, opcode_index, sg, k, n);
  if (st != MA_OK) return st;
  if ((uint64_t)ins.len + outs.len > MA_MAX_OPERANDS) {
    return ma_fail(it, MA_ERR_UNSUPPORTED, "operator %d of subgraph %d has %u operands (max %d)",
                   (int)k, (int)sg, (unsigned)(ins.len + outs.len), MA_MAX_OPERANDS);
  }
  for (uint32_t j = 0; j < outs.len; j++) {
    if (ma_is_const(it, sg, fb_vec_i32(rd, outs, j))) {
      return bad(it, "operator writes a constant", sg, k);
    }
  }
  n->op_pos = op.pos;
  return MA_OK;
}

static ma_status parse_subgraph(ma_interp *it, int32_t sg, fb_tab st) {
  fb_rd *rd = &it->rd;
  ma_subgraph *s = &it->subgraphs[sg];
  fb_vec tensors = fb_vector(rd, &st, 0, 4);
  fb_vec ops = fb_vector(rd, &st, 3, 4);
  s->inputs = fb_vector(rd, &st, 1, 4);
  s->outputs = fb_vector(rd, &st, 2, 4);
  if (rd->bad) return bad(it, "subgraph table", sg, -1);
  s->tensor_tabs = tensors;
  s->n_tensors = (int32_t)tensors.len;
  ma_status status = check_indices(it, s->inputs, s->n_tensors, 0, sg, -1, "subgraph input index");
  if (status == MA_OK) {
    status = check_indices(it, s->outputs, s->n_tensors, 0, sg, -1, "subgraph output index");
  }
  if (status != MA_OK) return status;
  if (tensors.len == 0) return ops.len == 0 ? MA_OK : bad(it, "operators without tensors", sg, -1);
  s->data = ma_tail_alloc(it, sizeof(void *) * tensors.len, _Alignof(void *), MA_REC_EVAL_TENSOR);
  if (s->data == NULL) return MA_ERR_ARENA;
  it->rec[MA_REC_EVAL_TENSOR].count += tensors.len;
  for (uint32_t i = 0; i < tensors.len; i++) {
    ma_tensor t;
    memset(&t, 0, sizeof t);
    fb_tab tt = fb_vec_table(rd, tensors, i);
    if (rd->bad) return bad(it, "tensor table", sg, (int32_t)i);
    status = parse_tensor(it, sg, (int32_t)i, tt, it->buffers, &t);
    if (status != MA_OK) return status;
    s->data[i] = t.data;
  }
  for (uint32_t i = 0; i < s->inputs.len; i++) {
    if (ma_is_const(it, sg, fb_vec_i32(rd, s->inputs, i))) {
      return bad(it, "constant subgraph input", sg, -1);
    }
  }
  s->n_nodes = (int32_t)ops.len;
  if (ops.len > 0) {
    s->nodes = ma_tail_alloc(it, sizeof(ma_inode) * ops.len, _Alignof(ma_inode), MA_REC_NODES);
    if (s->nodes == NULL) return MA_ERR_ARENA;
    it->rec[MA_REC_NODES].count += ops.len;
  }
  for (uint32_t k = 0; k < ops.len; k++) {
    fb_tab op = fb_vec_table(rd, ops, k);
    if (rd->bad) return bad(it, "operator table", sg, (int32_t)k);
    status = parse_operator(it, sg, (int32_t)k, op, s, &s->nodes[k]);
    if (status == MA_ERR_UNSUPPORTED) { /* listed; the others are still checked */
      ma_list_unsupported(it);
      s->nodes[k].code = MA_UNSUPPORTED_NODE;
      continue;
    }
    if (status != MA_OK) return status;
  }
  return MA_OK;
}

int ma_is_const(const ma_interp *it, int32_t sg, int32_t index) {
  const uint8_t *p = it->subgraphs[sg].data[index];
  return p != NULL && p >= it->rd.buf && p < it->rd.buf + it->rd.size;
}

/* parse_tensor's result for a tensor it accepted at load, read without its checks: this runs
 * for every operand of every operator on every invoke (inlined in ma_build_frame). */
static inline void describe(ma_interp *it, int32_t sg, int32_t index, ma_tensor *out) {
  const ma_subgraph *s = &it->subgraphs[sg];
  const uint8_t *buf = it->rd.buf;
  const fb_tab tt = fbt_vec_table(buf, s->tensor_tabs, (uint32_t)index);
  const fb_vec shape = fbt_vector(buf, &tt, 0);
  uint32_t fo = fbt_off(buf, &tt, 1);
  out->type = fo != 0 ? buf[tt.pos + fo] : 0;
  size_t bytes = ma_type_size(out->type);
  /* Every field is written (no memset: newlib-nano's stores a byte at a time). */
  _Static_assert(MA_MAX_DIMS == 6, "dims zeroed one by one below");
  out->dims[0] = out->dims[1] = out->dims[2] = out->dims[3] = out->dims[4] = out->dims[5] = 0;
  for (uint32_t d = 0; d < shape.len; d++) {
    out->dims[d] = (int32_t)fbt_u32(buf, shape.pos + 4 * d);
    bytes *= (size_t)out->dims[d];
  }
  out->ndims = (int32_t)shape.len;
  out->bytes = bytes;
  out->index = index;
  fo = fbt_off(buf, &tt, 5);
  out->is_variable = fo != 0 && buf[tt.pos + fo] != 0;
  out->data = s->data[index];
  /* A tensor with a buffer of its own points into the model (parse_tensor); nothing else does. */
  out->is_const = ma_is_const(it, sg, index) ? 1 : 0;
  out->quant.scale = NULL; /* as parse_tensor leaves it without scales */
  out->quant.zero_point = NULL;
  out->quant.count = 0;
  out->quant.dim = 0;
  const fb_tab q = fbt_subtable(buf, &tt, 4);
  if (q.pos == 0) return;
  const fb_vec scale = fbt_vector(buf, &q, 2);
  if (scale.len == 0) return;
  fo = fbt_off(buf, &q, 6);
  int32_t qdim = fo != 0 ? (int32_t)fbt_u32(buf, q.pos + fo) : 0;
  if (scale.len > 1 && out->ndims == 1) qdim = 0;
  out->quant.scale = (const float *)(const void *)(buf + scale.pos);
  out->quant.zero_point = (const int64_t *)(const void *)(buf + fbt_vector(buf, &q, 3).pos);
  out->quant.count = (int32_t)scale.len;
  out->quant.dim = qdim;
}

void ma_describe(ma_interp *it, int32_t sg, int32_t index, ma_tensor *out) {
  describe(it, sg, index, out);
}

void ma_op_io(ma_interp *it, const ma_inode *n, fb_vec *ins, fb_vec *outs) {
  fb_tab op = fb_table_at(&it->rd, n->op_pos);
  *ins = fb_vector(&it->rd, &op, 1, 4);
  *outs = fb_vector(&it->rd, &op, 2, 4);
}

void ma_op_callees(ma_interp *it, const ma_inode *n, int32_t callee[2]) {
  callee[0] = callee[1] = -1;
  if (n->code != MA_OP_IF && n->code != MA_OP_WHILE && n->code != MA_OP_CALL_ONCE) return;
  fb_tab op = fb_table_at(&it->rd, n->op_pos);
  fb_tab opts = fb_subtable(&it->rd, &op, 4);
  int slots = n->code == MA_OP_CALL_ONCE ? 1 : 2;
  for (int c = 0; c < slots; c++) {
    int32_t s = (int32_t)fb_int(&it->rd, &opts, c, 4, 1, -1);
    callee[c] = (s > 0 && s < it->n_subgraphs) ? s : -1;
  }
}

/* The frame of operator n, every descriptor in full (prepare, and the invokes of operators
 * that control.c does not build as data frames), of operands ins then outs. */
static inline void build_frame(ma_interp *it, int32_t sg, ma_inode *n, fb_tab op, fb_vec ins,
                               fb_vec outs, ma_frame *f) {
  const uint8_t *buf = it->rd.buf;
  /* Verified by parse_operator at load, so read without checks (this runs on every invoke). */
  const uint32_t type_at = fbt_off(buf, &op, 3);
  const uint8_t opt_type = type_at != 0 ? buf[op.pos + type_at] : 0;
  const fb_tab opts = fbt_subtable(buf, &op, 4);
  const fb_vec custom = fbt_vector(buf, &op, 5);
  /* Each operand's descriptor, inputs then outputs (never optional: parse_operator), then
   * every field of the node (no memset: see ma_describe). */
  for (uint32_t j = 0; j < ins.len + outs.len; j++) {
    const int32_t x = (int32_t)(j < ins.len ? fbt_u32(buf, ins.pos + 4 * j)
                                            : fbt_u32(buf, outs.pos + 4 * (j - ins.len)));
    f->list[j] = x < 0 ? NULL : &f->desc[j];
    if (x >= 0) describe(it, sg, x, &f->desc[j]);
  }
  f->node.n_inputs = (int32_t)ins.len;
  f->node.n_outputs = (int32_t)outs.len;
  f->node.inputs = f->list;
  f->node.outputs = f->list + ins.len;
  f->node.options.table = opts.pos != 0 ? buf + opts.pos : NULL;
  f->node.options.end = opts.pos != 0 ? buf + it->rd.size : NULL;
  f->node.options.type = opts.pos != 0 ? opt_type : 0;
  f->node.custom_options = custom.pos != 0 ? buf + custom.pos : NULL;
  f->node.custom_options_len = custom.pos != 0 ? custom.len : 0;
  f->node.user_data = n->user_data;
  f->node.builtin_code = n->code;
  f->node.eval_data_only = 0;
  f->node.index = (int32_t)(n - it->subgraphs[sg].nodes);
}

int ma_build_eval_frame(ma_interp *it, int32_t sg, ma_inode *n, const ma_kernel *kernel,
                        ma_frame *f) {
  const uint8_t *buf = it->rd.buf;
  const fb_tab op = fbt_table(buf, n->op_pos);
  const fb_vec ins = fbt_vector(buf, &op, 1);
  const fb_vec outs = fbt_vector(buf, &op, 2);
  if (ins.len + outs.len > f->cap) return 0;
  build_frame(it, sg, n, op, ins, outs, f);
  f->kernel = kernel;
  f->node.variant = kernel != NULL ? kernel->variant : 0;
  return 1;
}

int ma_build_frame(ma_interp *it, int32_t sg, ma_inode *n, ma_frame *f) {
  if (!ma_build_eval_frame(it, sg, n, ma_find_kernel(n->code), f)) return 0;
  ma_op_callees(it, n, f->callee); /* for control flow (-1 for other operators) */
  return 1;
}

/* host.plan's marker beside its plan (JSON, host/planning/plan_origin.py): with "overlap": true
 * the plan writes outputs over inputs where the loops of the kernels it names ("kernels", else
 * "runtime") allow; another library's loops may read an input after overwriting it. */
static const char kMarkerKey[] = "microarena_plan";

static const char *find_text(const char *s, size_t n, const char *key) {
  size_t k = strlen(key);
  for (size_t i = 0; i + k <= n; i++) {
    if (memcmp(s + i, key, k) == 0) return s + i + k;
  }
  return NULL;
}

/* The quoted string after `key` (e.g. "\"kernels\": \""), copied into out; false if absent. */
static bool marker_string(const char *s, size_t n, const char *key, char *out, size_t cap) {
  const char *v = find_text(s, n, key);
  if (v == NULL) return false;
  size_t i = 0;
  while (v + i < s + n && v[i] != '"' && i + 1 < cap) {
    out[i] = v[i];
    i++;
  }
  out[i] = '\0';
  return v + i < s + n && v[i] == '"';
}

static uint32_t crc32_of(const uint8_t *p, size_t n) { /* zlib's CRC-32 */
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int b = 0; b < 8; b++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

/* Refuses an overlapping plan host.plan proved for other kernels than this runtime's (its
 * marker must be this plan's: its crc32 matches, as plan_origin.py checks). */
static ma_status check_marker(ma_interp *it, const char *mark, size_t n, const uint8_t *plan,
                              size_t plan_bytes) {
  if (mark == NULL || plan == NULL || find_text(mark, n, "\"overlap\": true") == NULL) {
    return MA_OK;
  }
  const char *crc = find_text(mark, n, "\"crc32\": ");
  uint32_t want = 0;
  while (crc != NULL && crc < mark + n && *crc >= '0' && *crc <= '9') {
    want = want * 10u + (uint32_t)(*crc++ - '0');
  }
  if (crc == NULL || want != crc32_of(plan, plan_bytes)) return MA_OK; /* not this plan's */
  char kernels[32], cpu[32] = "";
  if (!marker_string(mark, n, "\"kernels\": \"", kernels, sizeof kernels) &&
      !marker_string(mark, n, "\"runtime\": \"", kernels, sizeof kernels)) {
    return MA_OK;
  }
  if (strcmp(kernels, "microarena") == 0) return MA_OK;
  marker_string(mark, n, "\"cpu\": \"", cpu, sizeof cpu);
  return ma_fail(it, MA_ERR_PLAN,
                 "offline plan: its overlaps are proven for the %s kernels%s%s, not this "
                 "runtime's; re-plan with host.plan MODEL --embed --overlap --kernels microarena",
                 kernels, cpu[0] ? " on " : "", cpu);
}

/* Finds the OfflineMemoryAllocation metadata: [version, subgraphs, n, offset_0..offset_n-1].
 * TFLM's rule (GetOfflinePlannedOffsets): every entry of that name must hold one offset per
 * tensor, and the last one counts. */
static ma_status find_offline_plan(ma_interp *it, fb_tab model, fb_vec bufs) {
  fb_rd *rd = &it->rd;
  fb_vec meta = fb_vector(rd, &model, 6, 4);
  if (rd->bad) return bad(it, "metadata vector", -1, -1);
  const char *mark = NULL;
  const uint8_t *plan = NULL;
  size_t mark_bytes = 0, plan_bytes = 0;
  for (uint32_t i = 0; i < meta.len; i++) {
    fb_tab m = fb_vec_table(rd, meta, i);
    uint32_t len;
    const char *name = fb_string(rd, &m, 0, &len);
    uint32_t buffer = (uint32_t)fb_int(rd, &m, 1, 4, 0, 0);
    if (rd->bad) return bad(it, "metadata table", -1, (int32_t)i);
    if (name != NULL && len == sizeof kMarkerKey - 1 && memcmp(name, kMarkerKey, len) == 0 &&
        buffer < bufs.len) {
      mark = (const char *)buffer_data(it, bufs, buffer, 1, &mark_bytes);
      if (rd->bad) return bad(it, "metadata buffer", -1, (int32_t)i);
      continue;
    }
    if (name == NULL || len != sizeof kOfflineKey - 1 || memcmp(name, kOfflineKey, len) != 0) {
      continue;
    }
    if (buffer >= bufs.len) return bad(it, "metadata buffer index out of range", -1, (int32_t)i);
    size_t bytes;
    const uint8_t *data = buffer_data(it, bufs, buffer, 4, &bytes);
    if (rd->bad || data == NULL || bytes < 12 || bytes % 4 != 0) {
      return ma_fail(it, MA_ERR_PLAN, "OfflineMemoryAllocation metadata is malformed");
    }
    const int32_t *w = (const int32_t *)(const void *)data;
    if (w[2] != it->n_tensors_total) {
      return ma_fail(it, MA_ERR_PLAN,
                     "OfflineMemoryAllocation has %d offsets but the model has %d tensors "
                     "(all subgraphs)", (int)w[2], (int)it->n_tensors_total);
    }
    if ((size_t)w[2] > bytes / 4 - 3) {
      return ma_fail(it, MA_ERR_PLAN,
                     "OfflineMemoryAllocation declares %d offsets but its buffer holds %lu",
                     (int)w[2], (unsigned long)(bytes / 4 - 3));
    }
    it->offline = w + 3;
    plan = data;
    plan_bytes = bytes;
  }
  return check_marker(it, mark, mark_bytes, plan, plan_bytes);
}

ma_status ma_parse_model(ma_interp *it) {
  fb_rd *rd = &it->rd;
  fb_tab model = fb_root(rd);
  int64_t version = fb_int(rd, &model, 0, 4, 0, 0);
  fb_vec opcodes = fb_vector(rd, &model, 1, 4);
  fb_vec sgs = fb_vector(rd, &model, 2, 4);
  fb_vec bufs = fb_vector(rd, &model, 4, 4);
  if (rd->bad) return ma_fail(it, MA_ERR_MODEL, "malformed model: not a TFLite flatbuffer");
  if (version != 3) {
    return ma_fail(it, MA_ERR_MODEL, "model schema version %ld, expected 3", (long)version);
  }
  if (sgs.len == 0 || sgs.len > MAX_SUBGRAPHS) {
    return ma_fail(it, MA_ERR_MODEL, "model has %u subgraphs (1..%d supported)",
                   (unsigned)sgs.len, MAX_SUBGRAPHS);
  }
  it->n_subgraphs = (int32_t)sgs.len;
  it->subgraphs = ma_tail_alloc(it, sizeof(ma_subgraph) * sgs.len, _Alignof(ma_subgraph),
                                MA_REC_PERSISTENT_BUFFER);
  if (it->subgraphs == NULL) return MA_ERR_ARENA;
  int64_t total = 0, entries = 0;
  for (uint32_t s = 0; s < sgs.len; s++) {
    fb_tab st = fb_vec_table(rd, sgs, s);
    fb_vec tensors = fb_vector(rd, &st, 0, 4);
    fb_vec ops = fb_vector(rd, &st, 3, 4);
    if (rd->bad) return bad(it, "subgraph table", (int32_t)s, -1);
    it->subgraphs[s].first_global = (int32_t)total;
    total += tensors.len;
    entries += (int64_t)tensors.len + ops.len;
    if (total > INT32_MAX / 64) return bad(it, "too many tensors", (int32_t)s, -1);
  }
  /* Each listed tensor or operator takes 4 bytes of the file, unless subgraphs share their
   * lists: refuse what the file cannot hold, so the work stays bounded by its size. */
  if (entries * 4 > (int64_t)rd->size) {
    return ma_fail(it, MA_ERR_MODEL, "malformed model: its subgraphs list %ld tensors and "
                   "operators, more than its %lu bytes can hold (subgraphs share their lists)",
                   (long)entries, (unsigned long)rd->size);
  }
  it->n_tensors_total = (int32_t)total;
  it->buffers = bufs;
  it->opcodes = opcodes;
  ma_status status = find_offline_plan(it, model, bufs);
  for (uint32_t s = 0; status == MA_OK && s < sgs.len; s++) {
    status = parse_subgraph(it, (int32_t)s, fb_vec_table(rd, sgs, s));
  }
  return status;
}
