/* TI Stellaris LM3S6965 evaluation board: UART0 (PL011) on PA0/PA1, 12 MHz system clock. */
#include "board.h"
#include "uart_pl011.h"

#define SYSCTL_RCGC1 (*(volatile uint32_t *)0x400FE104u) /* bit 0: UART0 clock */
#define SYSCTL_RCGC2 (*(volatile uint32_t *)0x400FE108u) /* bit 0: GPIO port A clock */
#define GPIOA_AFSEL (*(volatile uint32_t *)0x40004420u)
#define GPIOA_DEN (*(volatile uint32_t *)0x4000451Cu)
#define UART0_BASE BOARD_UART_BASE /* board.json: build.uart_base */
#define SYSCLK_HZ ((uint32_t)F_CPU) /* board.json: build.f_cpu */

void board_uart_init(void) {
  SYSCTL_RCGC1 |= 1u;
  SYSCTL_RCGC2 |= 1u;
  GPIOA_AFSEL |= 0x3u; /* PA0 = U0Rx, PA1 = U0Tx */
  GPIOA_DEN |= 0x3u;
  pl011_init(UART0_BASE, SYSCLK_HZ, 115200u);
}

void board_uart_putc(char c) { pl011_putc(UART0_BASE, c); }
