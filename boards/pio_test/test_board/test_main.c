/* On-target checks of the board support, run by `pio test` under QEMU (test_custom_runner.py).
 * Each check prints "TEST <name> PASS" or "TEST <name> FAIL <why>"; the exit status is the
 * number of failures.
 */
#include <stdint.h>
#include <string.h>

#include "board.h"

static const uint32_t initialised = 0x600DF00Du; /* .rodata */
static uint32_t data_word = 0x12345678u;        /* .data: copied from flash by the start-up */
static uint32_t bss_words[64];                  /* .bss: zeroed by the start-up */

static int report(const char *name, int ok, const char *why) {
  board_puts("TEST ");
  board_puts(name);
  board_puts(ok ? " PASS\n" : " FAIL ");
  if (!ok) {
    board_puts(why);
    board_puts("\n");
  }
  return ok ? 0 : 1;
}

static int check_memory_init(void) {
  int zero = 1;
  for (size_t i = 0; i < sizeof bss_words / sizeof bss_words[0]; i++) zero &= bss_words[i] == 0u;
  return report("data_bss_init", data_word == 0x12345678u && zero && initialised == 0x600DF00Du,
                ".data not copied or .bss not zeroed");
}

static int check_ticks(void) {
  /* Many reads in a row: the count must never go back (a torn read of the wrap count and the
   * SysTick value would), and must advance. */
  uint64_t first = board_ticks(), prev = first;
  int monotonic = 1;
  for (uint32_t i = 0; i < 200000u; i++) {
    uint64_t now = board_ticks();
    monotonic &= now >= prev;
    prev = now;
  }
  return report("ticks_monotonic", monotonic && prev > first, "tick counter went back or stood");
}

static int check_float(void) {
  volatile float a = 1.5f, b = -2.25f;
  volatile double c = 0.1;
  float p = a * b;
  double s = c + c + c;
  int ok = p == -3.375f && s > 0.2999 && s < 0.3001 && s != 0.3; /* 0.1 is inexact */
  return report("float_math", ok, "float or double arithmetic wrong");
}

static int check_uart_long_line(void) {
  char line[200];
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 1] = '\0';
  board_puts(line);
  board_puts("\n");
  return report("uart_long_line", 1, "");
}

int main(void) {
  int failures = 0;
  failures += check_memory_init();
  failures += check_ticks();
  failures += check_float();
  failures += check_uart_long_line();
  board_puts("TESTS done failures=");
  board_put_u64((uint64_t)failures);
  board_puts("\n");
  return failures;
}
