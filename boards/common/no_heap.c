/* The firmware has no heap. newlib-nano's stdio (printf, puts, fputs: an application written for
 * a hosted C library, printing through syscalls.c) takes its three stream structures from
 * malloc on first use, 3 x 104 bytes and malloc's headers: _sbrk serves them from a fixed
 * reserve in .bss and refuses anything more (a stream's 1 KiB buffer, which newlib then does
 * without), so no allocation can grow into the stack. The linker's --gc-sections drops _sbrk
 * and the reserve from an image that does not use stdio. */
#include <errno.h>
#include <stddef.h>

#define STDIO_RESERVE 512u

void *_sbrk(ptrdiff_t increment);

static unsigned char reserve[STDIO_RESERVE] __attribute__((aligned(8)));
static size_t reserved;

void *_sbrk(ptrdiff_t increment) {
  if (increment < 0 || (size_t)increment > STDIO_RESERVE - reserved) {
    errno = ENOMEM;
    return (void *)-1;
  }
  void *start = &reserve[reserved];
  reserved += (size_t)increment;
  return start;
}
