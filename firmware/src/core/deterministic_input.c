#include "ma_deterministic_input.h"

void ma_fill_deterministic_input(ma_tensor *t) {
  if (t == NULL || t->data == NULL) return;
  int32_t n = ma_num_elements(t);
  for (int32_t i = 0; i < n; i++) {
    int32_t base = (int32_t)(((uint32_t)i * 37u + 11u) % 251u);
    int32_t v = base - 125;
    switch (t->type) {
      case MA_FLOAT32: ((float *)t->data)[i] = (float)v / 125.0f; break;
      case MA_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
      case MA_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)base; break;
      case MA_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
      case MA_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)base; break;
      case MA_INT32: ((int32_t *)t->data)[i] = v; break;
      case MA_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)base; break;
      case MA_INT64: ((int64_t *)t->data)[i] = v; break;
      case MA_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(base & 1); break;
      default: break; /* left as loaded */
    }
  }
}
