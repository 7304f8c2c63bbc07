/* Contract between the microarena runtime core and its kernels.
 *
 * The core (model reader, arena, planner, interpreter) owns everything in this header;
 * kernels (firmware/src/kernels/) only use it. A kernel never allocates from the heap:
 * it asks the context for persistent memory (tail) or scratch (planned in the head).
 */
#ifndef MA_KERNEL_H
#define MA_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "ma_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ma_context;

/* A flatbuffer table of builtin options, read through ma_opt_* below. */
typedef struct {
  const uint8_t *table; /* NULL when the operator has no options */
  const uint8_t *end;   /* end of the model buffer, for bounds checks */
  uint8_t type;         /* BuiltinOptions union type */
} ma_options;

typedef struct {
  int32_t n_inputs, n_outputs;
  ma_tensor **inputs;   /* an entry is NULL for an optional input (-1 in the model) */
  ma_tensor **outputs;
  ma_options options;
  const uint8_t *custom_options;
  size_t custom_options_len;
  void *user_data;      /* set by prepare, from ma_persistent() */
  int32_t builtin_code;
  int32_t index;        /* operator index within its subgraph */
  int32_t variant;      /* the registered kernel's variant (see ma_kernel) */
  /* 0 when the core calls prepare. Prepare sets it to 1 when eval reads of its operands only
   * which are NULL and their data (shapes, types and quantization kept in user_data): on every
   * invoke the core then fills only inputs[i]->data and outputs[i]->data of the descriptors
   * and, of the node, its operand lists, user_data, builtin_code, index and variant (options
   * and custom options are not read from the model), which saves rebuilding each one. */
  int32_t eval_data_only;
} ma_node;

/* Lifetime of what a kernel is given (the core keeps only data pointers and user_data per
 * operator, and rebuilds each ma_node and its ma_tensor descriptors for every call):
 * - node, node->inputs/outputs and the ma_tensor they point to are valid only during the
 *   call; keep what eval needs in user_data (from ma_persistent), never those pointers;
 * - during prepare, data of a non-constant tensor is a placeholder (non-NULL when bytes > 0,
 *   not its final place): check shapes and types there, never read or write activations. */
typedef struct {
  ma_status (*prepare)(struct ma_context *ctx, ma_node *node);
  ma_status (*eval)(struct ma_context *ctx, ma_node *node);
  int32_t variant; /* which operator of a family one prepare/eval pair serves (node->variant) */
} ma_kernel;

/* Services the core gives kernels. All return NULL / an error status with a message set. */
void *ma_persistent(struct ma_context *ctx, size_t bytes);              /* tail, 16-aligned */
ma_status ma_request_scratch(struct ma_context *ctx, size_t bytes, int32_t *index); /* prepare */
void *ma_scratch(struct ma_context *ctx, int32_t index);                /* eval */
ma_status ma_fail(struct ma_context *ctx, ma_status status, const char *fmt, ...);

/* Builtin options accessors: slot is the field's index in the schema's options table. */
int32_t ma_opt_i32(const ma_options *o, int slot, int32_t dflt);
float ma_opt_f32(const ma_options *o, int slot, float dflt);
int32_t ma_opt_vec_len(const ma_options *o, int slot);            /* vector of int32 */
int32_t ma_opt_vec_i32(const ma_options *o, int slot, int32_t i); /* element i */

/* Registration: the kernel for a builtin operator code, or NULL (firmware/src/kernels/). */
const ma_kernel *ma_find_kernel(int32_t builtin_code);

/* Custom operators (CUSTOM with a name, e.g. TFLM's Signal* ops) are found by name and get an
 * operator code from MA_CUSTOM_CODE_BASE up, which ma_find_kernel maps like a builtin code. */
#define MA_CUSTOM_CODE_BASE 0x100000
int32_t ma_find_custom_code(const char *name, size_t len); /* -1 when not registered */
const char *ma_custom_op_name(int32_t code);               /* NULL for builtin codes */

/* The overlap rule of input `slot` of an operator's kernel (overlap.c): 1 if it has one, with
 * *any_offset set when every offset is safe, else *min_delta, the smallest safe offset of the
 * input minus that of the output in bytes; 0 if the input must never overlap the output. */
int mak_overlap_rule(struct ma_context *ctx, const ma_node *node, int32_t slot, int64_t *min_delta,
                     int *any_offset);

/* 1 if input `slot` of a CONCATENATION is copied in one piece (nothing before its axis), with
 * *at its byte offset inside the output: placed exactly there, it is copied onto itself. */
int mak_copied_in_place(const ma_node *node, int32_t slot, int64_t *at);

#ifdef __cplusplus
}
#endif
#endif
