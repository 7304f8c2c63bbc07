/* Arena report encoder (see ma_wire.h and docs/wire_format.md). */
#include "ma_wire.h"

#include <string.h>

enum {
  WIRE_VERSION = 1,
  TAG_STATUS = 1,
  TAG_ARENA = 2,
  TAG_CATEGORY = 3,
  TAG_TENSOR = 4,
  TAG_CYCLES = 5,
  TAG_OUTPUT = 6,
  TAG_INFO = 7,
  TAG_OP = 8,
  TAG_STACK = 9,
  BYTES_PER_LINE = 32,
  MAX_TEXT = 0xFFF0, /* a field length is 16 bits: longer text is cut */
  MAX_NAME = 255
};

/* ---------------------------------------------------------------- CRC-32 */

uint32_t ma_wire_crc32(uint32_t crc, const void *data, size_t n) {
  /* Nibble table: 64 bytes of flash instead of 1 KiB, fast enough for a report. */
  static const uint32_t table[16] = {
      0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu, 0x76dc4190u, 0x6b6b51f4u,
      0x4db26158u, 0x5005713cu, 0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu,
      0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu};
  const uint8_t *p = (const uint8_t *)data;
  crc = ~crc;
  for (size_t i = 0; i < n; i++) {
    crc = (crc >> 4) ^ table[(crc ^ p[i]) & 0x0f];
    crc = (crc >> 4) ^ table[(crc ^ (uint32_t)(p[i] >> 4)) & 0x0f];
  }
  return ~crc;
}

/* ---------------------------------------------------------------- text report */

static void put_str(ma_wire_put_fn put, void *ctx, const char *s) {
  put(ctx, s, strlen(s));
}

static void put_u32(ma_wire_put_fn put, void *ctx, uint32_t v) {
  char buf[10];
  size_t n = sizeof buf;
  do {
    buf[--n] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0u);
  put(ctx, buf + n, sizeof buf - n);
}

static void put_i32(ma_wire_put_fn put, void *ctx, int32_t v) {
  if (v < 0) {
    put(ctx, "-", 1);
    put_u32(put, ctx, 0u - (uint32_t)v);
  } else {
    put_u32(put, ctx, (uint32_t)v);
  }
}

static void put_region(ma_wire_put_fn put, void *ctx, const char *which, uint32_t v) {
  put_str(put, ctx, "[RecordingMicroAllocator] Arena allocation ");
  put_str(put, ctx, which);
  put(ctx, " ", 1);
  put_u32(put, ctx, v);
  put_str(put, ctx, " bytes\r\n");
}

void ma_wire_emit_text(const ma_wire_report *r, ma_wire_put_fn put, void *ctx) {
  if (r->status != 0) {
    put_str(put, ctx, "[microarena] error ");
    put_i32(put, ctx, r->status);
    put_str(put, ctx, ": ");
    put_str(put, ctx, r->message ? r->message : "(no message)");
    put_str(put, ctx, "\r\n");
  }
  if (!r->has_arena) return;
  put_region(put, ctx, "total", r->total);
  put_region(put, ctx, "head", r->head);
  put_region(put, ctx, "tail", r->tail);
  for (size_t i = 0; i < r->n_categories; i++) {
    const ma_wire_category *c = &r->categories[i];
    put_str(put, ctx, "[RecordingMicroAllocator] '");
    put_str(put, ctx, c->name);
    put_str(put, ctx, "' used ");
    put_u32(put, ctx, c->used);
    put_str(put, ctx, " bytes with alignment overhead (requested ");
    put_u32(put, ctx, c->requested);
    put_str(put, ctx, " bytes for ");
    put_u32(put, ctx, c->count);
    put(ctx, " ", 1);
    put_str(put, ctx, c->unit);
    put_str(put, ctx, ")\r\n");
  }
}

/* ---------------------------------------------------------------- record */

/* Payload bytes flow into a sink that either measures (pass 1) or writes hex lines (pass 2). */
typedef struct {
  uint32_t len, crc;
  ma_wire_put_fn put; /* NULL while measuring */
  void *ctx;
  uint32_t seq;
  size_t fill;
  uint8_t line[BYTES_PER_LINE];
} sink;

static const char hex_digits[] = "0123456789abcdef";

static void put_hex(ma_wire_put_fn put, void *ctx, uint32_t v, int digits) {
  char buf[8];
  for (int i = digits - 1; i >= 0; i--) {
    buf[i] = hex_digits[v & 0xfu];
    v >>= 4;
  }
  put(ctx, buf, (size_t)digits);
}

static void flush_line(sink *s) {
  if (s->fill == 0) return;
  char hex[2 * BYTES_PER_LINE];
  for (size_t i = 0; i < s->fill; i++) {
    hex[2 * i] = hex_digits[s->line[i] >> 4];
    hex[2 * i + 1] = hex_digits[s->line[i] & 0xfu];
  }
  put_str(s->put, s->ctx, "@MA1 D ");
  put_hex(s->put, s->ctx, s->seq & 0xffffu, 4);
  s->put(s->ctx, " ", 1);
  s->put(s->ctx, hex, 2 * s->fill);
  put_str(s->put, s->ctx, "\r\n");
  s->seq++;
  s->fill = 0;
}

