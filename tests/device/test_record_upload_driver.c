/* Host stand-in for the probe firmware, for tests/device/test_record_upload.py: the real board-side
 * upload code (firmware/apps/probe/upload_rx.c) on stdin/stdout instead of a UART. Usage:
 *   driver <capacity> [<announced capacity>]
 * Prints a banner and the ready line, answers upload lines, and each time a model is complete
 * reports it in the wire format (output_crc/output_bytes are the CRC and size of what arrived)
 * and waits for the next one, as the probe does. Exit status 0 if a model arrived by the end of
 * the input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ma_wire.h"
#include "upload_rx.h"

static void put_stdout(void *ctx, const char *s, size_t n) {
  (void)ctx;
  fwrite(s, 1, n, stdout);
}

static void report(const upload_rx *u) {
  ma_wire_report rep;
  memset(&rep, 0, sizeof rep);
  rep.has_arena = 1;
  rep.arena_size = u->cap;
  rep.total = u->size;
  rep.has_output = 1;
  rep.output_crc = ma_wire_crc32(0, u->buf, u->size);
  rep.output_bytes = u->size;
  rep.info = "probe stand-in";
  ma_wire_emit(&rep, put_stdout, NULL);
}

int main(int argc, char **argv) {
  static uint8_t buf[4u << 20];
  static char line[4096];
  char reply[96];
  if (argc < 2) return 2;
  uint32_t cap = (uint32_t)strtoul(argv[1], NULL, 0);
  uint32_t announced = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : cap;
  if (cap > sizeof buf) return 2;
  upload_rx u;
  upload_rx_init(&u, buf, cap);
  printf("probe stand-in booting\r\n@MAU R %08lx\r\n", (unsigned long)announced);
  fflush(stdout);
  int models = 0;
  while (fgets(line, sizeof line, stdin) != NULL) {
    size_t n = strcspn(line, "\r\n");
    upload_result r = upload_rx_line(&u, line, n, reply, sizeof reply);
    if (reply[0] != '\0') printf("%s\r\n", reply);
    if (r == UPLOAD_DONE) {
      report(&u);
      models++;
      upload_rx_init(&u, buf, cap);
    }
    fflush(stdout);
  }
  return models > 0 ? 0 : 1;
}
