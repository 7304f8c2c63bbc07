/* Model upload, board side (upload_rx.h). Host lines:
 *   @MAU S <seq:4> <size:8> <crc:8> <linecrc:8>      start (seq 0000)
 *   @MAU C <seq:4> <offset:8> <hex data> <linecrc:8>  chunk
 *   @MAU F <seq:4> <linecrc:8>                        finish
 *   @MAU P 0000 <linecrc:8>                           ping: are you ready?
 * linecrc is the CRC-32 of the line up to the space before it. Replies:
 *   @MAU A <seq>  accepted    @MAU N <seq> <why>  resend    @MAU X <seq> <why>  give up
 *   @MAU R <capacity:8>  ready (to a ping, and unasked when the probe starts waiting)
 */
#include "upload_rx.h"

#include <string.h>

#include "ma_wire.h"

#define MARKER "@MAU "
#define MARKER_LEN 5u

typedef struct {
  const char *p, *end;
} cursor;

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A space-separated field of exactly `digits` hex digits (1..8). */
static int take_hex(cursor *c, int digits, uint32_t *out) {
  if (c->p < c->end && *c->p == ' ') c->p++;
  uint32_t v = 0;
  for (int i = 0; i < digits; i++) {
    if (c->p >= c->end) return 0;
    int h = hex_value(*c->p++);
    if (h < 0) return 0;
    v = (v << 4) | (uint32_t)h;
  }
  if (c->p < c->end && *c->p != ' ') return 0;
  *out = v;
  return 1;
}

static void put_hex(char *dst, uint32_t v, int digits) {
  for (int i = digits - 1; i >= 0; i--) {
    dst[i] = "0123456789abcdef"[v & 0xfu];
    v >>= 4;
  }
}

/* "@MAU <kind> <seq>" then " <why>" if why is not NULL. */
static void reply_with(char *reply, size_t cap, char kind, uint32_t seq, int seq_known,
                       const char *why) {
  if (cap < 64) return;
  memcpy(reply, MARKER, MARKER_LEN);
  reply[5] = kind;
  reply[6] = ' ';
  if (seq_known) {
    put_hex(reply + 7, seq, 4);
  } else {
    memcpy(reply + 7, "----", 4);
  }
  size_t n = 11;
  if (why != NULL) {
    size_t w = strlen(why);
    if (w > cap - n - 2) w = cap - n - 2;
    reply[n++] = ' ';
    memcpy(reply + n, why, w);
    n += w;
  }
  reply[n] = '\0';
}

void upload_rx_ready(const upload_rx *u, char *reply, size_t reply_cap) {
  if (reply_cap < 64) return;
  memcpy(reply, MARKER "R ", MARKER_LEN + 2);
  put_hex(reply + MARKER_LEN + 2, u->cap, 8);
  reply[MARKER_LEN + 10] = '\0';
}

void upload_rx_init(upload_rx *u, uint8_t *buf, uint32_t cap) {
  memset(u, 0, sizeof *u);
  u->buf = buf;
  u->cap = cap;
}

static upload_result on_start(upload_rx *u, cursor *c, uint32_t seq, char *reply, size_t cap) {
  uint32_t size, crc;
  if (seq != 0 || !take_hex(c, 8, &size) || !take_hex(c, 8, &crc) || c->p != c->end) {
    reply_with(reply, cap, 'N', seq, 1, "malformed start");
    return UPLOAD_CONTINUE;
  }
  if (size > u->cap || size == 0) {
    reply_with(reply, cap, 'X', seq, 1, size == 0 ? "empty model" : "model too big for the probe");
    return UPLOAD_CONTINUE;
  }
  u->size = size, u->crc = crc, u->received = 0, u->next_seq = 1, u->started = 1;
  reply_with(reply, cap, 'A', seq, 1, NULL);
  return UPLOAD_CONTINUE;
}

