/* Helpers shared by the Signal* kernels (TFLM's signal library custom operators). */
#ifndef MA_SIGNAL_UTIL_H
#define MA_SIGNAL_UTIL_H

#include <stdint.h>

#include "ma_kernel.h"

/* Number of bits needed to hold x (0 for 0). */
static inline uint32_t mak_bit_length32(uint32_t x) {
  uint32_t n = 0;
  while (x != 0) {
    x >>= 1;
    n++;
  }
  return n;
}

static inline uint32_t mak_bit_length64(uint64_t x) {
  return (x >> 32) != 0 ? 32 + mak_bit_length32((uint32_t)(x >> 32)) : mak_bit_length32((uint32_t)x);
}

/* The integer custom option `key` (flexbuffer map), which must lie in [lo, hi]. */
ma_status mak_custom_option(struct ma_context *ctx, const ma_node *node, const char *op,
                            const char *key, int64_t lo, int64_t hi, int32_t *value);

/* Fails unless t is present, has `type` and `ndims` dimensions (ndims < 0: any). */
ma_status mak_signal_tensor(struct ma_context *ctx, const char *op, const char *what,
                            const ma_tensor *t, uint8_t type, int32_t ndims);

#endif