static void sink_bytes(sink *s, const void *data, size_t n) {
  s->len += (uint32_t)n;
  s->crc = ma_wire_crc32(s->crc, data, n);
  if (s->put == NULL) return;
  const uint8_t *p = (const uint8_t *)data;
  for (size_t i = 0; i < n; i++) {
    s->line[s->fill++] = p[i];
    if (s->fill == BYTES_PER_LINE) flush_line(s);
  }
}

static void sink_u8(sink *s, uint32_t v) {
  uint8_t b = (uint8_t)v;
  sink_bytes(s, &b, 1);
}

/* Little-endian regardless of the target's byte order. */
static void sink_le(sink *s, uint64_t v, int n) {
  uint8_t b[8];
  for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
  sink_bytes(s, b, (size_t)n);
}

static void sink_field(sink *s, int tag, size_t len) {
  sink_u8(s, (uint32_t)tag);
  sink_le(s, len, 2);
}

static size_t capped_len(const char *text, size_t cap) {
  if (text == NULL) return 0;
  size_t n = strlen(text);
  return n < cap ? n : cap;
}

static void sink_categories(sink *s, const ma_wire_report *r) {
  for (size_t i = 0; i < r->n_categories; i++) {
    const ma_wire_category *c = &r->categories[i];
    size_t name = capped_len(c->name, MAX_NAME);
    size_t unit = capped_len(c->unit, MAX_TEXT - MAX_NAME - 13);
    sink_field(s, TAG_CATEGORY, 13 + name + unit);
    sink_le(s, c->used, 4);
    sink_le(s, c->requested, 4);
    sink_le(s, c->count, 4);
    sink_u8(s, (uint32_t)name);
    sink_bytes(s, c->name, name);
    sink_bytes(s, c->unit, unit);
  }
}

static void sink_tensors(sink *s, const ma_wire_report *r) {
  if (r->tensor_at == NULL) return;
  for (size_t i = 0; i < r->n_tensors; i++) {
    ma_wire_tensor t;
    memset(&t, 0, sizeof t);
    r->tensor_at(r->tensor_src, i, &t);
    sink_field(s, TAG_TENSOR, 15);
    sink_le(s, t.subgraph, 2);
    sink_le(s, t.index, 4);
    sink_le(s, t.offset, 4);
    sink_le(s, t.bytes, 4);
    sink_u8(s, t.region);
  }
}

static void sink_ops(sink *s, const ma_wire_report *r) {
  for (size_t i = 0; i < r->n_ops; i++) {
    const ma_wire_op *o = &r->ops[i];
    sink_field(s, TAG_OP, 18);
    sink_le(s, o->subgraph, 2);
    sink_le(s, o->op, 4);
    sink_le(s, o->code, 4);
    sink_le(s, o->ticks, 8);
  }
}

/* The whole payload; called once per pass, so it must depend only on *r. */
static void sink_payload(sink *s, const ma_wire_report *r) {
  sink_u8(s, WIRE_VERSION);
  size_t msg = capped_len(r->message, MAX_TEXT);
  sink_field(s, TAG_STATUS, 8 + msg);
  sink_le(s, (uint32_t)r->status, 4);
  sink_le(s, r->bytes_needed, 4);
  sink_bytes(s, r->message, msg);
  if (r->has_arena) {
    sink_field(s, TAG_ARENA, 20);
    sink_le(s, r->arena_size, 4);
    sink_le(s, r->head, 4);
    sink_le(s, r->tail, 4);
    sink_le(s, r->total, 4);
    sink_le(s, r->temp_peak, 4);
  }
  sink_categories(s, r);
  sink_tensors(s, r);
  if (r->has_cycles) {
    sink_field(s, TAG_CYCLES, 12);
    sink_le(s, r->cycles, 8);
    sink_le(s, r->clock_hz, 4);
  }
  if (r->has_output) {
    sink_field(s, TAG_OUTPUT, 8);
    sink_le(s, r->output_crc, 4);
    sink_le(s, r->output_bytes, 4);
  }
  if (r->has_stack) {
    sink_field(s, TAG_STACK, 12);
    sink_le(s, r->stack_used, 4);
    sink_le(s, r->stack_size, 4);
    sink_le(s, r->stack_measured, 4);
  }
  sink_ops(s, r);
  size_t info = capped_len(r->info, MAX_TEXT);
  if (info > 0) {
    sink_field(s, TAG_INFO, info);
    sink_bytes(s, r->info, info);
  }
}

void ma_wire_emit_record(const ma_wire_report *r, ma_wire_put_fn put, void *ctx) {
  sink s;
  memset(&s, 0, sizeof s);
  sink_payload(&s, r);
  const uint32_t len = s.len, crc = s.crc;

  put_str(put, ctx, "@MA1 B ");
  put_hex(put, ctx, len, 8);
  put(ctx, " ", 1);
  put_hex(put, ctx, crc, 8);
  put_str(put, ctx, "\r\n");

  memset(&s, 0, sizeof s);
  s.put = put;
  s.ctx = ctx;
  sink_payload(&s, r);
  flush_line(&s);

  put_str(put, ctx, "@MA1 E ");
  put_hex(put, ctx, crc, 8);
  put_str(put, ctx, "\r\n");
}

void ma_wire_emit(const ma_wire_report *r, ma_wire_put_fn put, void *ctx) {
  ma_wire_emit_text(r, put, ctx);
  ma_wire_emit_record(r, put, ctx);
}
