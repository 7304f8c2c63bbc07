/* The compiled core of search.py's depth-first run (Solver._dfs_python), optional.
 *
 * The same search, step for step: the same candidates in the same order, the same pruning and
 * the same work units counted at the same points, so a run pauses at the same node and returns
 * the same placement as the Python run, only some fifty times faster. The recursion of the
 * Python generators (dfs, split) is an explicit stack of frames here, so a run can pause at a
 * node's entry and resume there. search.py builds the tables (Tables) once per partition and
 * one Run per depth-first run; search.py's docstrings explain the rules themselves.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef long long i64;

#define UNREACHABLE (((i64)1) << 62)

/* ---- int64 arrays from Python sequences -------------------------------------------------- */

static i64 *to_array(PyObject *seq, Py_ssize_t *len)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (!fast) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    i64 *out = malloc(sizeof(i64) * (size_t)(n > 0 ? n : 1));
    if (!out) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        out[k] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, k));
        if (out[k] == -1 && PyErr_Occurred()) {
            free(out);
            Py_DECREF(fast);
            return NULL;
        }
    }
    Py_DECREF(fast);
    if (len) {
        *len = n;
    }
    return out;
}

/* ---- Tables: one partition's static data (search._Local), in CSR form --------------------- */

enum {
    T_SIZE, T_SECS_OFF, T_SECS, T_OV_OFF, T_OV, T_BYSIZE, T_SEC_OFF, T_SEC, T_START,
    T_RISE_OFF, T_RISE_J, T_RISE_R, T_FIX_OFF, T_FIX_LO, T_FIX_HI, T_SFIX_OFF, T_SFIX_LO,
    T_SFIX_HI, T_CUTS, T_COUNT
};

typedef struct {
    PyObject_HEAD
    i64 m, nsec, align, spb;
    i64 *a[T_COUNT];
} Tables;

static void tables_dealloc(Tables *self)
{
    for (int k = 0; k < T_COUNT; k++) {
        free(self->a[k]);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int tables_init(Tables *self, PyObject *args, PyObject *kwds)
{
    (void)kwds;
    PyObject *arrays;
    if (!PyArg_ParseTuple(args, "LLLLO", &self->m, &self->nsec, &self->align, &self->spb,
                          &arrays)) {
        return -1;
    }
    if (!PySequence_Check(arrays) || PySequence_Size(arrays) != T_COUNT) {
        PyErr_SetString(PyExc_ValueError, "Tables: wrong number of arrays");
        return -1;
    }
    for (int k = 0; k < T_COUNT; k++) {
        PyObject *item = PySequence_GetItem(arrays, k);
        if (!item) {
            return -1;
        }
        free(self->a[k]);
        self->a[k] = to_array(item, NULL);
        Py_DECREF(item);
        if (!self->a[k]) {
            return -1;
        }
    }
    return 0;
}

static PyTypeObject TablesType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_search_core.Tables",
    .tp_basicsize = sizeof(Tables),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)tables_init,
    .tp_dealloc = (destructor)tables_dealloc,
    .tp_doc = "A partition's tables for Run.",
};

/* ---- Run: one depth-first run, resumable --------------------------------------------------- */

enum { F_DFS, F_SPLIT };
enum { P_ENTRY, P_CHECKED, P_NEXT, P_RETURN, P_PART, P_PART_DONE };

typedef struct {
    int kind, phase, group, lo, hi;
    i64 last_off, last_pre, last_rise; /* last_rise: member whose rises apply, -1 none */
    size_t mark;                       /* scratch top when the frame was pushed */
    /* dfs */
    size_t cands; /* 3 x ncands: offset, rank, member */
    i64 ncands, ci, max_rem;
    size_t outside; /* 2 x (hi - lo): rem's max over [lo, s) and over [s, hi), at entry */
    i64 i, o, p, hatless, found, tried_child;
    size_t floors, changes; /* saved floors of i's sections; (member, old min_off) pairs */
    i64 nchanges;
    size_t after_cands;
    /* split */
    size_t bounds, saved;
    i64 nparts, pi, nsaved, first_group;
} Frame;

