/* fast_depthwise_s8.c's steps (fast/fast_dw_steps.h names them) on the host and any core
 * without a folder under fast/: every one the portable C form, so that the conformance suite
 * checks those loops. */
#ifndef MA_FAST_DW_PORTABLE_H
#define MA_FAST_DW_PORTABLE_H

#define DW_TAPS_NOINLINE
#define DW_SUMS_NOINLINE
#define DW_TAP4 DW_TAP4_WORDS
#define DW_SHARED_ANY_WIDTH 0
#define DW_RUNS 0

#endif
