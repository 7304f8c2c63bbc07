// Checks of microarena/tflm.h that the example does not reach: refusals with TFLM's messages
// and statuses, out-of-range tensors, and tensor views that stay put across invokes. Each line
// printed is "<case> <status or value>", read by test_tflm_api.py.
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"

#include "model_data.h"

namespace {
alignas(16) uint8_t arena[64 * 1024];

template <unsigned int N>
void AddAllButSoftmax(tflite::MicroMutableOpResolver<N> &r) {
  r.AddConv2D();
  r.AddDepthwiseConv2D();
  r.AddAveragePool2D();
  r.AddReshape();
  r.AddFullyConnected();
}
}  // namespace

int main() {
  const tflite::Model *model = tflite::GetModel(g_model, g_model_len);

  tflite::MicroMutableOpResolver<6> lacking;
  AddAllButSoftmax(lacking);
  tflite::MicroInterpreter no_op(model, lacking, arena, sizeof arena);
  MicroPrintf("missing_op %d", no_op.AllocateTensors());
  MicroPrintf("invoke_after_failure %d", no_op.Invoke());
  MicroPrintf("used_after_failure %d", static_cast<int>(no_op.arena_used_bytes()));

  tflite::MicroMutableOpResolver<2> small;
  MicroPrintf("add_first %d", small.AddConv2D());
  MicroPrintf("add_twice %d", small.AddConv2D());
  MicroPrintf("add_second %d", small.AddSoftmax());
  MicroPrintf("add_over_size %d", small.AddReshape());
  MicroPrintf("registrations %d", static_cast<int>(small.GetRegistrationLength()));

  tflite::MicroMutableOpResolver<6> all;
  AddAllButSoftmax(all);
  all.AddSoftmax();
  tflite::MicroInterpreter tight(model, all, arena, 1024);
  MicroPrintf("arena_too_small %d", tight.AllocateTensors());

  tflite::MicroInterpreter no_model(tflite::GetModel(nullptr), all, arena, sizeof arena);
  MicroPrintf("no_model %d", no_model.initialization_status());

  tflite::MicroInterpreter ok(model, all, arena, sizeof arena);
  MicroPrintf("initialization_status %d", ok.initialization_status());
  MicroPrintf("allocate %d", ok.AllocateTensors());
  MicroPrintf("input_out_of_range %d", ok.input(1) == nullptr);
  MicroPrintf("output_out_of_range %d", ok.output(1) == nullptr);
  TfLiteTensor *in = ok.input(0);
  TfLiteTensor *out = ok.output(0);
  const void *in_data = in->data.raw;
  for (size_t i = 0; i < in->bytes; ++i) in->data.int8[i] = static_cast<int8_t>(i);
  ok.Invoke();
  int8_t first[4];
  for (int i = 0; i < 4; ++i) first[i] = out->data.int8[i];
  for (size_t i = 0; i < in->bytes; ++i) in->data.int8[i] = static_cast<int8_t>(i);
  MicroPrintf("invoke_again %d", ok.Invoke());
  bool same = ok.input(0) == in && ok.output(0) == out && in->data.raw == in_data;
  for (int i = 0; i < 4; ++i) same = same && first[i] == out->data.int8[i];
  MicroPrintf("stable_views %d", same);
  MicroPrintf("input type %d dims %d %d %d %d bytes %d", in->type, in->dims->data[0],
              in->dims->data[1], in->dims->data[2], in->dims->data[3],
              static_cast<int>(in->bytes));
  MicroPrintf("input params %f %d", static_cast<double>(in->params.scale),
              static_cast<int>(in->params.zero_point));
  return 0;
}