typedef struct {
    size_t base; /* members in scratch[base .. base + count) */
    i64 count;
} Group;

typedef struct {
    PyObject_HEAD
    Tables *t;
    i64 capacity, dynamic, ncols, state; /* state: 0 running, 1 found, 2 exhausted */
    i64 *pre, *min_off, *floor, *rem, *cut, *placed, *offset, *checked, *fixed_secs;
    i64 nfixed_secs, stamp;
    i64 *cols[3]; /* preorder key columns; NULL = T (the largest bytes left in a section) */
    i64 *keybuf;  /* rerank scratch: per member its key tuple */
    i64 *scratch;
    size_t top, cap_scratch;
    Frame *frames;
    i64 nframes, cap_frames;
    Group *groups;
    i64 ngroups, cap_groups;
    i64 ret; /* result of the frame popped last */
    i64 work;
} Run;

static int grow(void **p, size_t elem, size_t *cap, size_t need)
{
    if (need <= *cap) {
        return 0;
    }
    size_t n = *cap ? *cap : 64;
    while (n < need) {
        n *= 2;
    }
    void *q = realloc(*p, elem * n);
    if (!q) {
        return -1;
    }
    *p = q;
    *cap = n;
    return 0;
}

/* Scratch space of n int64s; returns its offset (pointers move when the scratch grows). */
static size_t alloc_scratch(Run *r, size_t n, int *err)
{
    size_t at = r->top;
    if (grow((void **)&r->scratch, sizeof(i64), &r->cap_scratch, at + n) < 0) {
        *err = 1;
        return 0;
    }
    r->top = at + n;
    return at;
}

static Frame *push_frame(Run *r, int *err)
{
    size_t cap = (size_t)r->cap_frames;
    if (grow((void **)&r->frames, sizeof(Frame), &cap, (size_t)r->nframes + 1) < 0) {
        *err = 1;
        return NULL;
    }
    r->cap_frames = (i64)cap;
    Frame *f = &r->frames[r->nframes++];
    memset(f, 0, sizeof(*f));
    f->mark = r->top;
    return f;
}

static i64 push_group(Run *r, size_t base, i64 count, int *err)
{
    size_t cap = (size_t)r->cap_groups;
    if (grow((void **)&r->groups, sizeof(Group), &cap, (size_t)r->ngroups + 1) < 0) {
        *err = 1;
        return -1;
    }
    r->cap_groups = (i64)cap;
    r->groups[r->ngroups].base = base;
    r->groups[r->ngroups].count = count;
    return r->ngroups++;
}

static void run_dealloc(Run *self)
{
    Py_XDECREF(self->t);
    i64 *arrays[] = {self->pre,    self->min_off, self->floor,   self->rem,     self->cut,
                     self->placed, self->offset,  self->checked, self->fixed_secs, self->keybuf,
                     self->scratch, self->cols[0], self->cols[1], self->cols[2]};
    for (size_t k = 0; k < sizeof(arrays) / sizeof(arrays[0]); k++) {
        free(arrays[k]);
    }
    free(self->frames);
    free(self->groups);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static i64 *zeros(i64 n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(i64));
}

