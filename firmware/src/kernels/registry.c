/* Maps TFLite BuiltinOperator codes, and custom operator names, to this folder's kernels. */
#include <stddef.h>
#include <string.h>

#include "kernels.h"
#include "ma_ops.h"

static const ma_kernel *custom_kernel(int32_t code);

const ma_kernel *ma_find_kernel(int32_t builtin_code) {
  switch (builtin_code) {
    case MA_OP_ADD: return &mak_add;
    case MA_OP_AVERAGE_POOL_2D: return &mak_average_pool_2d;
    case MA_OP_CONCATENATION: return &mak_concatenation;
    case MA_OP_CONV_2D: return &mak_conv_2d;
    case MA_OP_DEPTHWISE_CONV_2D: return &mak_depthwise_conv_2d;
    case MA_OP_DEQUANTIZE: return &mak_dequantize;
    case MA_OP_FULLY_CONNECTED: return &mak_fully_connected;
    case MA_OP_LOGISTIC: return &mak_logistic;
    case MA_OP_MAX_POOL_2D: return &mak_max_pool_2d;
    case MA_OP_MUL: return &mak_mul;
    case MA_OP_RELU: return &mak_relu;
    case MA_OP_RESHAPE: return &mak_reshape;
    case MA_OP_SOFTMAX: return &mak_softmax;
    case MA_OP_SVDF: return &mak_svdf;
    case MA_OP_UNIDIRECTIONAL_SEQUENCE_LSTM: return &mak_unidirectional_sequence_lstm;
    case MA_OP_PAD: return &mak_pad;
    case MA_OP_PADV2: return &mak_pad;
    case MA_OP_GATHER: return &mak_gather;
    case MA_OP_TRANSPOSE: return &mak_transpose;
    case MA_OP_LESS: return &mak_less;
    case MA_OP_EQUAL: return &mak_equal;
    case MA_OP_RESIZE_NEAREST_NEIGHBOR: return &mak_resize_nearest_neighbor;
    case MA_OP_LEAKY_RELU: return &mak_leaky_relu;
    case MA_OP_QUANTIZE: return &mak_quantize;
    case MA_OP_FLOOR: return &mak_floor;
    case MA_OP_RELU6: return &mak_relu6;
    case MA_OP_TANH: return &mak_tanh;
    case MA_OP_MEAN: return &mak_mean;
    case MA_OP_SUB: return &mak_sub;
    case MA_OP_DIV: return &mak_div;
    case MA_OP_EXP: return &mak_exp;
    case MA_OP_MAXIMUM: return &mak_maximum;
    case MA_OP_MINIMUM: return &mak_minimum;
    case MA_OP_NEG: return &mak_neg;
    case MA_OP_GREATER: return &mak_greater;
    case MA_OP_GREATER_EQUAL: return &mak_greater_equal;
    case MA_OP_LESS_EQUAL: return &mak_less_equal;
    case MA_OP_SIN: return &mak_sin;
    case MA_OP_NOT_EQUAL: return &mak_not_equal;
    case MA_OP_LOG: return &mak_log;
    case MA_OP_SUM: return &mak_sum;
    case MA_OP_SQRT: return &mak_sqrt;
    case MA_OP_RSQRT: return &mak_rsqrt;
    case MA_OP_REDUCE_MAX: return &mak_reduce_max;
    case MA_OP_LOGICAL_NOT: return &mak_logical_not;
    case MA_OP_REDUCE_MIN: return &mak_reduce_min;
    case MA_OP_SQUARE: return &mak_square;
    case MA_OP_SQUARED_DIFFERENCE: return &mak_squared_difference;
    case MA_OP_ABS: return &mak_abs;
    case MA_OP_CEIL: return &mak_ceil;
    case MA_OP_COS: return &mak_cos;
    case MA_OP_ELU: return &mak_elu;
    case MA_OP_ROUND: return &mak_round;
    case MA_OP_HARD_SWISH: return &mak_hard_swish;
    case MA_OP_CAST: return &mak_cast;
    default: return custom_kernel(builtin_code);
  }
}

/* Custom operators by name; entry i has code MA_CUSTOM_CODE_BASE + i. */
static const struct {
  const char *name;
  const ma_kernel *kernel;
} CUSTOM_OPS[] = {
    {"SignalWindow", &mak_signal_window},
    {"SignalFftAutoScale", &mak_signal_fft_auto_scale},
    {"SignalRfft", &mak_signal_rfft},
    {"SignalEnergy", &mak_signal_energy},
    {"SignalFilterBank", &mak_signal_filter_bank},
    {"SignalFilterBankSquareRoot", &mak_signal_filter_bank_square_root},
    {"SignalFilterBankSpectralSubtraction", &mak_signal_filter_bank_spectral_subtraction},
    {"SignalPCAN", &mak_signal_pcan},
    {"SignalFilterBankLog", &mak_signal_filter_bank_log},
};
enum { N_CUSTOM_OPS = sizeof CUSTOM_OPS / sizeof CUSTOM_OPS[0] };

int32_t ma_find_custom_code(const char *name, size_t len) {
  for (int32_t i = 0; name != NULL && i < N_CUSTOM_OPS; i++) {
    if (strlen(CUSTOM_OPS[i].name) == len && memcmp(CUSTOM_OPS[i].name, name, len) == 0)
      return MA_CUSTOM_CODE_BASE + i;
  }
  return -1;
}

const char *ma_custom_op_name(int32_t code) {
  const int32_t i = code - MA_CUSTOM_CODE_BASE;
  return code >= MA_CUSTOM_CODE_BASE && i < N_CUSTOM_OPS ? CUSTOM_OPS[i].name : NULL;
}

static const ma_kernel *custom_kernel(int32_t code) {
  const int32_t i = code - MA_CUSTOM_CODE_BASE;
  return code >= MA_CUSTOM_CODE_BASE && i < N_CUSTOM_OPS ? CUSTOM_OPS[i].kernel : NULL;
}
