/* Built only when firmware/src/kernels/ has no sources: the core then loads models and
 * reports every builtin operator as unsupported. */
#include "ma_kernel.h"

const ma_kernel *ma_find_kernel(int32_t builtin_code) {
  (void)builtin_code;
  return 0;
}
