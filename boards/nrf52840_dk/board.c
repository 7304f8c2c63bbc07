/* Nordic nRF52840 DK: UART0 with TXD on P0.06 and RXD on P0.08, the J-Link virtual COM port.
 * Clocks (nRF52840 product specification): the CPU runs at 64 MHz from HFINT after reset; the
 * UART has its own baud generator, so BAUDRATE takes the specification's 115200 constant.
 */
#include "board.h"

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define P0_OUTSET REG32(0x50000508u)
#define P0_PIN_CNF(n) REG32(0x50000700u + 4u * (n))
#define UART0_STARTTX REG32(BOARD_UART_BASE + 0x008u)
#define UART0_TXDRDY REG32(BOARD_UART_BASE + 0x11Cu)
#define UART0_ENABLE REG32(BOARD_UART_BASE + 0x500u)
#define UART0_PSELTXD REG32(BOARD_UART_BASE + 0x50Cu)
#define UART0_PSELRXD REG32(BOARD_UART_BASE + 0x514u)
#define UART0_TXD REG32(BOARD_UART_BASE + 0x51Cu)
#define UART0_BAUDRATE REG32(BOARD_UART_BASE + 0x524u)
#define BAUDRATE_115200 0x01D7E000u
#define TX_PIN 6u
#define RX_PIN 8u
#define HFINT_HZ ((uint32_t)F_CPU) /* board.json: build.f_cpu */

void board_uart_init(void) {
  P0_OUTSET = 1u << TX_PIN;          /* idle line high before the pin becomes an output */
  P0_PIN_CNF(TX_PIN) = 0x3u;         /* output, input buffer disconnected */
  P0_PIN_CNF(RX_PIN) = 0x0u;         /* input */
  UART0_PSELTXD = TX_PIN;
  UART0_PSELRXD = RX_PIN;
  UART0_BAUDRATE = BAUDRATE_115200;
  UART0_ENABLE = 4u;
  UART0_STARTTX = 1u;
}

void board_uart_putc(char c) {
  UART0_TXDRDY = 0u;
  UART0_TXD = (uint32_t)(unsigned char)c;
  while (UART0_TXDRDY == 0u) {
  }
}