/* Run(tables, capacity, pre, rem, dynamic, cols): cols = up to 3 key columns, None for T. */
static int run_init(Run *self, PyObject *args, PyObject *kwds)
{
    (void)kwds;
    PyObject *tables, *pre, *rem, *cols;
    if (!PyArg_ParseTuple(args, "O!LOOLO", &TablesType, &tables, &self->capacity, &pre, &rem,
                          &self->dynamic, &cols)) {
        return -1;
    }
    if (self->t) {
        PyErr_SetString(PyExc_RuntimeError, "Run: already initialised");
        return -1;
    }
    Py_INCREF(tables);
    self->t = (Tables *)tables;
    Tables *t = self->t;
    i64 m = t->m, nsec = t->nsec;
    if (!(self->pre = to_array(pre, NULL)) || !(self->rem = to_array(rem, NULL))) {
        return -1;
    }
    if (!PySequence_Check(cols) || PySequence_Size(cols) > 3) {
        PyErr_SetString(PyExc_ValueError, "Run: up to 3 key columns");
        return -1;
    }
    self->ncols = PySequence_Size(cols);
    for (i64 c = 0; c < self->ncols; c++) {
        PyObject *col = PySequence_GetItem(cols, c);
        if (!col) {
            return -1;
        }
        if (col != Py_None && !(self->cols[c] = to_array(col, NULL))) {
            Py_DECREF(col);
            return -1;
        }
        Py_DECREF(col);
    }
    self->min_off = zeros(m);
    self->floor = zeros(nsec);
    self->cut = zeros(nsec);
    self->placed = zeros(m);
    self->offset = zeros(m);
    self->checked = zeros(nsec);
    self->fixed_secs = zeros(nsec);
    self->keybuf = zeros(4 * m);
    if (!self->min_off || !self->floor || !self->cut || !self->placed || !self->offset ||
        !self->checked || !self->fixed_secs || !self->keybuf) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(self->min_off, t->a[T_START], sizeof(i64) * (size_t)m);
    if (nsec > 1) {
        memcpy(self->cut, t->a[T_CUTS], sizeof(i64) * (size_t)(nsec - 1));
    }
    for (i64 s = 0; s < nsec; s++) {
        if (t->a[T_SFIX_OFF][s + 1] > t->a[T_SFIX_OFF][s]) {
            self->fixed_secs[self->nfixed_secs++] = s;
        }
    }
    int err = 0;
    size_t base = alloc_scratch(self, (size_t)m, &err);
    i64 g = err ? -1 : push_group(self, base, m, &err);
    Frame *f = err ? NULL : push_frame(self, &err);
    if (err || g < 0 || !f) {
        PyErr_NoMemory();
        return -1;
    }
    for (i64 k = 0; k < m; k++) {
        self->scratch[base + (size_t)k] = k;
    }
    f->kind = F_DFS;
    f->phase = P_ENTRY;
    f->group = (int)g;
    f->lo = 0;
    f->hi = (int)nsec;
    f->last_off = 0;
    f->last_pre = -1;
    f->last_rise = -1;
    f->mark = self->top;
    return 0;
}

static i64 align_up(i64 v, i64 a)
{
    return (v + a - 1) / a * a;
}

/* The rise of member j over member i (j may start that far above i's offset), or -1. */
static i64 rise_of(const Tables *t, i64 i, i64 j)
{
    if (i < 0) {
        return -1;
    }
    for (i64 k = t->a[T_RISE_OFF][i]; k < t->a[T_RISE_OFF][i + 1]; k++) {
        if (t->a[T_RISE_J][k] == j) {
            return t->a[T_RISE_R][k];
        }
    }
    return -1;
}

static i64 fit(const Tables *t, i64 j, i64 base)
{
    base = align_up(base, t->align);
    i64 size = t->a[T_SIZE][j];
    for (i64 k = t->a[T_FIX_OFF][j]; k < t->a[T_FIX_OFF][j + 1]; k++) {
        i64 fo = t->a[T_FIX_LO][k], fe = t->a[T_FIX_HI][k];
        if (base < fe && fo < base + size) {
            base = align_up(fe, t->align);
        }
    }
    return base;
}

static int too_high(Run *r, i64 i, i64 o, i64 h)
{
    const Tables *t = r->t;
    const i64 *size = t->a[T_SIZE];
    for (i64 k = t->a[T_OV_OFF][i]; k < t->a[T_OV_OFF][i + 1]; k++) {
        i64 j = t->a[T_BYSIZE][k];
        if (r->placed[j]) {
            continue;
        }
        if (h + size[j] <= r->capacity) {
            return 0;
        }
        i64 rise = rise_of(t, i, j);
        i64 hj = rise >= 0 ? o + rise : h;
        if (r->min_off[j] < hj && hj + size[j] > r->capacity) {
            return 1;
        }
    }
    return 0;
}

