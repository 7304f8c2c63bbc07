/* Arena report encoder: the TFLM-style text report and the framed, CRC-checked record that
 * host/device/wire.py decodes (format: docs/wire_format.md).
 *
 * Output goes through a put callback (a UART write, a buffer, stdout), so the encoder needs
 * no heap, no globals and no printf. The record is produced in two passes over the same
 * fields (the first measures length and CRC for the start line), so nothing is buffered
 * beyond one output line on the stack.
 */
#ifndef MA_WIRE_H
#define MA_WIRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes n bytes of output (not NUL-terminated). */
typedef void (*ma_wire_put_fn)(void *ctx, const char *s, size_t n);

/* One RecordingMicroAllocator category, e.g. {"TfLiteEvalTensor data", "allocations", ...}. */
typedef struct {
  const char *name;
  const char *unit;
  uint32_t used;      /* bytes including alignment overhead */
  uint32_t requested; /* bytes asked for */
  uint32_t count;     /* number of allocations (of `unit`) */
} ma_wire_category;

typedef enum { MA_WIRE_HEAD = 0, MA_WIRE_TAIL = 1, MA_WIRE_MODEL = 2 } ma_wire_region;

/* Where one tensor lives: offset from the start of its region. */
typedef struct {
  uint16_t subgraph;
  uint8_t region; /* ma_wire_region */
  uint32_t index;
  uint32_t offset;
  uint32_t bytes;
} ma_wire_tensor;

/* One operator's time in one invoke (a profile): ticks at the record's clock_hz, including
 * the operators of subgraphs it runs. */
typedef struct {
  uint16_t subgraph;
  uint32_t op;   /* index in its subgraph */
  uint32_t code; /* builtin operator code, or a custom one (MA_CUSTOM_CODE_BASE up) */
  uint64_t ticks;
} ma_wire_op;

typedef struct {
  int32_t status;          /* ma_status: 0 = ok */
  const char *message;     /* error text, or NULL */
  uint32_t bytes_needed;   /* for an arena-too-small error: the arena size that would do */

  int has_arena;           /* the five sizes below are valid */
  uint32_t arena_size;     /* arena given to the runtime */
  uint32_t head, tail, total;
  uint32_t temp_peak;       /* high-water mark of temporary allocations */

  int has_cycles;
  uint64_t cycles;         /* cycles (or emulated ticks) for one invoke */
  uint32_t clock_hz;       /* rate of `cycles`, 0 if unknown */

  int has_output;
  uint32_t output_crc;     /* ma_wire_crc32 over all output tensors' bytes, in order */
  uint32_t output_bytes;

  int has_stack;           /* the stack high-water below is valid */
  uint32_t stack_used;     /* deepest stack use since start-up, bytes */
  uint32_t stack_size;     /* the board's stack budget (STACK_SIZE) */
  uint32_t stack_measured; /* depth measured: stack_used reaching it means "at least" */

  const char *info;        /* free text: board, firmware, model name; or NULL */

  const ma_wire_category *categories;
  size_t n_categories;

  /* Tensors are fetched one by one (twice each), so the caller needs no array of them. */
  void (*tensor_at)(const void *src, size_t i, ma_wire_tensor *out);
  const void *tensor_src;
  size_t n_tensors;

  const ma_wire_op *ops; /* per-operator profile, in the order operators first ran; or NULL */
  size_t n_ops;
} ma_wire_report;

/* CRC-32 (IEEE, as zlib): start with crc = 0 and chain calls over consecutive pieces. */
uint32_t ma_wire_crc32(uint32_t crc, const void *data, size_t n);

/* The human-readable lines, in TFLM's RecordingMicroAllocator wording. */
void ma_wire_emit_text(const ma_wire_report *r, ma_wire_put_fn put, void *ctx);

/* The framed record (@MA1 B / D / E lines). */
void ma_wire_emit_record(const ma_wire_report *r, ma_wire_put_fn put, void *ctx);

/* Both: the text, then the record. */
void ma_wire_emit(const ma_wire_report *r, ma_wire_put_fn put, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
