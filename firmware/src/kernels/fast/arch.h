/* The one test of the target's features. Every kernel, portable or optimised, asks these
 * macros (each 1 or 0), never the compiler's __ARM_* or __arm__ ones, so what each CPU gets is
 * decided here. A new architecture adds its macro here and its folder beside fast/mve/ (listed
 * in MA_KERNEL_DIRS, firmware/build.mk); docs/architecture.md "Where to add".
 *   FAST_MVE     Helium, the M-profile Vector Extension's integer part (Cortex-M55, M85): the
 *                paths of fast/mve/, which fast/'s entries and the portable operators try first.
 *   FAST_DSP     the DSP extension (M4, M7, M33, M55): SMLAD, SXTAB16, SSUB8, SEL and SMMULR
 *                in fast/dsp/ (and fast_s8.c).
 *   FAST_V7M     Armv7-M without the DSP extension (M3): the portable forms, with the 32x32->64
 *                multiply-accumulate (SMLAL) that core has.
 *   FAST_V6M     Armv6-M (M0, M0+): eight low registers, MULS (the low word of a product) and
 *                LDRSB with a register offset only: the loops of fast_s8.c and
 *                fast_depthwise_s8.c take their own forms there, and fast_s8_core.h's
 *                requant_right/requant_left build the 64-bit product from 16-bit halves.
 *   FAST_HOST    not an Arm core (the host build): the portable forms, Armv6-M's product
 *                included, so that the conformance suite checks those loops' logic there.
 *   FAST_SAT     SSAT (Armv7-M and later, with GCC's __ssat): mak_clamp to the int8 or int16
 *                range in one instruction, which GCC does not find by itself.
 *   FAST_FPU     a single-precision floating-point unit (the M4F, M7, M33 and M55 builds): float
 *                arithmetic is an instruction. Without it (M0+, M3) each is a library call, so
 *                quantize.c rounds from the float's bits; the host takes that form too, to check it.
 * Three choices follow from them:
 *   FAST_ENABLED  fast/'s int8 loops are built (every target above, and the host).
 *   FAST_WORDS    the C forms that take a word's bytes apart (quad_in, quad_dot: the dot
 *                 products of SVDF and LSTM) pay only with the DSP; on the M3 they took
 *                 mnist_lstm from 0.65 M to 1.41 M instructions, so there those kernels keep
 *                 their plain loops.
 *   FAST_DIV_CALL no divide instruction (Armv6-M): a division is a library call, so
 *                 kernel_util.c's mak_tap_range finds an undilated window's taps by
 *                 comparisons (4 calls a window fewer). */
#ifndef MA_FAST_ARCH_H
#define MA_FAST_ARCH_H

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define FAST_MVE 1
#else
#define FAST_MVE 0
#endif

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define FAST_DSP 1
#else
#define FAST_DSP 0
#endif

#if !FAST_DSP && defined(__ARM_ARCH_7M__)
#define FAST_V7M 1
#else
#define FAST_V7M 0
#endif

#if defined(__ARM_ARCH_6M__)
#define FAST_V6M 1
#else
#define FAST_V6M 0
#endif

#if defined(__arm__)
#define FAST_HOST 0
#else
#define FAST_HOST 1
#endif

#if defined(__arm__) && defined(__ARM_FP)
#define FAST_FPU 1
#else
#define FAST_FPU 0
#endif

#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT && defined(__GNUC__)
#define FAST_SAT 1
#else
#define FAST_SAT 0
#endif

#if FAST_DSP || FAST_V7M || FAST_V6M || FAST_HOST
#define FAST_ENABLED 1
#else
#define FAST_ENABLED 0
#endif

#if FAST_DSP || FAST_HOST
#define FAST_WORDS 1
#else
#define FAST_WORDS 0
#endif

#if FAST_V6M
#define FAST_DIV_CALL 1
#else
#define FAST_DIV_CALL 0
#endif

#endif