static int infeasible(Run *r, Frame *f, i64 h)
{
    const Tables *t = r->t;
    const i64 *secs_off = t->a[T_SECS_OFF], *secs = t->a[T_SECS];
    i64 cap = r->capacity, o = f->o, i = f->i;
    for (i64 k = secs_off[i]; k < secs_off[i + 1]; k++) {
        if (h + r->rem[secs[k]] > cap) {
            return 1;
        }
    }
    r->work += (f->nchanges * t->spb) >> 5;
    r->stamp++;
    const i64 *changes = r->scratch + f->changes;
    for (i64 c = 0; c < f->nchanges; c++) {
        i64 j = changes[2 * c];
        i64 mo = r->min_off[j];
        for (i64 k = secs_off[j]; k < secs_off[j + 1]; k++) {
            i64 s = secs[k];
            i64 room = cap - r->rem[s];
            if (mo > room && r->checked[s] != r->stamp) {
                r->checked[s] = r->stamp;
                if (r->floor[s] > room || o > room) {
                    return 1;
                }
                i64 lowest = UNREACHABLE + 1;
                for (i64 q = t->a[T_SEC_OFF][s]; q < t->a[T_SEC_OFF][s + 1]; q++) {
                    i64 v = r->min_off[t->a[T_SEC][q]];
                    lowest = v < lowest ? v : lowest;
                }
                if (lowest > room) {
                    return 1;
                }
            }
        }
    }
    for (i64 q = 0; q < r->nfixed_secs; q++) {
        i64 s = r->fixed_secs[q];
        if (s < f->lo || s >= f->hi) {
            continue;
        }
        i64 fl = r->floor[s] > o ? r->floor[s] : o;
        i64 above = 0;
        for (i64 k = t->a[T_SFIX_OFF][s]; k < t->a[T_SFIX_OFF][s + 1]; k++) {
            i64 fo = t->a[T_SFIX_LO][k], fe = t->a[T_SFIX_HI][k];
            if (fe > fl) {
                above += fe - (fo > fl ? fo : fl);
            }
        }
        if (fl + r->rem[s] + above > cap) {
            return 1;
        }
    }
    return 0;
}

static i64 max_rem(const Run *r, i64 lo, i64 hi)
{
    i64 best = r->rem[lo];
    for (i64 s = lo + 1; s < hi; s++) {
        best = r->rem[s] > best ? r->rem[s] : best;
    }
    return best;
}

/* rem's maxima over [lo, s) and over [s, hi) for each s, at the frame's entry: a candidate
 * changes rem only in its own sections (consecutive), and undoes that before the next. */
static void prefix_maxima(Run *r, const Frame *f)
{
    i64 n = f->hi - f->lo;
    i64 *below = r->scratch + f->outside, *above = below + n + 1;
    below[0] = INT64_MIN;
    for (i64 k = 0; k < n; k++) {
        i64 v = r->rem[f->lo + k];
        below[k + 1] = v > below[k] ? v : below[k];
    }
    above[n] = INT64_MIN;
    for (i64 k = n - 1; k >= 0; k--) {
        i64 v = r->rem[f->lo + k];
        above[k] = v > above[k + 1] ? v : above[k + 1];
    }
}

/* max(rem[lo:hi]) with candidate i's sections already lowered: the sections outside them from
 * the entry's maxima, its own read. The same value as max_rem(), in |sections of i| steps. */
static i64 max_rem_after(const Run *r, const Frame *f, i64 i)
{
    const Tables *t = r->t;
    i64 n = f->hi - f->lo;
    const i64 *below = r->scratch + f->outside, *above = below + n + 1;
    i64 first = t->a[T_SECS][t->a[T_SECS_OFF][i]];
    i64 last = t->a[T_SECS][t->a[T_SECS_OFF][i + 1] - 1];
    i64 best = below[first - f->lo] > above[last + 1 - f->lo] ? below[first - f->lo]
                                                                : above[last + 1 - f->lo];
    for (i64 s = first; s <= last; s++) {
        best = r->rem[s] > best ? r->rem[s] : best;
    }
    return best;
}

