/* Forwards TFLM's header to microarena/tflm.h: put firmware/compat on the include path. */
#include "microarena/tflm.h"