static upload_result on_chunk(upload_rx *u, cursor *c, uint32_t seq, char *reply, size_t cap) {
  uint32_t offset;
  if (!take_hex(c, 8, &offset) || c->p >= c->end || *c->p != ' ') {
    reply_with(reply, cap, 'N', seq, 1, "malformed chunk");
    return UPLOAD_CONTINUE;
  }
  c->p++;
  size_t digits = (size_t)(c->end - c->p);
  if (digits == 0 || digits % 2 != 0 || offset != u->received ||
      digits / 2 > u->size - u->received) {
    reply_with(reply, cap, 'N', seq, 1, "chunk does not fit");
    return UPLOAD_CONTINUE;
  }
  for (size_t i = 0; i < digits; i += 2) {
    int hi = hex_value(c->p[i]), lo = hex_value(c->p[i + 1]);
    if (hi < 0 || lo < 0) {
      reply_with(reply, cap, 'N', seq, 1, "chunk is not hex");
      return UPLOAD_CONTINUE;
    }
  }
  for (size_t i = 0; i < digits; i += 2) {
    u->buf[u->received++] = (uint8_t)(hex_value(c->p[i]) << 4 | hex_value(c->p[i + 1]));
  }
  u->next_seq++;
  reply_with(reply, cap, 'A', seq, 1, NULL);
  return UPLOAD_CONTINUE;
}

static upload_result on_finish(upload_rx *u, uint32_t seq, char *reply, size_t cap) {
  if (u->received != u->size) {
    reply_with(reply, cap, 'N', seq, 1, "model incomplete");
    return UPLOAD_CONTINUE;
  }
  if (ma_wire_crc32(0, u->buf, u->size) != u->crc) {
    u->started = 0;
    reply_with(reply, cap, 'X', seq, 1, "model CRC mismatch");
    return UPLOAD_CONTINUE;
  }
  reply_with(reply, cap, 'A', seq, 1, NULL);
  return UPLOAD_DONE;
}

upload_result upload_rx_line(upload_rx *u, const char *line, size_t n, char *reply,
                             size_t reply_cap) {
  reply[0] = '\0';
  const char *at = NULL;
  for (size_t i = 0; i + MARKER_LEN <= n; i++) {
    if (memcmp(line + i, MARKER, MARKER_LEN) == 0) {
      at = line + i;
      break;
    }
  }
  if (at == NULL) return UPLOAD_IGNORED;
  const char *end = line + n;
  /* The line CRC covers everything before the last space. */
  const char *last_space = end;
  while (last_space > at && *(last_space - 1) != ' ') last_space--;
  cursor crc_c = {last_space - 1, end};
  uint32_t line_crc, seq;
  cursor c = {at + MARKER_LEN + 1, end};
  int seq_ok = (size_t)(end - at) > MARKER_LEN + 1 && take_hex(&c, 4, &seq);
  if (last_space <= at + 1 || (size_t)(end - last_space) != 8 || !take_hex(&crc_c, 8, &line_crc) ||
      ma_wire_crc32(0, at, (size_t)(last_space - 1 - at)) != line_crc || !seq_ok) {
    reply_with(reply, reply_cap, 'N', seq_ok ? seq : 0, seq_ok, "line damaged");
    return UPLOAD_CONTINUE;
  }
  c.end = last_space - 1;
  char kind = at[MARKER_LEN];
  if (kind == 'P') {
    if (seq != 0 || c.p != c.end) {
      reply_with(reply, reply_cap, 'N', seq, 1, "malformed ping");
      return UPLOAD_CONTINUE;
    }
    u->started = 0;
    upload_rx_ready(u, reply, reply_cap);
    return UPLOAD_CONTINUE;
  }
  if (kind == 'S') return on_start(u, &c, seq, reply, reply_cap);
  if (!u->started) {
    reply_with(reply, reply_cap, 'N', seq, 1, "no upload started");
    return UPLOAD_CONTINUE;
  }
  if (seq + 1 == u->next_seq) { /* our ack was lost and the host sent the line again */
    reply_with(reply, reply_cap, 'A', seq, 1, NULL);
    return UPLOAD_CONTINUE;
  }
  if (seq != u->next_seq) {
    reply_with(reply, reply_cap, 'N', seq, 1, "out of order");
    return UPLOAD_CONTINUE;
  }
  if (kind == 'C') return on_chunk(u, &c, seq, reply, reply_cap);
  if (kind == 'F') return on_finish(u, seq, reply, reply_cap);
  reply_with(reply, reply_cap, 'N', seq, 1, "unknown line kind");
  return UPLOAD_CONTINUE;
}
