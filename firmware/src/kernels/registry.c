/* Maps TFLite BuiltinOperator codes to this folder's kernels. */
#include <stddef.h>

#include "kernels.h"

/* BuiltinOperator values from the TFLite schema. */
enum {
  OP_ADD = 0, OP_AVERAGE_POOL_2D = 1, OP_CONCATENATION = 2, OP_CONV_2D = 3,
  OP_DEPTHWISE_CONV_2D = 4, OP_DEQUANTIZE = 6, OP_FULLY_CONNECTED = 9, OP_LOGISTIC = 14,
  OP_MAX_POOL_2D = 17, OP_MUL = 18, OP_RELU = 19, OP_RESHAPE = 22, OP_SOFTMAX = 25,
  OP_PAD = 34, OP_GATHER = 36, OP_TRANSPOSE = 39, OP_LESS = 58, OP_PADV2 = 60, OP_EQUAL = 71,
  OP_SVDF = 27, OP_UNIDIRECTIONAL_SEQUENCE_LSTM = 44, OP_RESIZE_NEAREST_NEIGHBOR = 97,
  OP_LEAKY_RELU = 98, OP_QUANTIZE = 114
};

const ma_kernel *ma_find_kernel(int32_t builtin_code) {
  switch (builtin_code) {
    case OP_ADD: return &mak_add;
    case OP_AVERAGE_POOL_2D: return &mak_average_pool_2d;
    case OP_CONCATENATION: return &mak_concatenation;
    case OP_CONV_2D: return &mak_conv_2d;
    case OP_DEPTHWISE_CONV_2D: return &mak_depthwise_conv_2d;
    case OP_DEQUANTIZE: return &mak_dequantize;
    case OP_FULLY_CONNECTED: return &mak_fully_connected;
    case OP_LOGISTIC: return &mak_logistic;
    case OP_MAX_POOL_2D: return &mak_max_pool_2d;
    case OP_MUL: return &mak_mul;
    case OP_RELU: return &mak_relu;
    case OP_RESHAPE: return &mak_reshape;
    case OP_SOFTMAX: return &mak_softmax;
    case OP_SVDF: return &mak_svdf;
    case OP_UNIDIRECTIONAL_SEQUENCE_LSTM: return &mak_unidirectional_sequence_lstm;
    case OP_PAD: return &mak_pad;
    case OP_PADV2: return &mak_pad;
    case OP_GATHER: return &mak_gather;
    case OP_TRANSPOSE: return &mak_transpose;
    case OP_LESS: return &mak_less;
    case OP_EQUAL: return &mak_equal;
    case OP_RESIZE_NEAREST_NEIGHBOR: return &mak_resize_nearest_neighbor;
    case OP_LEAKY_RELU: return &mak_leaky_relu;
    case OP_QUANTIZE: return &mak_quantize;
    default: return NULL;
  }
}