static int cmp_cands(const void *a, const void *b)
{
    const i64 *x = a, *y = b;
    for (int k = 0; k < 3; k++) {
        if (x[k] != y[k]) {
            return x[k] < y[k] ? -1 : 1;
        }
    }
    return 0;
}

static i64 g_ncols; /* qsort has no context argument: the key length of the rerank running */

static int cmp_keys(const void *a, const void *b)
{
    const i64 *x = a, *y = b;
    for (i64 k = 0; k <= g_ncols; k++) { /* negated key columns, then the member */
        if (x[k] != y[k]) {
            return x[k] < y[k] ? -1 : 1;
        }
    }
    return 0;
}

/* search.py's rerank: rank the group afresh; old ranks saved as (member, rank) pairs. */
static int rerank(Run *r, Frame *f, const Group *g, int *err)
{
    const Tables *t = r->t;
    i64 n = g->count, w = r->ncols + 1;
    r->work += n >> 1;
    f->saved = alloc_scratch(r, (size_t)(2 * n), err);
    if (*err) {
        return -1;
    }
    f->nsaved = n;
    i64 *keys = r->keybuf;
    for (i64 q = 0; q < n; q++) {
        i64 k = r->scratch[g->base + (size_t)q];
        r->scratch[f->saved + (size_t)(2 * q)] = k;
        r->scratch[f->saved + (size_t)(2 * q + 1)] = r->pre[k];
        for (i64 c = 0; c < r->ncols; c++) {
            i64 v;
            if (r->cols[c]) {
                v = r->cols[c][k];
            } else {
                v = -UNREACHABLE;
                for (i64 s = t->a[T_SECS_OFF][k]; s < t->a[T_SECS_OFF][k + 1]; s++) {
                    i64 x = r->rem[t->a[T_SECS][s]];
                    v = x > v ? x : v;
                }
            }
            keys[q * w + c] = -v;
        }
        keys[q * w + r->ncols] = k;
    }
    g_ncols = r->ncols;
    qsort(keys, (size_t)n, sizeof(i64) * (size_t)w, cmp_keys);
    for (i64 q = 0; q < n; q++) {
        r->pre[keys[q * w + r->ncols]] = q;
    }
    return 0;
}

static void pop_frame(Run *r, i64 result)
{
    Frame *f = &r->frames[r->nframes - 1];
    r->top = f->mark;
    if (f->kind == F_SPLIT) {
        r->ngroups = f->first_group;
    }
    r->nframes--;
    r->ret = result;
}

static Frame *push_dfs(Run *r, int group, int lo, int hi, i64 last_off, i64 last_pre,
                       i64 last_rise, int *err)
{
    Frame *f = push_frame(r, err);
    if (!f) {
        return NULL;
    }
    f->kind = F_DFS;
    f->phase = P_ENTRY;
    f->group = group;
    f->lo = lo;
    f->hi = hi;
    f->last_off = last_off;
    f->last_pre = last_pre;
    f->last_rise = last_rise;
    return f;
}

