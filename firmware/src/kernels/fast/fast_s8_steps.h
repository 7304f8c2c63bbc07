/* The one dispatch point of fast_s8.c's steps: the architecture's header, chosen by fast/arch.h's
 * macros, and the blocking choices that follow from it. Each header defines the steps it has
 * a form of its own for and says so with S8_HAS_<STEP>; fast_s8.c's portable C forms (what the
 * host and a CPU without a folder build) stand in for the others. The headers are included
 * into fast_s8.c's unit, so that the compiler sees each step where it is called.
 *   FAST_PAIRS  pixel and batch pairs run (rows2, the 2 x 2 block of two pixels x two
 *               channels), not on Armv6-M, whose eight low registers do not hold the block's
 *               pointers, inputs and weights (dot4 takes every pixel there).
 *   FAST_ONE_RUN conv_pixel copies a window of several runs into one (conv_groups_copied the
 *               windows of all groups of a grouped convolution), so that a block of channels
 *               costs one call of the architecture's dot4, and takes the pair of channels
 *               past the blocks of four with its dot2: where a call per run costs more than
 *               the copy (Armv6-M's byte loops).
 * Included by fast_s8.c only, after the types its steps take (rows_job, run). */
#ifndef MA_FAST_S8_STEPS_H
#define MA_FAST_S8_STEPS_H

#if FAST_V6M
#include "fast/v6m/fast_v6m_s8.h"
#define FAST_PAIRS 0
#define FAST_ONE_RUN 1
#else
#define FAST_PAIRS 1
#define FAST_ONE_RUN 0
#endif

#endif
