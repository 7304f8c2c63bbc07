/* The firmware has no heap. newlib-nano's printf family still links malloc (only string
 * streams that grow would call it), and malloc needs _sbrk: this one always refuses, so any
 * allocation after start-up fails cleanly instead of growing into the stack. */
#include <errno.h>
#include <stddef.h>

void *_sbrk(ptrdiff_t increment);

void *_sbrk(ptrdiff_t increment) {
  (void)increment;
  errno = ENOMEM;
  return (void *)-1;
}
