/* newlib's system calls for an application written for a hosted C library (a user's project:
 * examples/cmake, a TFLM DebugLog on stdio), linked instead of no_heap.c: printf, puts and
 * fputs on stdout and stderr print on the board's UART; exit() and abort() end the run through
 * board_exit. No files and no input: those calls fail as on a closed stream.
 * newlib-nano's stdio takes its three stream structures from malloc on first use (3 x 104 bytes
 * and malloc's headers): _sbrk serves them from a fixed reserve in .bss and refuses anything
 * more (a stream's 1 KiB buffer, which newlib then does without), so no allocation can grow
 * into the stack. The repository's own applications link no_heap.c and none of this. */
#include <errno.h>
#include <stddef.h>
#include <sys/stat.h>

#include "board.h"

int _write(int fd, const char *buf, int len);
int _read(int fd, char *buf, int len);
int _close(int fd);
int _lseek(int fd, int offset, int whence);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
void _exit(int status);
int _kill(int pid, int sig);
int _getpid(void);
void *_sbrk(ptrdiff_t increment);

#define STDIO_RESERVE 512u
static unsigned char reserve[STDIO_RESERVE] __attribute__((aligned(8)));
static size_t reserved;

static int is_output(int fd) { return fd == 1 || fd == 2; }

int _write(int fd, const char *buf, int len) {
  if (!is_output(fd) || len < 0) {
    errno = EBADF;
    return -1;
  }
  board_write(buf, (size_t)len);
  return len;
}

int _read(int fd, char *buf, int len) {
  (void)fd;
  (void)buf;
  (void)len;
  errno = EBADF;
  return -1;
}

int _close(int fd) {
  (void)fd;
  errno = EBADF;
  return -1;
}

int _lseek(int fd, int offset, int whence) {
  (void)fd;
  (void)offset;
  (void)whence;
  errno = ESPIPE;
  return -1;
}

/* A character device: newlib then line-buffers the stream (unbuffered here, since the
 * 1 KiB buffer it would allocate is more than _sbrk gives). */
int _fstat(int fd, struct stat *st) {
  if (!is_output(fd)) {
    errno = EBADF;
    return -1;
  }
  st->st_mode = S_IFCHR;
  return 0;
}

int _isatty(int fd) { return is_output(fd); }

void _exit(int status) { board_exit(status); }

/* abort() raises SIGABRT on this process: the run ends as a failed one. */
int _kill(int pid, int sig) {
  (void)pid;
  (void)sig;
  board_exit(BOARD_EXIT_FAIL);
}

int _getpid(void) { return 1; }

void *_sbrk(ptrdiff_t increment) {
  if (increment < 0 || (size_t)increment > STDIO_RESERVE - reserved) {
    errno = ENOMEM;
    return (void *)-1;
  }
  void *start = &reserve[reserved];
  reserved += (size_t)increment;
  return start;
}
