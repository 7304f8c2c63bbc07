/* newlib's snprintf family (used by the runtime for error messages) links malloc, which needs
 * _sbrk. The firmware has no heap, so any request fails; weak, so a board may provide its own. */
#include <errno.h>
#include <stddef.h>

void *_sbrk(ptrdiff_t increment);

__attribute__((weak)) void *_sbrk(ptrdiff_t increment) {
  (void)increment;
  errno = ENOMEM;
  return (void *)-1;
}
