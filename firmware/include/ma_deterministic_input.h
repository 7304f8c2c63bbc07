/* The deterministic input the board applications (firmware/apps/model, firmware/apps/probe) feed a model,
 * so that the host can compute the same tensors (host.device.boards.deterministic_input) and compare
 * the board's outputs with the real TFLM's. */
#ifndef MA_DETERMINISTIC_INPUT_H
#define MA_DETERMINISTIC_INPUT_H

#include "ma_types.h"

/* base = (37 i + 11) mod 251; int: base - 125, unsigned: base, float: (base - 125) / 125,
 * bool: base & 1. Other types are left as they are. */
void ma_fill_deterministic_input(ma_tensor *t);

#endif
