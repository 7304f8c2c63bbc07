/* Field kinds of every BuiltinOptions table, by union type then slot, so option reads
 * use each field's true width (b/B: int8/uint8-or-bool, h/H: 16-bit, i/I: 32-bit,
 * l/L: 64-bit, f: float, d: double, v: offset to a vector/table/string, '.': none).
 * Generated from the TFLite schema (flatbuffers' Python classes of the `tflite` package). */
#include "options_schema.h"

static const char *const kKinds[] = {
    "", /* 0 NONE */
    "biibiib", /* 1 Conv2DOptions */
    "biiibii", /* 2 DepthwiseConv2DOptions */
    "ivv", /* 3 ConcatEmbeddingsOptions */
    "b", /* 4 LSHProjectionOptions */
    "biiiib", /* 5 Pool2DOptions */
    "ibB", /* 6 SVDFOptions */
    "bB", /* 7 RNNOptions */
    "bbBBb", /* 8 FullyConnectedOptions */
    "f", /* 9 SoftmaxOptions */
    "ib", /* 10 ConcatenationOptions */
    "bB", /* 11 AddOptions */
    "b", /* 12 L2NormOptions */
    "ifff", /* 13 LocalResponseNormalizationOptions */
    "bffbB", /* 14 LSTMOptions */
    "..BB", /* 15 ResizeBilinearOptions */
    "I", /* 16 CallOptions */
    "v", /* 17 ReshapeOptions */
    "iiB", /* 18 SkipGramOptions */
    "i", /* 19 SpaceToDepthOptions */
    "b", /* 20 EmbeddingLookupSparseOptions */
    "b", /* 21 MulOptions */
    "", /* 22 PadOptions */
    "ii", /* 23 GatherOptions */
    "", /* 24 BatchToSpaceNDOptions */
    "", /* 25 SpaceToBatchNDOptions */
    "", /* 26 TransposeOptions */
    "B", /* 27 ReducerOptions */
    "bB", /* 28 SubOptions */
    "b", /* 29 DivOptions */
    "v", /* 30 SqueezeOptions */
    "BbB", /* 31 SequenceRNNOptions */
    "iiiiiB", /* 32 StridedSliceOptions */
    "", /* 33 ExpOptions */
    "", /* 34 TopKV2Options */
    "i", /* 35 SplitOptions */
    "", /* 36 LogSoftmaxOptions */
    "bb", /* 37 CastOptions */
    "", /* 38 DequantizeOptions */
    "", /* 39 MaximumMinimumOptions */
    "b", /* 40 ArgMaxOptions */
    "", /* 41 LessOptions */
    "", /* 42 NegOptions */
    "", /* 43 PadV2Options */
    "", /* 44 GreaterOptions */
    "", /* 45 GreaterEqualOptions */
    "", /* 46 LessEqualOptions */
    "", /* 47 SelectOptions */
    "", /* 48 SliceOptions */
    "biibb", /* 49 TransposeConvOptions */
    "B", /* 50 SparseToDenseOptions */
    "", /* 51 TileOptions */
    "", /* 52 ExpandDimsOptions */
    "", /* 53 EqualOptions */
    "", /* 54 NotEqualOptions */
    "b", /* 55 ShapeOptions */
    "", /* 56 PowOptions */
    "b", /* 57 ArgMinOptions */
    "ffiB", /* 58 FakeQuantOptions */
    "ii", /* 59 PackOptions */
    "", /* 60 LogicalOrOptions */
    "i", /* 61 OneHotOptions */
    "", /* 62 LogicalAndOptions */
    "", /* 63 LogicalNotOptions */
    "ii", /* 64 UnpackOptions */
    "", /* 65 FloorDivOptions */
    "", /* 66 SquareOptions */
    "", /* 67 ZerosLikeOptions */
    "", /* 68 FillOptions */
    "bffBBB", /* 69 BidirectionalSequenceLSTMOptions */
    "BbBB", /* 70 BidirectionalSequenceRNNOptions */
    "bffBBB", /* 71 UnidirectionalSequenceLSTMOptions */
    "", /* 72 FloorModOptions */
    "", /* 73 RangeOptions */
    "BB", /* 74 ResizeNearestNeighborOptions */
    "f", /* 75 LeakyReluOptions */
    "", /* 76 SquaredDifferenceOptions */
    "b", /* 77 MirrorPadOptions */
    "", /* 78 AbsOptions */
    "i", /* 79 SplitVOptions */
    "b", /* 80 UniqueOptions */
    "", /* 81 ReverseV2Options */
    "", /* 82 AddNOptions */
    "", /* 83 GatherNdOptions */
    "", /* 84 CosOptions */
    "", /* 85 WhereOptions */
    "", /* 86 RankOptions */
    "ii", /* 87 ReverseSequenceOptions */
    "", /* 88 MatrixDiagOptions */
    "", /* 89 QuantizeOptions */
    "", /* 90 MatrixSetDiagOptions */
    "", /* 91 HardSwishOptions */
    "ii", /* 92 IfOptions */
    "ii", /* 93 WhileOptions */
    "i", /* 94 DepthToSpaceOptions */
    "", /* 95 NonMaxSuppressionV4Options */
    "", /* 96 NonMaxSuppressionV5Options */
    "", /* 97 ScatterNdOptions */
    "", /* 98 SelectV2Options */
    "", /* 99 DensifyOptions */
    "", /* 100 SegmentSumOptions */
    "BBB", /* 101 BatchMatMulOptions */
    "BB", /* 102 CumsumOptions */
    "i", /* 103 CallOnceOptions */
    "", /* 104 BroadcastToOptions */
    "", /* 105 Rfft2dOptions */
    "biiibiii", /* 106 Conv3DOptions */
    "ibb", /* 107 HashtableOptions */
    "", /* 108 HashtableFindOptions */
    "", /* 109 HashtableImportOptions */
    "", /* 110 HashtableSizeOptions */
    "vv", /* 111 VarHandleOptions */
    "", /* 112 ReadVariableOptions */
    "", /* 113 AssignVariableOptions */
    "ll", /* 114 RandomOptions */
    "v", /* 115 BucketizeOptions */
    "B", /* 116 GeluOptions */
    "", /* 117 DynamicUpdateSliceOptions */
    "", /* 118 UnsortedSegmentProdOptions */
    "", /* 119 UnsortedSegmentMaxOptions */
    "", /* 120 UnsortedSegmentMinOptions */
    "", /* 121 UnsortedSegmentSumOptions */
    "", /* 122 ATan2Options */
    "", /* 123 SignOptions */
    "", /* 124 BitcastOptions */
    "", /* 125 BitwiseXorOptions */
    "", /* 126 RightShiftOptions */
};

char ma_option_kind(uint8_t type, int slot) {
  if (type >= sizeof kKinds / sizeof kKinds[0] || slot < 0) return 0;
  const char *k = kKinds[type];
  for (int i = 0; k[i] != 0; i++) {
    if (i == slot) return k[i] == '.' ? 0 : k[i];
  }
  return 0;
}
