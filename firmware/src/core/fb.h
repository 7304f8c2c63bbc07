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
float fb_f32(fb_rd *rd, const fb_tab *t, int slot, float dflt);
fb_tab fb_subtable(fb_rd *rd, const fb_tab *t, int slot);
/* elem_size also sets the required alignment of the elements (max 8). */
fb_vec fb_vector(fb_rd *rd, const fb_tab *t, int slot, uint32_t elem_size);
fb_tab fb_vec_table(fb_rd *rd, fb_vec v, uint32_t i);
int32_t fb_vec_i32(const fb_rd *rd, fb_vec v, uint32_t i); /* i < v.len checked by caller */
/* A string field as a pointer + length (not NUL-terminated); NULL when absent. */
const char *fb_string(fb_rd *rd, const fb_tab *t, int slot, uint32_t *len);

#endif
