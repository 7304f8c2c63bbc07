/* Host test driver for firmware/src/wire/report_wire.c (built and run by
 * tests/device/test_wire_c.py).
 *
 * Reads a report description from stdin, one item per line, and writes what the firmware
 * would send to stdout:
 *   status <code> <bytes_needed>      message <text>        info <text>
 *   arena <size> <head> <tail> <total> <temp_peak>
 *   cycles <n> <hz>                   output <crc> <bytes>
 *   cat <used> <requested> <count> <name>|<unit>
 *   tensor <subgraph> <region> <index> <offset> <bytes>
 *   op <subgraph> <op> <code> <ticks>
 *   crc <hex bytes>                   (prints the CRC-32 of the bytes instead)
 *   mode text|record|both             (default both)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ma_wire.h"

enum { MAX_ITEMS = 4096, LINE = 70000 };

typedef struct {
  ma_wire_tensor t[MAX_ITEMS];
} tensor_list;

static void put_stdout(void *ctx, const char *s, size_t n) {
  (void)ctx;
  fwrite(s, 1, n, stdout);
}

static void tensor_at(const void *src, size_t i, ma_wire_tensor *out) {
  *out = ((const tensor_list *)src)->t[i];
}

static char *dup_text(const char *s) {
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d == NULL) exit(3);
  memcpy(d, s, n + 1);
  return d;
}

static void print_crc(const char *hex) {
  size_t n = strlen(hex) / 2;
  unsigned char *b = malloc(n + 1);
  if (b == NULL) exit(3);
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) exit(2);
    b[i] = (unsigned char)v;
  }
  printf("%08" PRIx32 "\n", ma_wire_crc32(0, b, n));
  free(b);
}

int main(void) {
  static char line[LINE];
  static tensor_list tensors;
  static ma_wire_op ops[MAX_ITEMS];
  static ma_wire_category cats[MAX_ITEMS];
  ma_wire_report r;
  memset(&r, 0, sizeof r);
  r.categories = cats;
  r.tensor_src = &tensors;
  r.tensor_at = tensor_at;
  r.ops = ops;
  char mode[16] = "both";

  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    char *arg = strchr(line, ' ');
    arg = arg ? arg + 1 : line + strlen(line);
    unsigned long long c = 0;
    unsigned a[5] = {0};
    long st = 0;
    if (strncmp(line, "status ", 7) == 0) {
      if (sscanf(arg, "%ld %u", &st, &a[0]) != 2) return 2;
      r.status = (int32_t)st;
      r.bytes_needed = a[0];
    } else if (strncmp(line, "message ", 8) == 0) {
      r.message = dup_text(arg);
    } else if (strncmp(line, "info ", 5) == 0) {
      r.info = dup_text(arg);
    } else if (strncmp(line, "arena ", 6) == 0) {
      if (sscanf(arg, "%u %u %u %u %u", &a[0], &a[1], &a[2], &a[3], &a[4]) != 5) return 2;
      r.has_arena = 1;
      r.arena_size = a[0], r.head = a[1], r.tail = a[2], r.total = a[3], r.temp_peak = a[4];
    } else if (strncmp(line, "cycles ", 7) == 0) {
      if (sscanf(arg, "%llu %u", &c, &a[0]) != 2) return 2;
      r.has_cycles = 1, r.cycles = c, r.clock_hz = a[0];
    } else if (strncmp(line, "output ", 7) == 0) {
      if (sscanf(arg, "%u %u", &a[0], &a[1]) != 2) return 2;
      r.has_output = 1, r.output_crc = a[0], r.output_bytes = a[1];
    } else if (strncmp(line, "stack ", 6) == 0) {
      if (sscanf(arg, "%u %u %u", &a[0], &a[1], &a[2]) != 3) return 2;
      r.has_stack = 1, r.stack_used = a[0], r.stack_size = a[1], r.stack_measured = a[2];
    } else if (strncmp(line, "cat ", 4) == 0) {
      int used = 0;
      if (sscanf(arg, "%u %u %u %n", &a[0], &a[1], &a[2], &used) != 3) return 2;
      char *name = dup_text(arg + used);
      char *bar = strchr(name, '|');
      if (bar == NULL || r.n_categories == MAX_ITEMS) return 2;
      *bar = '\0';
      ma_wire_category *k = &cats[r.n_categories++];
      k->used = a[0], k->requested = a[1], k->count = a[2], k->name = name, k->unit = bar + 1;
    } else if (strncmp(line, "tensor ", 7) == 0) {
      if (sscanf(arg, "%u %u %u %u %u", &a[0], &a[1], &a[2], &a[3], &a[4]) != 5) return 2;
      if (r.n_tensors == MAX_ITEMS) return 2;
      ma_wire_tensor *t = &tensors.t[r.n_tensors++];
      t->subgraph = (uint16_t)a[0], t->region = (uint8_t)a[1];
      t->index = a[2], t->offset = a[3], t->bytes = a[4];
    } else if (strncmp(line, "op ", 3) == 0) {
      unsigned long long ticks;
      if (sscanf(arg, "%u %u %u %llu", &a[0], &a[1], &a[2], &ticks) != 4) return 2;
      if (r.n_ops == MAX_ITEMS) return 2;
      ma_wire_op *o = &ops[r.n_ops++];
      o->subgraph = (uint16_t)a[0], o->op = a[1], o->code = a[2], o->ticks = ticks;
    } else if (strncmp(line, "crc ", 4) == 0) {
      print_crc(arg);
      return 0;
    } else if (strncmp(line, "mode ", 5) == 0) {
      snprintf(mode, sizeof mode, "%s", arg);
    } else if (line[0] != '\0') {
      return 2;
    }
  }
  if (strcmp(mode, "text") == 0) {
    ma_wire_emit_text(&r, put_stdout, NULL);
  } else if (strcmp(mode, "record") == 0) {
    ma_wire_emit_record(&r, put_stdout, NULL);
  } else {
    ma_wire_emit(&r, put_stdout, NULL);
  }
  return 0;
}
