/* Board side of the model upload protocol (docs/wire_format.md, "Model upload"): checks each
 * line the host sends, stores the model and says what to reply. Pure C11 with no hardware,
 * heap or globals, so the host tests run it as it is.
 */
#ifndef UPLOAD_RX_H
#define UPLOAD_RX_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint8_t *buf;      /* where the model goes (16-byte aligned for the runtime) */
  uint32_t cap;
  uint32_t size;     /* declared by the start line */
  uint32_t crc;      /* of the whole model, declared by the start line */
  uint32_t received; /* bytes stored so far, in order */
  uint32_t next_seq; /* sequence number expected next */
  int started;
} upload_rx;

typedef enum {
  UPLOAD_CONTINUE = 0, /* send the reply, read the next line */
  UPLOAD_DONE = 1,     /* the model is complete and its CRC checked: send the reply, run it */
  UPLOAD_IGNORED = 2   /* not an upload line (no reply) */
} upload_result;

void upload_rx_init(upload_rx *u, uint8_t *buf, uint32_t cap);

/* Handles one line (without its line end). Writes the reply line, NUL-terminated and without
 * a line end, into reply (at least 64 bytes). A ping (`@MAU P 0000 <linecrc>`) is answered with
 * the ready line and drops any upload in progress: a host asking is starting afresh. */
upload_result upload_rx_line(upload_rx *u, const char *line, size_t n, char *reply,
                             size_t reply_cap);

/* The ready line, `@MAU R <capacity:8 hex>`, into reply (at least 64 bytes). */
void upload_rx_ready(const upload_rx *u, char *reply, size_t reply_cap);

#endif
