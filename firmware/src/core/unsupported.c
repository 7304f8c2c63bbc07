/* The list of operators the runtime cannot run, built at open in the caller's message buffer
 * (no heap): every refusal is listed, entries separated by "; ", and identical refusals
 * (same operator, same reason, other positions) merged into one entry that counts them:
 *   "CONV_2D prepare (5 operators, the first subgraph 0, operator 0) failed: CONV_2D: ..."
 * so a model with many identical layers reads in one line and leaves room for the others. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Room kept at the end of the caller's buffer for the list's summary. */
#define LIST_RESERVE 40

static const char POSITION[] = "subgraph ";
static const char MERGED[] = " operators, the first ";

static char *msg_base(const ma_interp *it) { return it->msg != NULL ? it->msg - it->msg_shift : NULL; }

static uint16_t count_up(uint16_t n) { return n < UINT16_MAX ? (uint16_t)(n + 1) : n; }

/* Where an entry names its position: [start, end) covers "subgraph S, operator K" and, in a
 * merged entry, the "N operators, the first " before it; `at` is where "subgraph" starts.
 * False when the entry names no position (then it is never merged). */
typedef struct {
  size_t start, at, end;
  unsigned count;
} position;

static bool find_position(const char *e, size_t len, position *p) {
  const size_t n = sizeof POSITION - 1, m = sizeof MERGED - 1;
  size_t at = 0;
  while (at + n <= len && memcmp(e + at, POSITION, n) != 0) at++;
  if (at + n > len) return false;
  size_t end = at;
  while (end < len && e[end] != ')') end++;
  if (end == len) return false;
  p->start = p->at = at;
  p->end = end;
  p->count = 1;
  if (at >= m && memcmp(e + at - m, MERGED, m) == 0) {
    size_t d = at - m;
    unsigned count = 0, scale = 1;
    while (d > 0 && e[d - 1] >= '0' && e[d - 1] <= '9' && scale <= 10000) {
      count += (unsigned)(e[d - 1] - '0') * scale;
      scale *= 10;
      d--;
    }
    if (d < at - m) {
      p->start = d;
      p->count = count;
    }
  }
  return true;
}

/* The same refusal: equal text outside the positions. */
static bool same_refusal(const char *a, size_t alen, const position *pa, const char *b,
                         size_t blen, const position *pb) {
  return pa->start == pb->start && alen - pa->end == blen - pb->end &&
         memcmp(a, b, pa->start) == 0 && memcmp(a + pa->end, b + pb->end, alen - pa->end) == 0;
}

/* Merges the new entry `e` into an identical one of the list base[0, *list_len): rewrites that
 * entry's count in place (the list may grow by a few bytes, up to `limit`). False when no
 * entry matches or the count does not fit; the caller then lists `e` as usual. */
static bool merge_entry(char *base, size_t *list_len, size_t limit, const char *e, size_t elen) {
  position pe;
  if (!find_position(e, elen, &pe)) return false;
  for (size_t off = 0; off < *list_len;) {
    const char *sep = strstr(base + off, "; ");
    size_t len = sep != NULL && (size_t)(sep - base) < *list_len ? (size_t)(sep - base) - off
                                                                 : *list_len - off;
    position p;
    if (find_position(base + off, len, &p) && same_refusal(base + off, len, &p, e, elen, &pe)) {
      char count[24];
      int n = snprintf(count, sizeof count, "%u", p.count + 1);
      size_t prefix = (size_t)n + sizeof MERGED - 1, old = p.at - p.start;
      if (*list_len + prefix - old > limit) return false;
      char *tail = base + off + p.at;
      memmove(tail + prefix - old, tail, *list_len - (off + p.at));
      memcpy(base + off + p.start, count, (size_t)n);
      memcpy(base + off + p.start + (size_t)n, MERGED, sizeof MERGED - 1);
      *list_len += prefix - old;
      base[*list_len] = 0;
      return true;
    }
    off += len + 2;
  }
  return false;
}

/* Points msg past the list of `used` bytes for the next entry; false when no room is left. */
static bool next_entry(ma_interp *it, char *base, size_t used) {
  size_t start = used + 2;
  if (start + LIST_RESERVE + 16 > it->msg_total) { /* full: later ones counted, not named */
    it->msg = base + used;
    it->msg_shift = (uint16_t)used;
    it->msg_size = 0;
    return false;
  }
  it->msg = base + start;
  it->msg_shift = (uint16_t)start;
  it->msg_size = it->msg_total - start - LIST_RESERVE;
  it->msg[0] = 0;
  return true;
}

void ma_list_unsupported(ma_interp *it) {
  char *base = msg_base(it);
  it->n_unsupported = count_up(it->n_unsupported);
  if (base == NULL || it->msg_size == 0) {
    it->n_unlisted = count_up(it->n_unlisted);
    return;
  }
  size_t elen = strlen(it->msg);
  if (elen + 1 >= it->msg_size && it->msg_shift > 0) {
    /* Cut off by the room left: counted, never shown half (the list ends at the last whole
     * entry, and later ones are counted too). */
    it->n_unlisted = count_up(it->n_unlisted);
    size_t list_len = (size_t)it->msg_shift - 2;
    base[list_len] = 0;
    it->msg = base + list_len;
    it->msg_shift = (uint16_t)list_len;
    it->msg_size = 0;
    return;
  }
  if (it->msg_shift > 0) {
    size_t list_len = (size_t)it->msg_shift - 2;
    size_t limit = it->msg_total - LIST_RESERVE - 16 - 2;
    if (merge_entry(base, &list_len, limit, it->msg, elen)) {
      next_entry(it, base, list_len);
      return;
    }
    base[it->msg_shift - 2] = ';'; /* "; " before every entry but the first */
    base[it->msg_shift - 1] = ' ';
  }
  next_entry(it, base, it->msg_shift + elen); /* the list, this operator's entry included */
}

ma_status ma_unsupported_result(ma_interp *it, ma_status st) {
  if (it->n_unsupported == 0) return st;
  char *base = msg_base(it);
  if (base == NULL) return MA_ERR_UNSUPPORTED;
  size_t total = it->msg_total;
  size_t used = it->msg_size > 0 ? (size_t)it->msg_shift - 2 : it->msg_shift;
  it->msg = base;
  it->msg_size = total;
  it->msg_shift = 0;
  base[used] = 0; /* drops whatever failed after the list */
  if (it->n_unlisted > 0) {
    snprintf(base + used, total - used, "; and %u more", (unsigned)it->n_unlisted);
  }
  if (it->n_unsupported > 1) {
    char head[40];
    int n = snprintf(head, sizeof head, "%u operators unsupported: ", (unsigned)it->n_unsupported);
    size_t len = strlen(base), shift = (size_t)n;
    if (shift < total) {
      if (len + shift >= total) len = total - shift - 1;
      memmove(base + shift, base, len);
      memcpy(base, head, shift);
      base[len + shift] = 0;
    }
  }
  return MA_ERR_UNSUPPORTED;
}
