/* shape_ops.c's copy_run on Helium (it includes this in place of its word loop): n bytes
 * between buffers that do not overlap, 16 bytes per predicated step. */
#ifndef MA_FAST_MVE_COPY_H
#define MA_FAST_MVE_COPY_H

#include <arm_mve.h>
#include <stddef.h>
#include <stdint.h>

static inline void copy_run(uint8_t *dst, const uint8_t *src, size_t n) {
  for (size_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q((uint32_t)(n - i));
    vstrbq_p_u8(dst + i, vldrbq_z_u8(src + i, p), p);
  }
}

#endif
