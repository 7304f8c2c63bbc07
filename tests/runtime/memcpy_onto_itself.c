/* newlib's memcpy with source == destination, on Cortex-M4F (QEMU), for
 * tests/runtime/test_concat_in_place_arm.py: a banded model's CONCATENATION copies each band
 * onto itself (TFLM's reference kernel calls memcpy once per input). Every offset 0..7 and
 * many lengths; the bytes must stay as they were. Exit status 0, else 1 + the failing case. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uint8_t buffer[4096 + 64] __attribute__((aligned(16)));
static const size_t lengths[] = {0,  1,  2,  3,  4,  5,   7,   8,   9,   15,   16,  17,
                                 31, 32, 33, 63, 64, 65, 127, 128, 255, 1536, 4095, 4096};

/* Through a volatile pointer: the compiler may not treat the call as a no-op or inline it. */
static void *(*volatile copy)(void *, const void *, size_t) = memcpy;

int main(void) {
  int id = 0;
  for (size_t offset = 0; offset < 8; offset++) {
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++, id++) {
      for (size_t i = 0; i < sizeof buffer; i++) buffer[i] = (uint8_t)(i * 131u + 7u);
      copy(buffer + offset, buffer + offset, lengths[k]);
      for (size_t i = 0; i < sizeof buffer; i++) {
        if (buffer[i] != (uint8_t)(i * 131u + 7u)) return 1 + id;
      }
    }
  }
  return 0;
}
