/* The fields Helium adds to lstm.h's gate_rows: the gates' requantizations for four lanes,
 * which fast_mve_lstm.h builds once per invocation and reads; nothing on other cores. */
#ifndef MA_FAST_MVE_LSTM_DATA_H
#define MA_FAST_MVE_LSTM_DATA_H

#include "fast/mve/fast_mve_core.h"

#if FAST_MVE
#define LSTM_GATE_LANES rq4 in_v[4], rec_v[4], fc_v, ig_v, out_v;
#else
#define LSTM_GATE_LANES
#endif

#endif
