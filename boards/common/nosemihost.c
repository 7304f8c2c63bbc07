/* For real boards: no debugger is assumed, so finishing means idling with the report printed. */
#include "board.h"

void board_exit(int status) {
  board_puts(status == BOARD_EXIT_OK ? "\n[board idle]\n" : "\n[board halted on error]\n");
  for (;;) {
    __asm volatile("wfi");
  }
}

const char *board_cmdline(char *buf, size_t size) {
  if (size > 0u) buf[0] = '\0';
  return buf;
}
