// The model as TFLM's examples hold it: a byte array made from the .tflite file
// (model_data.cc is generated, e.g. by `xxd -i`, or by tests/runtime/test_tflm_api.py).
#ifndef EXAMPLES_TFLM_API_MODEL_DATA_H_
#define EXAMPLES_TFLM_API_MODEL_DATA_H_
extern const unsigned char g_model[];
extern const unsigned int g_model_len;
#endif
