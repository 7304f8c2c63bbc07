/* Host stand-in for the probe firmware, for tests/test_record_upload.py: the real board-side
 * upload code (firmware/probe/upload_rx.c) on stdin/stdout instead of a UART. Usage:
 *   driver <capacity> [<announced capacity>]
 * Prints a banner and the ready line, answers upload lines, and once the model is complete
 * reports it in the wire format: output_crc/output_bytes are the CRC and size of what arrived.
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
  upload_result r = UPLOAD_CONTINUE;
  while (r != UPLOAD_DONE && fgets(line, sizeof line, stdin) != NULL) {
    size_t n = strcspn(line, "\r\n");
    r = upload_rx_line(&u, line, n, reply, sizeof reply);
    if (reply[0] != '\0') printf("%s\r\n", reply);
    fflush(stdout);
  }
  if (r != UPLOAD_DONE) return 1;
  ma_wire_report rep;
  memset(&rep, 0, sizeof rep);
  rep.has_arena = 1;
  rep.arena_size = cap;
  rep.total = u.size;
  rep.has_output = 1;
  rep.output_crc = ma_wire_crc32(0, buf, u.size);
  rep.output_bytes = u.size;
  rep.info = "probe stand-in";
  ma_wire_emit(&rep, put_stdout, NULL);
  fflush(stdout);
  return 0;
}
