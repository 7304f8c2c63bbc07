/* The core steps on Armv7-M without the DSP extension (the M3; fast/fast_core_steps.h names
 * them): the C forms of the four-lane steps (fast/fast_core_portable.h), and SMLAL's
 * requant_right (fast_v7m_smlal.h) for the convolutions. requant_q (SVDF, LSTM) keeps the C
 * form: GCC's own multiply-add there took mnist_lstm's LSTM to 597,800 instructions per
 * invoke, the SMLAL assembly to 624,640. */
#ifndef MA_FAST_V7M_CORE_H
#define MA_FAST_V7M_CORE_H

#include "fast/fast_core_portable.h"
#include "fast/v7m/fast_v7m_smlal.h"

#define REQUANT_RIGHT requant_right_dsp
#define REQUANT_Q_RIGHT requant_right

#endif
