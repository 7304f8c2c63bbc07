/* Semihosting, for boards run under an emulator (QEMU with -semihosting-config enable=on):
 * SYS_EXIT_EXTENDED makes the emulator's exit code the firmware's status, SYS_GET_CMDLINE reads
 * -append so one image can run several cases. Real boards use board_exit in their board.c.
 */
#include "board.h"

#define SYS_GET_CMDLINE 0x15u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

static uint32_t semihost_call(uint32_t op, void *arg) {
  register uint32_t r0 __asm("r0") = op;
  register void *r1 __asm("r1") = arg;
  __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void board_exit(int status) {
  uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
  semihost_call(SYS_EXIT_EXTENDED, block);
  for (;;) {
  }
}

const char *board_cmdline(char *buf, size_t size) {
  if (size == 0u) return NULL;
  uint32_t block[2] = {(uint32_t)(uintptr_t)buf, (uint32_t)size};
  if (semihost_call(SYS_GET_CMDLINE, block) != 0u) return NULL; /* e.g. longer than buf */
  buf[size - 1u] = '\0';
  /* QEMU passes "<kernel file> <-append text>": skip the program name. */
  const char *args = buf;
  while (*args != '\0' && *args != ' ') args++;
  while (*args == ' ') args++;
  return args;
}
