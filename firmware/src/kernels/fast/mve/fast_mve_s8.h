/* Helium (M-profile Vector Extension) int8 paths of CONV_2D, DEPTHWISE_CONV_2D and
 * FULLY_CONNECTED, for cores with MVE (Cortex-M55, M85): fast_mve_s8.c.
 *
 * The kernels (conv.c, fully_connected.c) try these before fast_s8.h's entry points, so that
 * the portable paths' frames are not under them; each returns false, having done nothing, when
 * the node is outside what it handles (or the core has no MVE), and the caller goes on with
 * the other paths. Same contract as fast_s8.h: results bit-identical to the reference loops,
 * output pixels written in order, each pixel's (depthwise block's) reads before its first
 * write, so overlap.c's rules hold unchanged. */
#ifndef MA_FAST_MVE_S8_H
#define MA_FAST_MVE_S8_H

#include <stdbool.h>

#include "fast/arch.h"
#include "fast/fast_s8.h"
#include "kernel_util.h"

#if FAST_MVE
bool mak_mve_conv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g);
bool mak_mve_dwconv_s8(const ma_node *node, const mak_conv_data *d, const mak_window_geom *g);
bool mak_mve_fc_s8(const mak_fc_s8_job *fc);
#else
static inline bool mak_mve_conv_s8(const ma_node *node, const mak_conv_data *d,
                                   const mak_window_geom *g) {
  (void)node, (void)d, (void)g;
  return false;
}
static inline bool mak_mve_dwconv_s8(const ma_node *node, const mak_conv_data *d,
                                     const mak_window_geom *g) {
  (void)node, (void)d, (void)g;
  return false;
}
static inline bool mak_mve_fc_s8(const mak_fc_s8_job *fc) {
  (void)fc;
  return false;
}
#endif

#endif
