/* Data types shared by the public API (microarena.h) and the kernel contract (ma_kernel.h):
 * status codes, tensor element types and the tensor descriptor. */
#ifndef MA_TYPES_H
#define MA_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MA_MAX_DIMS 6

typedef enum {
  MA_OK = 0,
  MA_ERR_MODEL,       /* malformed or hostile model */
  MA_ERR_UNSUPPORTED, /* operator, type or option this runtime lacks */
  MA_ERR_ARENA,       /* arena too small (message says how many bytes are needed) */
  MA_ERR_PLAN,        /* invalid offline plan */
  MA_ERR_ARG,         /* bad argument from the caller */
  MA_ERR_KERNEL       /* a kernel failed at prepare or eval */
} ma_status;

/* Values of the TFLite schema's TensorType enum. */
typedef enum {
  MA_FLOAT32 = 0, MA_FLOAT16 = 1, MA_INT32 = 2, MA_UINT8 = 3, MA_INT64 = 4, MA_STRING = 5,
  MA_BOOL = 6, MA_INT16 = 7, MA_COMPLEX64 = 8, MA_INT8 = 9, MA_FLOAT64 = 10,
  MA_COMPLEX128 = 11, MA_UINT64 = 12, MA_RESOURCE = 13, MA_VARIANT = 14, MA_UINT32 = 15,
  MA_UINT16 = 16, MA_INT4 = 17
} ma_type;

typedef struct {
  const float *scale;        /* NULL when not quantized */
  const int64_t *zero_point; /* points into the model (little-endian int64) */
  int32_t count;             /* number of scales: 1 = per tensor, >1 = per channel */
  int32_t dim;               /* quantized dimension when per channel */
} ma_quant;

typedef struct {
  void *data;          /* arena (head), model (constants) or tail (variables) */
  size_t bytes;
  int32_t dims[MA_MAX_DIMS];
  int32_t ndims;
  uint8_t type;        /* ma_type */
  uint8_t is_const;
  uint8_t is_variable;
  ma_quant quant;
  int32_t index;       /* tensor index within its subgraph */
} ma_tensor;

/* Tensor helpers. */
int32_t ma_num_elements(const ma_tensor *t);
size_t ma_type_size(uint8_t type); /* bytes per element, 0 for a type without a fixed size */

#ifdef __cplusplus
}
#endif
#endif
