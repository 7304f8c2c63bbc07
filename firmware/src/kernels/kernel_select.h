/* Which kernels an image keeps. A firmware build that knows its model(s) defines
 * MA_SELECTED_OPS_H as a generated header (apps/model/embed_model.py writes model_ops.h) with
 *   static inline int ma_op_selected(int32_t builtin_code);  and  MA_KEEP_CUSTOM_OPS 0|1
 * Every registry entry goes through MA_KEEP, which then folds to NULL at compile time for an
 * operator the model does not use, so the linker (--gc-sections) drops that kernel's code.
 * Without the header every kernel is kept (host builds, the upload probe, the library). */
#ifndef MA_KERNEL_SELECT_H
#define MA_KERNEL_SELECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef MA_SELECTED_OPS_H
#include MA_SELECTED_OPS_H
#define MA_KEEP(op, kernel) (ma_op_selected(op) ? (kernel) : NULL)
#else
#define MA_KEEP(op, kernel) (kernel)
#define MA_KEEP_CUSTOM_OPS 1
#endif
#define MA_KEEP_CUSTOM(kernel) (MA_KEEP_CUSTOM_OPS ? (kernel) : NULL)

#endif
