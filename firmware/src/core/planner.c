/* Memory plan: tensor lifetimes as TFLM computes them, the offline plan from the model's
 * metadata (validated), and TFLM's GreedyMemoryPlanner for everything else, so the head
 * equals TFLM's for the same inputs. All working memory is temporary. */
#include <string.h>

#include "internal.h"

#define UNSET (-1)

typedef struct {
  int32_t size, first, last, offset, offline; /* offline: -1 when planned online */
  int32_t next;                               /* offset-ordered list link */
  int32_t owner;                              /* global tensor index, or -1 - scratch index */
} buf;

typedef struct {
  ma_interp *it;
  int32_t *first, *last;      /* per global tensor */
  int32_t *sfirst, *slast;    /* per scratch request */
  int32_t scope;
  int32_t twice, twice_sg; /* a tensor written twice in one run of its subgraph, or -1 */
} walk;

/* As TFLM (UpdateFirstCreated): a tensor keeps its first creation, so a subgraph walked
 * more than once keeps its tensors live from the first visit to the last; scopes only grow. */
static void created(int32_t *first, int32_t *last, int32_t scope) {
  if (*first == UNSET) *first = scope;
  *last = scope;
}

static int listed(ma_interp *it, fb_vec v, int32_t t) {
  for (uint32_t i = 0; i < v.len; i++)
    if (fb_vec_i32(&it->rd, v, i) == t) return 1;
  return 0;
}

/* The first scratch request of operator k of subgraph sg (or past them): requests are made
 * in prepare order, by subgraph then operator, so a binary search keeps each visit cheap. */
