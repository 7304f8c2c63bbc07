/* Bring-up application: proves a board's UART, tick counter, FPU, fault reporting and exit work.
 * On an emulator the semihosting command line (QEMU -append) picks what to do:
 *   (empty)   print a greeting, check the tick counter advances, exit 0
 *   exit N    exit with status N
 *   fault     execute an undefined instruction (UsageFault)
 *   busfault  read from unmapped memory (BusFault)
 *   divzero   divide by zero (UsageFault via DIV_0_TRP)
 *   hang      loop forever (the host must time out)
 */
#include <stdint.h>
#include <string.h>

#include "board.h"

static int parse_int(const char *s) {
  int v = 0;
  while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  return v;
}

static int greet(void) {
  board_puts("hello from ");
  board_puts(board_name());
  board_puts(" tick_hz=");
  board_put_u64(board_tick_hz());
  board_puts("\n");
  uint64_t t0 = board_ticks();
  volatile float acc = 1.0f; /* exercises the FPU where the board has one */
  for (int i = 0; i < 20000; i++) acc = acc * 1.0001f;
  uint64_t t1 = board_ticks();
  board_puts("ticks=");
  board_put_u64(t1 - t0);
  board_puts(" float_ok=");
  board_puts(acc > 1.0f ? "1" : "0");
  board_puts("\n");
  if (t1 <= t0 || !(acc > 1.0f)) {
    board_puts("status=error\n");
    return BOARD_EXIT_FAIL;
  }
  board_puts("status=ok\n");
  return BOARD_EXIT_OK;
}

int main(void) {
  char cmdline[512];
  const char *cmd = board_cmdline(cmdline, sizeof cmdline);
  if (cmd == NULL) {
    board_puts("error: cannot read the command line (too long?)\n");
    return BOARD_EXIT_FAIL;
  }
  if (strncmp(cmd, "exit ", 5) == 0) {
    board_puts("exiting as asked\n");
    return parse_int(cmd + 5);
  }
  if (strcmp(cmd, "fault") == 0) {
    board_puts("about to execute an undefined instruction\n");
    __asm volatile("udf #0");
  }
  if (strcmp(cmd, "busfault") == 0) {
    board_puts("about to read unmapped memory\n");
    return (int)*(volatile uint32_t *)0xF0000000u;
  }
  if (strcmp(cmd, "divzero") == 0) {
    volatile int zero = 0;
    board_puts("about to divide by zero\n");
    return 10 / zero;
  }
  if (strcmp(cmd, "hang") == 0) {
    board_puts("hanging\n");
    for (;;) {
    }
  }
  return greet();
}
