/* The one dispatch point of fast_s8.c's steps: the architecture's header, chosen by fast/arch.h's
 * macros, and the blocking choices that follow from it. Each header defines the steps it has
 * a form of its own for and says so with S8_HAS_<STEP> (dot4, dot1, mac2x2, pairs_sums,
 * quads_sums, requant_cf, the even row, the widened rows' steps); fast_s8.c's portable C
 * forms (what the host and a CPU without a folder build) stand in for the others. The headers
 * are included into fast_s8.c's unit, after the types its steps take (rows_job, run, the
 * jobs), so that the compiler sees each step where it is called.
 * The blocking choices (each 1 or 0):
 *   FAST_PAIRS       pixel and batch pairs run (rows2, the 2 x 2 block of two pixels x two
 *                    channels), not on Armv6-M, whose eight low registers do not hold the
 *                    block's pointers, inputs and weights (dot4 takes every pixel there).
 *   FAST_ONE_RUN     conv_pixel copies a window of several runs into one (conv_groups_copied
 *                    the windows of all groups of a grouped convolution), so that a block of
 *                    channels costs one call of the architecture's dot4, and takes the pair of
 *                    channels past the blocks of four with its dot2: where a call per run
 *                    costs more than the copy (Armv6-M's byte loops).
 *   FAST_WIDE        rows2 widens both input rows once into int16 pairs (widen_rows,
 *                    wide_sums): the DSP, whose SMLAD takes them, and the host, which runs the
 *                    same layout in C so that the conformance suite checks it.
 *   FAST_WIDE_Q      rows2_widened requantizes in the widened loop (wide_q, rows_job.fused_q).
 *   FAST_EVEN_ROW    requant_as' row of per-tensor constants of an even half
 *                    (requant_even_row): the DSP, and the host to check it.
 *   FAST_WIDE32      rows2 takes one-run and uniform windows from a buffer of int32 pairs
 *                    (rows2_wide32, fast/v7m/: the M3's MLAs).
 *   FAST_MEMCPY_RUNS gather copies every run with memcpy (on the M3 the byte loop for runs of
 *                    at most 8 bytes cost more: conv_options).
 *   FAST_PADDED      conv_padded's padded weights run (not on Helium cores: its 1 KiB on top
 *                    of the gathered pairs' widened rows took demo_int8 on the M55 to 7,696 of
 *                    its 8 KiB stack; its Helium paths were measured without it). */
#ifndef MA_FAST_S8_STEPS_H
#define MA_FAST_S8_STEPS_H

#if FAST_DSP
#include "fast/dsp/fast_dsp_s8.h"
#define FAST_PAIRS 1
#define FAST_ONE_RUN 0
#define FAST_WIDE 1
#define FAST_WIDE_Q 1
#define FAST_EVEN_ROW 1
#define FAST_WIDE32 0
#define FAST_MEMCPY_RUNS 0
#elif FAST_V7M
#include "fast/v7m/fast_v7m_s8.h"
#define FAST_PAIRS 1
#define FAST_ONE_RUN 0
#define FAST_WIDE 0
#define FAST_WIDE_Q 0
#define FAST_EVEN_ROW 0
#define FAST_WIDE32 1
#define FAST_MEMCPY_RUNS 1
#elif FAST_V6M
#include "fast/v6m/fast_v6m_s8.h"
#define FAST_PAIRS 0
#define FAST_ONE_RUN 1
#define FAST_WIDE 0
#define FAST_WIDE_Q 0
#define FAST_EVEN_ROW 0
#define FAST_WIDE32 0
#define FAST_MEMCPY_RUNS 0
#else /* the portable forms; the host checks the DSP's layouts in C */
#define FAST_PAIRS 1
#define FAST_ONE_RUN 0
#define FAST_WIDE FAST_HOST
#define FAST_WIDE_Q 0
#define FAST_EVEN_ROW FAST_HOST
#define FAST_WIDE32 0
#define FAST_MEMCPY_RUNS 0
#endif

#define FAST_PADDED (!FAST_MVE)

#endif