/* One dfs frame's work until it pushes a child, pauses or pops. Returns 1 to pause. */
static int step_dfs(Run *r, i64 stop, int *err)
{
    Frame *f = &r->frames[r->nframes - 1];
    const Tables *t = r->t;
    const i64 *size = t->a[T_SIZE], *secs_off = t->a[T_SECS_OFF], *secs = t->a[T_SECS];
    Group *g = &r->groups[f->group];
    i64 cap = r->capacity;
    switch (f->phase) {
    case P_ENTRY:
        r->work += 1;
        f->phase = P_CHECKED;
        if (r->work >= stop) {
            return 1;
        }
        /* fall through */
    case P_CHECKED: {
        if (g->count == 0) {
            pop_frame(r, 1);
            return 0;
        }
        const i64 *mem = r->scratch + g->base;
        i64 min_height = INT64_MAX;
        for (i64 q = 0; q < g->count; q++) {
            i64 k = mem[q];
            i64 hk = r->min_off[k] + size[k];
            min_height = hk < min_height ? hk : min_height;
        }
        f->cands = alloc_scratch(r, (size_t)(3 * g->count), err);
        if (*err) {
            return 0;
        }
        g = &r->groups[f->group];
        mem = r->scratch + g->base;
        i64 *c = r->scratch + f->cands;
        i64 n = 0;
        for (i64 q = 0; q < g->count; q++) {
            i64 k = mem[q];
            i64 o = r->min_off[k];
            if (o >= min_height || o < f->last_off) {
                continue;
            }
            if (o == f->last_off && r->pre[k] < f->last_pre && rise_of(t, f->last_rise, k) < 0) {
                continue;
            }
            c[3 * n] = o;
            c[3 * n + 1] = r->pre[k];
            c[3 * n + 2] = k;
            n++;
        }
        qsort(c, (size_t)n, 3 * sizeof(i64), cmp_cands);
        f->ncands = n;
        f->ci = 0;
        r->work += 3 + 2 * n + (g->count >> 2) + ((f->hi - f->lo) >> 3);
        f->max_rem = max_rem(r, f->lo, f->hi);
        f->outside = alloc_scratch(r, (size_t)(2 * (f->hi - f->lo + 1)), err);
        if (*err) {
            return 0;
        }
        prefix_maxima(r, f);
        f->after_cands = r->top;
        f->phase = P_NEXT;
    }
        /* fall through */
    case P_NEXT:
        while (f->ci < f->ncands) {
            const i64 *c = r->scratch + f->cands + 3 * f->ci;
            i64 o = c[0], p = c[1], i = c[2];
            f->ci++;
            i64 h = o + size[i];
            if (too_high(r, i, o, h)) {
                continue;
            }
            for (i64 k = secs_off[i]; k < secs_off[i + 1]; k++) {
                r->rem[secs[k]] -= size[i];
            }
            if (o + f->max_rem > cap && o + max_rem_after(r, f, i) > cap) {
                for (i64 k = secs_off[i]; k < secs_off[i + 1]; k++) {
                    r->rem[secs[k]] += size[i];
                }
                continue;
            }
            f->i = i;
            f->o = o;
            f->p = p;
            r->top = f->after_cands;
            i64 nsecs = secs_off[i + 1] - secs_off[i];
            i64 nov = t->a[T_OV_OFF][i + 1] - t->a[T_OV_OFF][i];
            f->floors = alloc_scratch(r, (size_t)nsecs, err);
            f->changes = *err ? 0 : alloc_scratch(r, (size_t)(2 * nov), err);
            if (*err) {
                return 0;
            }
            g = &r->groups[f->group];
            i64 *mem = r->scratch + g->base;
            for (i64 q = 0; q < g->count; q++) { /* i to the end, out of the group */
                if (mem[q] == i) {
                    mem[q] = mem[g->count - 1];
                    mem[g->count - 1] = i;
                    break;
                }
            }
            g->count--;
            r->placed[i] = 1;
            r->offset[i] = o;
            r->min_off[i] = UNREACHABLE;
            i64 *floors = r->scratch + f->floors;
            for (i64 k = 0; k < nsecs; k++) {
                i64 s = secs[secs_off[i] + k];
                floors[k] = r->floor[s];
                r->floor[s] = h;
            }
            i64 *changes = r->scratch + f->changes;
            f->nchanges = 0;
            f->hatless = 1;
            for (i64 k = t->a[T_OV_OFF][i]; k < t->a[T_OV_OFF][i + 1]; k++) {
                i64 j = t->a[T_OV][k];
                if (r->placed[j]) {
                    continue;
                }
                f->hatless = 0;
                i64 rise = rise_of(t, i, j);
                i64 hj = rise >= 0 ? o + rise : h;
                if (r->min_off[j] < hj) {
                    changes[2 * f->nchanges] = j;
                    changes[2 * f->nchanges + 1] = r->min_off[j];
                    f->nchanges++;
                    r->min_off[j] = t->a[T_FIX_OFF][j + 1] > t->a[T_FIX_OFF][j]
                                        ? fit(t, j, hj)
                                        : align_up(hj, t->align);
                }
            }
            f->found = 0;
            f->tried_child = 0;
            if (!infeasible(r, f, h)) {
                f->tried_child = 1;
                i64 first = secs[secs_off[i]], last = secs[secs_off[i + 1] - 1];
                size_t cuts = alloc_scratch(r, (size_t)(last - first + 2), err);
                if (*err) {
                    return 0;
                }
                i64 ncuts = 0;
                i64 *cb = r->scratch + cuts;
                cb[0] = f->lo;
                for (i64 s = first; s < last; s++) {
                    r->cut[s]--;
                    if (!r->cut[s] && g->count) {
                        cb[1 + ncuts++] = s + 1;
                    }
                }
                f->phase = P_RETURN;
                if (ncuts) {
                    cb[1 + ncuts] = f->hi;
                    int lo = f->lo, hi = f->hi, group = f->group;
                    Frame *s = push_frame(r, err);
                    if (!s) {
                        return 0;
                    }
                    s->kind = F_SPLIT;
                    s->phase = P_PART;
                    s->group = group;
                    s->lo = lo;
                    s->hi = hi;
                    s->bounds = cuts;
                    s->nparts = ncuts + 1;
                    s->first_group = -1;
                } else {
                    push_dfs(r, f->group, f->lo, f->hi, o, p, i, err);
                }
                return 0;
            }
            goto undo;
        }
        pop_frame(r, 0);
        return 0;
    case P_RETURN: {
        f->found = r->ret;
        i64 i = f->i;
        for (i64 s = secs[secs_off[i]]; s < secs[secs_off[i + 1] - 1]; s++) {
            r->cut[s]++;
        }
        goto undo;
    }
    default:
        return 0;
    }
undo: {
    i64 i = f->i;
    i64 nsecs = secs_off[i + 1] - secs_off[i];
    const i64 *floors = r->scratch + f->floors;
    for (i64 k = 0; k < nsecs; k++) {
        i64 s = secs[secs_off[i] + k];
        r->rem[s] += size[i];
        r->floor[s] = floors[k];
    }
    const i64 *changes = r->scratch + f->changes;
    for (i64 c = 0; c < f->nchanges; c++) {
        r->min_off[changes[2 * c]] = changes[2 * c + 1];
    }
    r->placed[i] = 0;
    r->min_off[i] = f->o;
    r->groups[f->group].count++;
    r->top = f->after_cands;
    if (f->found) {
        pop_frame(r, 1);
    } else if (f->hatless) {
        pop_frame(r, 0);
    } else {
        f->phase = P_NEXT;
    }
    return 0;
}
}

