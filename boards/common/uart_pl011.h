/* ARM PrimeCell PL011 UART (Stellaris LM3S6965 and its QEMU model). */
#ifndef UART_PL011_H
#define UART_PL011_H

#include <stdint.h>

#define PL011_DR(base) (*(volatile uint32_t *)((base) + 0x000u))
#define PL011_FR(base) (*(volatile uint32_t *)((base) + 0x018u))
#define PL011_IBRD(base) (*(volatile uint32_t *)((base) + 0x024u))
#define PL011_FBRD(base) (*(volatile uint32_t *)((base) + 0x028u))
#define PL011_LCRH(base) (*(volatile uint32_t *)((base) + 0x02Cu))
#define PL011_CTL(base) (*(volatile uint32_t *)((base) + 0x030u))

static inline void pl011_init(uint32_t base, uint32_t uartclk_hz, uint32_t baud) {
  /* Divisor = clk / (16 * baud) as 16.6 fixed point, rounded. */
  uint32_t div64 = (uint32_t)(((uint64_t)uartclk_hz * 4u + baud / 2u) / baud);
  PL011_CTL(base) = 0u;
  PL011_IBRD(base) = div64 >> 6;
  PL011_FBRD(base) = div64 & 0x3Fu;
  PL011_LCRH(base) = (0x3u << 5) | (1u << 4); /* 8 data bits, FIFOs on */
  PL011_CTL(base) = (1u << 0) | (1u << 8) | (1u << 9); /* UARTEN, TXE, RXE */
}

static inline void pl011_putc(uint32_t base, char c) {
  while (PL011_FR(base) & (1u << 5)) { /* TXFF: transmit FIFO full */
  }
  PL011_DR(base) = (uint32_t)(unsigned char)c;
}

#endif
