/* Bounds-checked flatbuffer reading for untrusted models.
 *
 * Every accessor checks offsets against the buffer; a failed check sets rd->bad (sticky)
 * and returns an empty value, so parsing code can read on and test rd->bad once per item.
 * Positions are byte offsets from the buffer start (uint32: flatbuffers are < 2 GiB).
 */
#ifndef MA_FB_H
#define MA_FB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  const uint8_t *buf;
  uint32_t size;
  int bad; /* set on the first out-of-bounds or malformed structure */
} fb_rd;

typedef struct {
  uint32_t pos; /* 0 = absent */
  uint32_t vt;  /* vtable position */
  uint16_t vt_len, tab_len;
} fb_tab;

typedef struct {
  uint32_t pos; /* first element; 0 = absent */
  uint32_t len;
} fb_vec;

uint32_t fb_u32_at(const fb_rd *rd, uint32_t pos); /* caller has checked bounds */
fb_tab fb_table_at(fb_rd *rd, uint32_t pos);
fb_tab fb_root(fb_rd *rd);
int64_t fb_int(fb_rd *rd, const fb_tab *t, int slot, uint32_t width, int is_signed, int64_t dflt);
fb_tab fb_subtable(fb_rd *rd, const fb_tab *t, int slot);
/* elem_size also sets the required alignment of the elements (max 8). */
fb_vec fb_vector(fb_rd *rd, const fb_tab *t, int slot, uint32_t elem_size);
fb_tab fb_vec_table(fb_rd *rd, fb_vec v, uint32_t i);
int32_t fb_vec_i32(const fb_rd *rd, fb_vec v, uint32_t i); /* i < v.len checked by caller */
/* A string field as a pointer + length (not NUL-terminated); NULL when absent. */
const char *fb_string(fb_rd *rd, const fb_tab *t, int slot, uint32_t *len);

/* Unchecked reads (fbt_*) of structures the checked reader above has already verified at load:
 * the same results without the bounds tests, for the accessors that run on every invoke
 * (each operator's tensor descriptors are rebuilt from the model then). Only for fields that
 * load verified: a position that was never checked is undefined behaviour here. */
static inline uint32_t fbt_u32(const uint8_t *buf, uint32_t pos) {
  uint32_t v;
  memcpy(&v, buf + pos, 4);
  return v;
}

static inline uint16_t fbt_u16(const uint8_t *buf, uint32_t pos) {
  uint16_t v;
  memcpy(&v, buf + pos, 2);
  return v;
}

static inline fb_tab fbt_table(const uint8_t *buf, uint32_t pos) {
  fb_tab t;
  t.pos = pos;
  t.vt = pos - fbt_u32(buf, pos); /* the vtable's signed offset, wrapping as verified */
  t.vt_len = fbt_u16(buf, t.vt);
  t.tab_len = fbt_u16(buf, t.vt + 2);
  return t;
}

/* Offset of a field's value from the start of its (present) table, 0 when the field is absent. */
static inline uint32_t fbt_off(const uint8_t *buf, const fb_tab *t, int slot) {
  const uint32_t vo = 4u + 2u * (uint32_t)slot;
  return vo + 2 > t->vt_len ? 0 : fbt_u16(buf, t->vt + vo);
}

static inline fb_vec fbt_vector(const uint8_t *buf, const fb_tab *t, int slot) {
  fb_vec v = {0, 0};
  const uint32_t fo = fbt_off(buf, t, slot);
  if (fo == 0) return v;
  const uint32_t p = t->pos + fo;
  const uint32_t vp = p + fbt_u32(buf, p);
  v.pos = vp + 4;
  v.len = fbt_u32(buf, vp);
  return v;
}

/* A sub-table, pos 0 when absent. */
static inline fb_tab fbt_subtable(const uint8_t *buf, const fb_tab *t, int slot) {
  const uint32_t fo = fbt_off(buf, t, slot);
  if (fo == 0) {
    const fb_tab none = {0, 0, 0, 0};
    return none;
  }
  const uint32_t p = t->pos + fo;
  return fbt_table(buf, p + fbt_u32(buf, p));
}

static inline fb_tab fbt_vec_table(const uint8_t *buf, fb_vec v, uint32_t i) {
  const uint32_t p = v.pos + 4 * i;
  return fbt_table(buf, p + fbt_u32(buf, p));
}

#endif
