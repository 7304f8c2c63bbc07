/* The C forms of the core steps the DSP extension does in an instruction or two
 * (fast/dsp/fast_dsp_core.h): four int8 lanes taken out of a word and multiplied one by one,
 * and a saturating add. The host builds them (the conformance suite checks them there), and so
 * do the cores without the DSP extension (fast/v7m/, fast/v6m/) and any core without a folder.
 * Included through fast/fast_core_steps.h. */
#ifndef MA_FAST_CORE_PORTABLE_H
#define MA_FAST_CORE_PORTABLE_H

typedef struct {
  int32_t v[4];
} quad;

static inline int32_t lane(uint32_t v, int k) { return (int8_t)(uint8_t)(v >> (8 * k)); }

static inline quad quad_in(uint32_t v, int32_t off) {
  const quad q = {{lane(v, 0) + off, lane(v, 1) + off, lane(v, 2) + off, lane(v, 3) + off}};
  return q;
}

static inline int32_t quad_dot(int32_t acc, quad x, uint32_t w) {
  for (int k = 0; k < 4; ++k) acc = wrap_mac(acc, lane(w, k), x.v[k]);
  return acc;
}

static inline acc4 quad_mac(acc4 a, quad x, uint32_t w) {
  a.v0 = wrap_mac(a.v0, lane(w, 0), x.v[0]);
  a.v1 = wrap_mac(a.v1, lane(w, 1), x.v[1]);
  a.v2 = wrap_mac(a.v2, lane(w, 2), x.v[2]);
  a.v3 = wrap_mac(a.v3, lane(w, 3), x.v[3]);
  return a;
}

static inline acc4 bcast_mac(acc4 a, int32_t x, uint32_t w) {
  const quad q = {{x, x, x, x}};
  return quad_mac(a, q, w);
}

/* a + b saturated to int32 (mak_add_sat). */
static inline int32_t mak_qadd(int32_t a, int32_t b) { return mak_add_sat(a, b); }

#endif