static int32_t first_request(const ma_interp *it, int32_t sg, int32_t k) {
  int32_t lo = 0, hi = it->n_scratch;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    const ma_scratch_req *r = &it->scratch_reqs[mid];
    if (r->subgraph < sg || (r->subgraph == sg && r->node < k)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Marks lifetimes of subgraph `sg` and, nested inside each calling operator (one new scope
 * per callee), of the subgraphs it invokes. Depth and the number of scopes were bounded at
 * load (call graph check, MA_MAX_SCOPES). */
static void mark(walk *w, int32_t sg, int32_t depth) {
  ma_interp *it = w->it;
  ma_subgraph *s = &it->subgraphs[sg];
  int32_t *first = w->first + s->first_global, *last = w->last + s->first_global;
  const int32_t entry = w->scope;
  for (uint32_t i = 0; i < s->inputs.len; i++) {
    int32_t t = fb_vec_i32(&it->rd, s->inputs, i);
    created(&first[t], &last[t], w->scope);
  }
  for (int32_t k = 0; k < s->n_nodes; k++) {
    fb_vec ins, outs;
    int32_t callee[2];
    ma_op_io(it, &s->nodes[k], &ins, &outs);
    ma_op_callees(it, &s->nodes[k], callee);
    w->scope++;
    for (uint32_t j = 0; j < outs.len; j++) {
      int32_t t = fb_vec_i32(&it->rd, outs, j);
      /* A second writer in this run (an earlier operator, or the caller for a subgraph
       * input) is refused, as the runtime's kernels assume one writer per run. Found on
       * the first visit (later visits keep the first creation, before their entry). */
      int again = first[t] > entry && first[t] < w->scope;
      if (first[t] == entry && listed(it, s->inputs, t)) again = 1;
      if (again && w->twice < 0) {
        w->twice = t;
        w->twice_sg = sg;
      }
      created(&first[t], &last[t], w->scope);
    }
    int32_t op_scope = w->scope;
    for (int c = 0; c < 2 && depth < MA_MAX_NESTING; c++) {
      if (callee[c] < 0) continue;
      w->scope++;
      mark(w, callee[c], depth + 1);
    }
    for (uint32_t j = 0; j < ins.len; j++) {
      int32_t t = fb_vec_i32(&it->rd, ins, j);
      if (t >= 0) last[t] = w->scope;
    }
    for (uint32_t j = 0; j < outs.len; j++) last[fb_vec_i32(&it->rd, outs, j)] = w->scope;
    for (int32_t r = first_request(it, sg, k); r < it->n_scratch; r++) {
      if (it->scratch_reqs[r].subgraph != sg || it->scratch_reqs[r].node != k) break;
      created(&w->sfirst[r], &w->slast[r], op_scope);
      w->slast[r] = w->scope;
    }
  }
  /* Outputs live to the end of the walk (TFLM marks them here, created if no operator did). */
  for (uint32_t i = 0; i < s->outputs.len; i++) {
    int32_t t = fb_vec_i32(&it->rd, s->outputs, i);
    created(&first[t], &last[t], w->scope);
  }
}

static int overlap_in_time(const buf *a, int32_t first, int32_t last) {
  return !(a->first > last || first > a->last);
}

/* TFLM's greedy placement: offline buffers first at their offsets, then the rest largest
 * first (ties: later buffers first, as TFLM fills its sort array from the back), each at
 * the lowest gap between buffers live at the same time. */
static int32_t greedy(buf *b, int32_t n, int32_t *order) {
  int32_t head = 0, tail = n;
  for (int32_t i = 0; i < n; i++) {
    if (b[i].offline < 0) order[--tail] = i;
    else order[head++] = i;
  }
  /* Stable insertion sort by size descending = TFLM's bubble sort result. */
  for (int32_t i = head + 1; i < n; i++) {
    int32_t id = order[i], j = i;
    while (j > head && b[order[j - 1]].size < b[id].size) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = id;
  }
  if (n == 0) return 0;
  int32_t list = order[0];
  b[list].offset = b[list].offline >= 0 ? b[list].offline : 0;
  b[list].next = -1;
  for (int32_t i = 1; i < n; i++) {
    buf *want = &b[order[i]];
    int32_t cand = 0;
    if (want->offline >= 0) {
      cand = want->offline;
    } else {
      int32_t prior = -1;
      for (;;) {
        int32_t next = prior < 0 ? list : b[prior].next;
        while (next >= 0 && !overlap_in_time(&b[next], want->first, want->last)) next = b[next].next;
        if (prior >= 0 && b[prior].offset + b[prior].size > cand) cand = b[prior].offset + b[prior].size;
        if (next < 0 || b[next].offset - cand >= want->size) break;
        prior = next;
      }
    }
    want->offset = cand;
    int32_t id = order[i];
    if (b[list].offset > cand) {
      want->next = list;
      list = id;
    } else {
      int32_t cur = list;
      while (b[cur].next >= 0 && b[b[cur].next].offset <= cand) cur = b[cur].next;
      want->next = b[cur].next;
      b[cur].next = id;
    }
  }
  int32_t max = 0;
  for (int32_t i = 0; i < n; i++) {
    if (b[i].offset + b[i].size > max) max = b[i].offset + b[i].size;
  }
  return max;
}

static void locate(const ma_interp *it, int32_t global, int32_t *sg, int32_t *idx) {
  int32_t s = 0;
  while (s + 1 < it->n_subgraphs && it->subgraphs[s + 1].first_global <= global) s++;
  *sg = s;
  *idx = global - it->subgraphs[s].first_global;
}

/* Why an input may or may not share bytes with its operator's output. */
typedef struct {
  int32_t op;   /* the operator of subgraph 0 creating the output where the input dies, or -1 */
  int has_rule; /* its kernel has an overlap rule for every slot the input is read through */
  int64_t need; /* the rule's smallest safe input offset minus output offset */
} overlap_why;

/* Whether operator k, whose frame f is built and whose inputs are ins, may write y over x (see
 * overlap_allowed; one copy for both frame sizes). */
__attribute__((noinline)) static int rules_allow(ma_interp *it, int32_t k, ma_frame *f, fb_vec ins, const buf *x,
                              const buf *y, overlap_why *why) {
  why->op = k;
  why->need = INT64_MIN; /* no slot constrains it yet */
  int read = 0;
  for (uint32_t j = 0; j < ins.len; j++) {
    if (fb_vec_i32(&it->rd, ins, j) != x->owner) continue;
    read++;
    int64_t d;
    int any;
    if (mak_copied_in_place(&f->node, (int32_t)j, &d)) {
      if (read > 1 || (int64_t)x->offline - y->offline != d) return 0;
      why->need = INT64_MAX; /* exactly at d, which the check below cannot state: see the end */
      continue;
    }
    if (!mak_overlap_rule(it, &f->node, (int32_t)j, &d, &any)) return 0;
    if (!any && d > why->need) why->need = d;
  }
  if (!read) return 0; /* x is not this operator's input: no rule covers it */
  if (why->need == INT64_MAX) return read == 1; /* one copy onto itself */
  why->has_rule = 1;
  return (int64_t)x->offline - y->offline >= why->need;
}

/* rules_allow for an operator of more operands than overlap_allowed's frame holds. */
__attribute__((noinline)) static int rules_allow_large(ma_interp *it, int32_t k, fb_vec ins,
                                                       const buf *x, const buf *y,
                                                       overlap_why *why) {
  ma_tensor *list[MA_MAX_OPERANDS];
  ma_tensor desc[MA_MAX_OPERANDS];
  ma_frame f;
  ma_frame_room(&f, list, desc, MA_MAX_OPERANDS);
  ma_build_frame(it, 0, &it->subgraphs[0].nodes[k], &f);
  return rules_allow(it, k, &f, ins, x, y, why);
}

/* May input x share bytes with output y at their offline offsets? Only for an operator of
 * subgraph 0 that creates y where x is last used, and only where the overlap rule of its
 * kernel (mak_overlap_rule) holds for every input slot x is read through. Never for a graph
 * output x: read by the last operator, it still ends where y starts, but the caller reads it
 * after the invocation. */
static int overlap_allowed(ma_interp *it, const buf *x, const buf *y, overlap_why *why) {
  const ma_subgraph *s0 = &it->subgraphs[0];
  if (x->owner < 0 || y->owner < 0 || x->owner >= s0->n_tensors || y->owner >= s0->n_tensors ||
      x->last != y->first || listed(it, s0->outputs, x->owner))
    return 0;
  for (int32_t k = 0; k < s0->n_nodes; k++) {
    fb_vec ins, outs;
    int32_t callee[2];
    ma_op_io(it, &s0->nodes[k], &ins, &outs);
    if (outs.len != 1 || fb_vec_i32(&it->rd, outs, 0) != y->owner) continue;
    ma_op_callees(it, &s0->nodes[k], callee);
    if (callee[0] >= 0 || callee[1] >= 0) return 0;
    ma_tensor *list[MA_FEW_OPERANDS];
    ma_tensor desc[MA_FEW_OPERANDS];
    ma_frame f;
    ma_frame_room(&f, list, desc, MA_FEW_OPERANDS);
    if (!ma_build_frame(it, 0, &s0->nodes[k], &f)) return rules_allow_large(it, k, ins, x, y, why);
    return rules_allow(it, k, &f, ins, x, y, why);
  }
  return 0;
}

static int variable(ma_interp *it, const buf *b) {
  ma_tensor t;
  int32_t sg, idx;
  if (b->owner < 0) return 0;
  locate(it, b->owner, &sg, &idx);
  ma_describe(it, sg, idx, &t);
  return t.is_variable;
}

static ma_status check_offline(ma_interp *it, const buf *b, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    if (b[i].offline < 0) continue;
    int32_t sg, idx;
    locate(it, b[i].owner, &sg, &idx);
    if (b[i].offline % MA_ALIGN != 0) {
      return ma_fail(it, MA_ERR_PLAN, "offline plan: tensor %d of subgraph %d at offset %d is "
                     "not %d-byte aligned", (int)idx, (int)sg, (int)b[i].offline, MA_ALIGN);
    }
    for (int32_t j = i + 1; j < n; j++) {
      if (b[j].offline < 0 || !overlap_in_time(&b[i], b[j].first, b[j].last)) continue;
      if (b[i].size == 0 || b[j].size == 0) continue;
      if (b[i].offline < b[j].offline + b[j].size && b[j].offline < b[i].offline + b[i].size) {
        int32_t sg2, idx2;
        overlap_why why = {-1, 0, 0};
        locate(it, b[j].owner, &sg2, &idx2);
        if (variable(it, &b[i]) || variable(it, &b[j]))
          return ma_fail(it, MA_ERR_PLAN, "offline plan: tensor %d of subgraph %d [%d, %d) and "
                         "tensor %d of subgraph %d [%d, %d) share bytes, and one is a variable "
                         "tensor (its state must outlive every invocation)",
                         (int)idx, (int)sg, (int)b[i].offline, (int)(b[i].offline + b[i].size),
                         (int)idx2, (int)sg2, (int)b[j].offline, (int)(b[j].offline + b[j].size));
        if (overlap_allowed(it, &b[i], &b[j], &why) || overlap_allowed(it, &b[j], &b[i], &why))
          continue; /* an input over its operator's output, as the kernel's rule allows */
        if (why.op >= 0 && why.has_rule)
          return ma_fail(it, MA_ERR_PLAN, "offline plan: tensor %d of subgraph %d [%d, %d) and "
                         "tensor %d of subgraph %d [%d, %d) overlap while both are live; "
                         "operator %d's kernel needs its input %ld or more bytes above its output",
                         (int)idx, (int)sg, (int)b[i].offline, (int)(b[i].offline + b[i].size),
                         (int)idx2, (int)sg2, (int)b[j].offline, (int)(b[j].offline + b[j].size),
                         (int)why.op, (long)why.need);
        return ma_fail(it, MA_ERR_PLAN, "offline plan: tensor %d of subgraph %d [%d, %d) and "
                       "tensor %d of subgraph %d [%d, %d) overlap while both are live",
                       (int)idx, (int)sg, (int)b[i].offline, (int)(b[i].offline + b[i].size),
                       (int)idx2, (int)sg2, (int)b[j].offline, (int)(b[j].offline + b[j].size));
      }
    }
  }
  return MA_OK;
}

static ma_tensor *global_tensor(ma_interp *it, int32_t g, ma_tensor *t) {
  int32_t sg, idx;
  locate(it, g, &sg, &idx);
  ma_describe(it, sg, idx, t);
  return t;
}

/* Planned tensors still hold the prepare-time placeholder (arena start) or NULL. */
static int unplaced(const ma_interp *it, const ma_tensor *t) {
  if (t->is_const || t->bytes == 0) return 0;
  return t->data == NULL || t->data == (void *)it->arena_start;
}

static int32_t align16(size_t bytes) {
  return (int32_t)((bytes + (MA_ALIGN - 1)) & ~(size_t)(MA_ALIGN - 1));
}

ma_status ma_plan(ma_interp *it) {
  int32_t nt = it->n_tensors_total, ns = it->n_scratch;
  walk w = {it, NULL, NULL, NULL, NULL, 0, -1, -1};
  w.first = ma_temp_alloc(it, sizeof(int32_t) * 2 * ((size_t)nt + (size_t)ns) + 4, 4);
  if (w.first == NULL) return MA_ERR_ARENA;
  w.last = w.first + nt;
  w.sfirst = w.last + nt;
  w.slast = w.sfirst + ns;
  for (int32_t i = 0; i < 2 * (nt + ns); i++) w.first[i] = UNSET;
  mark(&w, 0, 0);
  if (w.twice >= 0) {
    return ma_fail(it, MA_ERR_MODEL, "malformed model: tensor %d of subgraph %d is written "
                   "twice (by two operators, or by its caller and an operator)",
                   (int)w.twice, (int)w.twice_sg);
  }

  int32_t nb = 0;
  for (int32_t g = 0; g < nt; g++) {
    ma_tensor desc;
    ma_tensor *t = global_tensor(it, g, &desc);
    int has_offline = it->offline != NULL && it->offline[g] != -1;
    if (unplaced(it, t) && (!t->is_variable || has_offline)) nb++;
  }
  nb += ns;
  buf *b = ma_temp_alloc(it, sizeof(buf) * (size_t)nb + 1, _Alignof(buf));
  int32_t *order = ma_temp_alloc(it, sizeof(int32_t) * (size_t)nb + 1, 4);
  if (b == NULL || order == NULL) return MA_ERR_ARENA;
  int32_t k = 0;
  for (int32_t g = 0; g < nt; g++) {
    ma_tensor desc;
    ma_tensor *t = global_tensor(it, g, &desc);
    int32_t off = it->offline != NULL ? it->offline[g] : -1;
    if (!unplaced(it, t) || (t->is_variable && off == -1)) continue;
    if (off < -1) {
      int32_t sg, idx;
      locate(it, g, &sg, &idx);
      return ma_fail(it, MA_ERR_PLAN, "offline plan: tensor %d of subgraph %d has offset %d",
                     (int)idx, (int)sg, (int)off);
    }
    buf e = {align16(t->bytes), w.first[g], w.last[g], 0, off, -1, g};
    /* A variable keeps its state between invocations: it is live for the whole walk, so no
     * other buffer may share its bytes (TFLM gives it the walk's lifetime and lets the state
     * be overwritten). */
    if (t->is_variable) {
      e.first = 0;
      e.last = w.scope;
    }
    b[k++] = e;
  }
  for (int32_t r = 0; r < ns; r++) {
    buf e = {align16(it->scratch_reqs[r].bytes), w.sfirst[r], w.slast[r], 0, -1, -1, -1 - r};
    b[k++] = e;
  }
  /* Offsets are int32: the sum of all sizes bounds every offset the greedy can choose. */
  int64_t sum = 0;
  for (int32_t i = 0; i < nb; i++) sum += b[i].size;
  if (sum > INT32_MAX - MA_ALIGN) {
    return ma_fail(it, MA_ERR_MODEL, "malformed model: tensors need more than 2 GiB");
  }
  for (int32_t i = 0; i < nb; i++) {
    if (b[i].offline >= 0 && (int64_t)b[i].offline + b[i].size > INT32_MAX - MA_ALIGN) {
      return ma_fail(it, MA_ERR_PLAN, "offline plan: offset %d is beyond 2 GiB", (int)b[i].offline);
    }
  }
  ma_status st = check_offline(it, b, nb);
  if (st != MA_OK) return st;
  int64_t head = greedy(b, nb, order);
  for (int32_t i = 0; i < nb; i++) {
    if ((int64_t)b[i].offset + b[i].size > head) head = (int64_t)b[i].offset + b[i].size;
  }
  /* Offsets are final: point tensors and scratch at them, then free the working memory. */
  size_t room = (size_t)(it->tail - it->arena_start);
  size_t need = (size_t)head + ma_tail_used(it);
  if (need > it->required) it->required = need;
  if ((uint64_t)head > room) {
    return ma_fail(it, MA_ERR_ARENA,
                   "arena too small: needs at least %lu bytes (head %ld + tail %lu), has %lu",
                   (unsigned long)ma_required(it), (long)head, (unsigned long)ma_tail_used(it),
                   (unsigned long)(it->arena_end - it->arena_start));
  }
  for (int32_t i = 0; i < nb; i++) {
    if (b[i].owner >= 0) {
      int32_t sg, idx;
      locate(it, b[i].owner, &sg, &idx);
      it->subgraphs[sg].data[idx] = it->arena_start + b[i].offset;
    } else {
      it->scratch_offsets[-1 - b[i].owner] = b[i].offset;
    }
  }
  it->head_size = (size_t)head;
  ma_temp_reset(it);
  it->temp = it->arena_start + head; /* the head now occupies the low end */
  return MA_OK;
}