static int bisect_right(const i64 *a, i64 n, i64 x)
{
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) / 2;
        if (x < a[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return (int)lo;
}

static void step_split(Run *r, int *err)
{
    Frame *f = &r->frames[r->nframes - 1];
    const Tables *t = r->t;
    if (f->first_group < 0) { /* entry: the group's members into one group per part */
        i64 nb = f->nparts + 1;
        Group parent = r->groups[f->group];
        f->first_group = r->ngroups;
        size_t counts = alloc_scratch(r, (size_t)f->nparts, err);
        size_t part_of = *err ? 0 : alloc_scratch(r, (size_t)parent.count, err);
        if (*err) {
            return;
        }
        i64 *cnt = r->scratch + counts;
        for (i64 p = 0; p < f->nparts; p++) {
            cnt[p] = 0;
        }
        for (i64 q = 0; q < parent.count; q++) {
            i64 k = r->scratch[parent.base + (size_t)q];
            i64 p = bisect_right(r->scratch + f->bounds, nb,
                                 t->a[T_SECS][t->a[T_SECS_OFF][k]]) - 1;
            r->scratch[part_of + (size_t)q] = p;
            r->scratch[counts + (size_t)p]++;
        }
        for (i64 p = 0; p < f->nparts; p++) {
            i64 n = r->scratch[counts + (size_t)p];
            size_t base = alloc_scratch(r, (size_t)n, err);
            if (*err || push_group(r, base, 0, err) < 0) {
                return;
            }
        }
        for (i64 q = 0; q < parent.count; q++) {
            i64 k = r->scratch[parent.base + (size_t)q];
            Group *g = &r->groups[f->first_group + r->scratch[part_of + (size_t)q]];
            r->scratch[g->base + (size_t)g->count++] = k;
        }
        r->work += parent.count >> 2;
        f->pi = 0;
        f->phase = P_PART;
    } else if (f->phase == P_PART_DONE) {
        for (i64 q = 0; q < f->nsaved; q++) {
            r->pre[r->scratch[f->saved + (size_t)(2 * q)]] =
                r->scratch[f->saved + (size_t)(2 * q + 1)];
        }
        f->nsaved = 0;
        if (!r->ret) {
            pop_frame(r, 0);
            return;
        }
        f->pi++;
    }
    while (f->pi < f->nparts && r->groups[f->first_group + f->pi].count == 0) {
        f->pi++;
    }
    if (f->pi >= f->nparts) {
        pop_frame(r, 1);
        return;
    }
    int gi = (int)(f->first_group + f->pi);
    if (r->dynamic && rerank(r, f, &r->groups[gi], err) < 0) {
        return;
    }
    f->phase = P_PART_DONE;
    const i64 *b = r->scratch + f->bounds;
    push_dfs(r, gi, (int)b[f->pi], (int)b[f->pi + 1], 0, -1, -1, err);
}

/* step(work, stop) -> (status, work): runs until a node's entry counts work >= stop (status
 * 0, paused there), or the run ends: 1 = a placement found (offsets()), 2 = none exists. */
static PyObject *run_step(Run *self, PyObject *args)
{
    i64 stop;
    if (!PyArg_ParseTuple(args, "LL", &self->work, &stop)) {
        return NULL;
    }
    int err = 0;
    while (!self->state) {
        if (self->nframes == 0) {
            self->state = self->ret ? 1 : 2;
            break;
        }
        Frame *f = &self->frames[self->nframes - 1];
        if (f->kind == F_DFS) {
            if (step_dfs(self, stop, &err)) {
                return Py_BuildValue("iL", 0, self->work);
            }
        } else {
            step_split(self, &err);
        }
        if (err) {
            return PyErr_NoMemory();
        }
    }
    return Py_BuildValue("LL", self->state, self->work);
}

static PyObject *run_offsets(Run *self, PyObject *unused)
{
    (void)unused;
    PyObject *out = PyList_New((Py_ssize_t)self->t->m);
    if (!out) {
        return NULL;
    }
    for (i64 k = 0; k < self->t->m; k++) {
        PyObject *v = PyLong_FromLongLong(self->offset[k]);
        if (!v) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)k, v);
    }
    return out;
}

static PyMethodDef run_methods[] = {
    {"step", (PyCFunction)run_step, METH_VARARGS, "Run until work >= stop or the end."},
    {"offsets", (PyCFunction)run_offsets, METH_NOARGS, "Each member's offset."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RunType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_search_core.Run",
    .tp_basicsize = sizeof(Run),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)run_init,
    .tp_dealloc = (destructor)run_dealloc,
    .tp_methods = run_methods,
    .tp_doc = "One resumable depth-first run of search.py's search.",
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "_search_core", "The compiled core of search.py's depth-first run.",
    -1, NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__search_core(void)
{
    if (PyType_Ready(&TablesType) < 0 || PyType_Ready(&RunType) < 0) {
        return NULL;
    }
    PyObject *mod = PyModule_Create(&core_module);
    if (!mod) {
        return NULL;
    }
    Py_INCREF(&TablesType);
    Py_INCREF(&RunType);
    if (PyModule_AddObject(mod, "Tables", (PyObject *)&TablesType) < 0 ||
        PyModule_AddObject(mod, "Run", (PyObject *)&RunType) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
