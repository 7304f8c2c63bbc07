/* Minimal number printing over the board UART: no printf, so no heap and no locale code. */
#include "board.h"

void board_write(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\n') board_uart_putc('\r');
    board_uart_putc(s[i]);
  }
}

void board_puts(const char *s) {
  size_t n = 0;
  while (s[n] != '\0') n++;
  board_write(s, n);
}

void board_put_u64(uint64_t v) {
  char buf[21];
  size_t i = sizeof buf;
  do {
    buf[--i] = (char)('0' + (int)(v % 10u));
    v /= 10u;
  } while (v != 0u);
  board_write(&buf[i], sizeof buf - i);
}

void board_put_i32(int32_t v) {
  if (v < 0) {
    board_uart_putc('-');
    board_put_u64((uint64_t)(-(int64_t)v));
  } else {
    board_put_u64((uint64_t)v);
  }
}

static char hex_digit(unsigned v) { return "0123456789abcdef"[v & 0xfu]; }

void board_put_hex32(uint32_t v) {
  for (int shift = 28; shift >= 0; shift -= 4) board_uart_putc(hex_digit(v >> shift));
}

void board_put_hex8(uint8_t v) {
  board_uart_putc(hex_digit(v >> 4));
  board_uart_putc(hex_digit(v));
}
