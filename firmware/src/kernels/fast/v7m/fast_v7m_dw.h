/* fast_depthwise_s8.c's steps (fast/fast_dw_steps.h names them) on Armv7-M without the DSP
 * extension (the M3): each row's taps in assembly (fast_v7m_dw_rows.h), each byte taken out of
 * a loaded word by SBFX (or ASR for the top one) and multiplied by MLA, the input offset added
 * as one int32; the other steps the portable forms. */
#ifndef MA_FAST_V7M_DW_H
#define MA_FAST_V7M_DW_H

/* Multiplier 1, one tap: four inputs plus the offset times four weights into the four sums. */
#define DW_LANE(K, A)                             \
  "sbfx %[xe], %[x], #" K ", #8\n\t"              \
  "add %[xe], %[xe], %[off2]\n\t"                \
  "sbfx %[we], %[w], #" K ", #8\n\t"              \
  "mla %[" A "], %[xe], %[we], %[" A "]\n\t"
#define DW_TAP(IN, F)                 \
  "ldr %[x], " IN "\n\t"              \
  "ldr %[w], " F "\n\t"               \
  DW_LANE("0", "a0") DW_LANE("8", "a1") DW_LANE("16", "a2") \
  "asr %[x], %[x], #24\n\t"           \
  "add %[x], %[x], %[off2]\n\t"       \
  "asr %[w], %[w], #24\n\t"           \
  "mla %[a3], %[x], %[w], %[a3]\n\t"
/* Multiplier 4k, one tap: one input plus the offset times four weights into the four sums. */
#define DW_BTAP(IN, F)                         \
  "ldrsb %[x], " IN "\n\t"                     \
  "ldr %[w], " F "\n\t"                        \
  "add %[x], %[x], %[off]\n\t"                 \
  "sbfx %[we], %[w], #0, #8\n\t"               \
  "mla %[a0], %[x], %[we], %[a0]\n\t"          \
  "sbfx %[we], %[w], #8, #8\n\t"               \
  "mla %[a1], %[x], %[we], %[a1]\n\t"          \
  "sbfx %[we], %[w], #16, #8\n\t"              \
  "mla %[a2], %[x], %[we], %[a2]\n\t"          \
  "asr %[w], %[w], #24\n\t"                    \
  "mla %[a3], %[x], %[w], %[a3]\n\t"
#define DW_OFF2_T int32_t
#define DW_OFF2(off) (off)
#include "fast/v7m/fast_v7m_dw_rows.h" /* sums_quad, sums_bcast */
#undef DW_LANE

#define DW_TAPS_NOINLINE
#define DW_TAP4 DW_TAP4_WORDS
#define DW_SHARED_ANY_WIDTH 0
#define DW_RUNS 0

#endif
