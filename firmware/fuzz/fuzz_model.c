/* libFuzzer target: any byte string as a model must load or fail with a message, and a
 * model that loads must run (or fail cleanly) without memory errors or undefined behaviour.
 * Build: make -C firmware fuzz (clang, -fsanitize=fuzzer,address,undefined). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "microarena.h"

enum { ARENA_BYTES = 1 << 20, MODEL_MAX = 1 << 22 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MODEL_MAX) return 0;
  /* The runtime wants an 8-aligned model; malloc gives at least that. */
  uint8_t *model = malloc(size > 0 ? size : 1);
  uint8_t *arena = malloc(ARENA_BYTES);
  char msg[256];
  if (model == NULL || arena == NULL) abort();
  if (size > 0) memcpy(model, data, size);
  ma_interp *it = NULL;
  ma_status st = ma_open(&it, model, size, arena, ARENA_BYTES, msg, sizeof msg);
  if (st == MA_OK) {
    ma_set_while_limit(it, 1000); /* keep each input fast; the limit itself is tested */
    for (int32_t i = 0; i < ma_num_inputs(it); i++) {
      ma_tensor *t = ma_input(it, i);
      if (t->data != NULL) memset(t->data, 0, t->bytes);
    }
    st = ma_invoke(it);
  }
  if (st != MA_OK && msg[0] == 0) abort(); /* every error must say what went wrong */
  free(arena);
  free(model);
  return 0;
}
