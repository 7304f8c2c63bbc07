/* The operators MicroMutableOpResolver can add: X(TFLM's Add method suffix, builtin code name).
 * One list, expanded into the Add...() methods by microarena/tflm.h. */
#ifndef MICROARENA_TFLM_OPS_H
#define MICROARENA_TFLM_OPS_H
#define MICROARENA_TFLM_OPS(X)                                                                   \
  X(Abs, ABS) X(Add, ADD) X(AddN, ADD_N) X(ArgMax, ARG_MAX) X(ArgMin, ARG_MIN)                  \
  X(AveragePool2D, AVERAGE_POOL_2D) X(BatchMatMul, BATCH_MATMUL)                                 \
  X(BatchToSpaceNd, BATCH_TO_SPACE_ND) X(BroadcastArgs, BROADCAST_ARGS)                          \
  X(BroadcastTo, BROADCAST_TO) X(CallOnce, CALL_ONCE) X(Cast, CAST) X(Ceil, CEIL)                \
  X(Concatenation, CONCATENATION) X(Conv2D, CONV_2D) X(Cos, COS) X(CumSum, CUMSUM)               \
  X(DepthToSpace, DEPTH_TO_SPACE) X(DepthwiseConv2D, DEPTHWISE_CONV_2D)                          \
  X(Dequantize, DEQUANTIZE) X(Div, DIV) X(Elu, ELU) X(Equal, EQUAL) X(EmbeddingLookup,           \
  EMBEDDING_LOOKUP) X(Exp, EXP) X(ExpandDims, EXPAND_DIMS) X(Fill, FILL) X(Floor, FLOOR)         \
  X(FloorDiv, FLOOR_DIV) X(FloorMod, FLOOR_MOD) X(FullyConnected, FULLY_CONNECTED)              \
  X(Gather, GATHER) X(GatherNd, GATHER_ND) X(Greater, GREATER) X(GreaterEqual, GREATER_EQUAL)    \
  X(HardSwish, HARD_SWISH) X(If, IF) X(L2Normalization, L2_NORMALIZATION) X(L2Pool2D,            \
  L2_POOL_2D) X(LeakyRelu, LEAKY_RELU) X(Less, LESS) X(LessEqual, LESS_EQUAL) X(Log, LOG)        \
  X(LogicalAnd, LOGICAL_AND) X(LogicalNot, LOGICAL_NOT) X(LogicalOr, LOGICAL_OR)                 \
  X(Logistic, LOGISTIC) X(LogSoftmax, LOG_SOFTMAX) X(MaxPool2D, MAX_POOL_2D)                     \
  X(Maximum, MAXIMUM) X(Mean, MEAN) X(Minimum, MINIMUM) X(MirrorPad, MIRROR_PAD) X(Mul, MUL)     \
  X(Neg, NEG) X(NotEqual, NOT_EQUAL) X(Pack, PACK) X(Pad, PAD) X(PadV2, PADV2) X(Prelu, PRELU)   \
  X(Quantize, QUANTIZE) X(ReduceMax, REDUCE_MAX) X(ReduceMin, REDUCE_MIN) X(Relu, RELU)          \
  X(Relu6, RELU6) X(Reshape, RESHAPE) X(ResizeBilinear, RESIZE_BILINEAR)                         \
  X(ResizeNearestNeighbor, RESIZE_NEAREST_NEIGHBOR) X(Round, ROUND) X(Rsqrt, RSQRT)              \
  X(SelectV2, SELECT_V2) X(Shape, SHAPE) X(Sin, SIN) X(Slice, SLICE) X(Softmax, SOFTMAX)         \
  X(SpaceToBatchNd, SPACE_TO_BATCH_ND) X(SpaceToDepth, SPACE_TO_DEPTH) X(Split, SPLIT)           \
  X(SplitV, SPLIT_V) X(Sqrt, SQRT) X(Square, SQUARE) X(SquaredDifference, SQUARED_DIFFERENCE)    \
  X(Squeeze, SQUEEZE) X(StridedSlice, STRIDED_SLICE) X(Sub, SUB) X(Sum, SUM) X(Svdf, SVDF)       \
  X(Tanh, TANH) X(Transpose, TRANSPOSE) X(TransposeConv, TRANSPOSE_CONV)                         \
  X(UnidirectionalSequenceLSTM, UNIDIRECTIONAL_SEQUENCE_LSTM) X(Unpack, UNPACK)                  \
  X(VarHandle, VAR_HANDLE) X(ReadVariable, READ_VARIABLE) X(AssignVariable, ASSIGN_VARIABLE)     \
  X(While, WHILE) X(ZerosLike, ZEROS_LIKE)
#endif
