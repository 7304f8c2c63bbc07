// A TFLM-style application: it includes TFLM's headers and uses only TFLM's API. Built with
// firmware/compat and firmware/include on the include path, it runs on microarena instead.
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_log.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/micro/recording_micro_interpreter.h"
#include "tensorflow/lite/micro/system_setup.h"
#include "tensorflow/lite/schema/schema_generated.h"

#include "model_data.h"

namespace {
constexpr size_t kArenaSize = 64 * 1024;
alignas(16) uint8_t tensor_arena[kArenaSize];

// The demo model's operators, each added once.
using DemoOpResolver = tflite::MicroMutableOpResolver<6>;

TfLiteStatus RegisterOps(DemoOpResolver &op_resolver) {
  if (op_resolver.AddConv2D() != kTfLiteOk) return kTfLiteError;
  if (op_resolver.AddDepthwiseConv2D() != kTfLiteOk) return kTfLiteError;
  if (op_resolver.AddAveragePool2D() != kTfLiteOk) return kTfLiteError;
  if (op_resolver.AddReshape() != kTfLiteOk) return kTfLiteError;
  if (op_resolver.AddFullyConnected() != kTfLiteOk) return kTfLiteError;
  if (op_resolver.AddSoftmax() != kTfLiteOk) return kTfLiteError;
  return kTfLiteOk;
}

// A fixed input pattern, so the host test can give TFLM the same bytes.
void FillInput(TfLiteTensor *input) {
  for (size_t i = 0; i < input->bytes; ++i) {
    input->data.int8[i] = static_cast<int8_t>(static_cast<int>((i * 37u + 11u) % 256u) - 128);
  }
}
}  // namespace

int main() {
  tflite::InitializeTarget();
  const tflite::Model *model = tflite::GetModel(g_model);

  DemoOpResolver op_resolver;
  if (RegisterOps(op_resolver) != kTfLiteOk) return 1;

  tflite::RecordingMicroInterpreter interpreter(model, op_resolver, tensor_arena, kArenaSize);
  if (interpreter.initialization_status() != kTfLiteOk) return 1;
  if (interpreter.AllocateTensors() != kTfLiteOk) return 1;
  interpreter.GetMicroAllocator().PrintAllocations();
  MicroPrintf("arena_used_bytes %d", static_cast<int>(interpreter.arena_used_bytes()));
  MicroPrintf("inputs %d outputs %d", static_cast<int>(interpreter.inputs_size()),
              static_cast<int>(interpreter.outputs_size()));

  TfLiteTensor *input = interpreter.input(0);
  if (input->type != kTfLiteInt8) return 1;
  FillInput(input);
  if (interpreter.Invoke() != kTfLiteOk) return 1;

  TfLiteTensor *output = interpreter.output(0);
  MicroPrintf("output dims %d x %d scale %f zero_point %d", output->dims->data[0],
              output->dims->data[1], static_cast<double>(output->params.scale),
              static_cast<int>(output->params.zero_point));
  for (int i = 0; i < output->dims->data[output->dims->size - 1]; ++i) {
    MicroPrintf("output %d %d", i, output->data.int8[i]);
  }
  MicroPrintf("~~~ALL TESTS PASSED~~~");
  return 0;
}
