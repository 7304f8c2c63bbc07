/* Bounds-checked flatbuffer reading (see fb.h). */
#include "fb.h"

#include <string.h>

uint32_t fb_u32_at(const fb_rd *rd, uint32_t pos) {
  uint32_t v;
  memcpy(&v, rd->buf + pos, 4); /* flatbuffers are little-endian, like every target here */
  return v;
}

static uint16_t u16_at(const fb_rd *rd, uint32_t pos) {
  uint16_t v;
  memcpy(&v, rd->buf + pos, 2);
  return v;
}

static fb_tab fail_tab(fb_rd *rd) {
  fb_tab t = {0, 0, 0, 0};
  rd->bad = 1;
  return t;
}

fb_tab fb_table_at(fb_rd *rd, uint32_t pos) {
  fb_tab t = {0, 0, 0, 0};
  if (rd->bad) return t;
  /* pos 0 is the root offset, never a table; tables are 4-aligned. */
  if (pos == 0 || (pos & 3u) != 0 || (uint64_t)pos + 4 > rd->size) return fail_tab(rd);
  int32_t soff;
  memcpy(&soff, rd->buf + pos, 4);
  int64_t vt = (int64_t)pos - (int64_t)soff;
  if (vt < 0 || (vt & 1) != 0 || vt + 4 > (int64_t)rd->size) return fail_tab(rd);
  t.vt = (uint32_t)vt;
  t.vt_len = u16_at(rd, t.vt);
  t.tab_len = u16_at(rd, t.vt + 2);
  if (t.vt_len < 4 || (t.vt_len & 1) != 0 || (uint64_t)t.vt + t.vt_len > rd->size ||
      t.tab_len < 4 || (uint64_t)pos + t.tab_len > rd->size) {
    return fail_tab(rd);
  }
  t.pos = pos;
  return t;
}

fb_tab fb_root(fb_rd *rd) {
  if (rd->size < 8) return fail_tab(rd);
  return fb_table_at(rd, fb_u32_at(rd, 0));
}

/* Position of a field's inline value, 0 when absent; checks it lies inside the table. */
static uint32_t field(fb_rd *rd, const fb_tab *t, int slot, uint32_t width) {
  if (rd->bad || t->pos == 0) return 0;
  uint32_t vo = 4u + 2u * (uint32_t)slot;
  if (vo + 2 > t->vt_len) return 0;
  uint16_t fo = u16_at(rd, t->vt + vo);
  if (fo == 0) return 0;
  if ((uint32_t)fo + width > t->tab_len || fo < 4) {
    rd->bad = 1;
    return 0;
  }
  return t->pos + fo;
}

int64_t fb_int(fb_rd *rd, const fb_tab *t, int slot, uint32_t width, int is_signed, int64_t dflt) {
  uint32_t p = field(rd, t, slot, width);
  if (p == 0) return dflt;
  const uint8_t *b = rd->buf + p;
  switch (width) {
    case 1: return is_signed ? (int64_t)(int8_t)b[0] : (int64_t)b[0];
    case 2: {
      uint16_t v = u16_at(rd, p);
      return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
      uint32_t v = fb_u32_at(rd, p);
      return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default: {
      int64_t v;
      memcpy(&v, b, 8);
      return v;
    }
  }
}

/* Follows a uoffset stored at `p` and returns the target position, 0 on failure. */
static uint32_t follow(fb_rd *rd, uint32_t p) {
  uint64_t target = (uint64_t)p + fb_u32_at(rd, p);
  if (target + 4 > rd->size) {
    rd->bad = 1;
    return 0;
  }
  return (uint32_t)target;
}

fb_tab fb_subtable(fb_rd *rd, const fb_tab *t, int slot) {
  fb_tab none = {0, 0, 0, 0};
  uint32_t p = field(rd, t, slot, 4);
  if (p == 0) return none;
  uint32_t target = follow(rd, p);
  if (target == 0) return none;
  return fb_table_at(rd, target);
}

fb_vec fb_vector(fb_rd *rd, const fb_tab *t, int slot, uint32_t elem_size) {
  fb_vec v = {0, 0};
  uint32_t p = field(rd, t, slot, 4);
  if (p == 0) return v;
  uint32_t vp = follow(rd, p);
  if (vp == 0) return v;
  uint32_t align = elem_size < 4 ? 4 : (elem_size > 8 ? 8 : elem_size);
  uint32_t len = fb_u32_at(rd, vp);
  uint32_t first = vp + 4;
  if ((vp & 3u) != 0 || (first & (align - 1)) != 0 ||
      (uint64_t)len * elem_size > (uint64_t)(rd->size - first)) {
    rd->bad = 1;
    return v;
  }
  v.pos = first;
  v.len = len;
  return v;
}

fb_tab fb_vec_table(fb_rd *rd, fb_vec v, uint32_t i) {
  fb_tab none = {0, 0, 0, 0};
  if (rd->bad || i >= v.len) {
    rd->bad = 1;
    return none;
  }
  uint32_t target = follow(rd, v.pos + 4 * i);
  if (target == 0) return none;
  return fb_table_at(rd, target);
}

int32_t fb_vec_i32(const fb_rd *rd, fb_vec v, uint32_t i) {
  return (int32_t)fb_u32_at(rd, v.pos + 4 * i);
}

const char *fb_string(fb_rd *rd, const fb_tab *t, int slot, uint32_t *len) {
  fb_vec v = fb_vector(rd, t, slot, 1);
  *len = v.len;
  if (v.pos == 0) return NULL;
  return (const char *)rd->buf + v.pos;
}
