/* ARM MPS2+ AN500 (Cortex-M7), QEMU: CMSDK UART0 and clock. */
#include "board.h"
#include "uart_cmsdk.h"

/* UART0 of the FPGA image; the APB clock equals the 25 MHz system clock. */
#define UART0_BASE BOARD_UART_BASE /* board.json: build.uart_base */
#define SYSCLK_HZ ((uint32_t)F_CPU) /* board.json: build.f_cpu */

void board_uart_init(void) { cmsdk_uart_init(UART0_BASE, SYSCLK_HZ, 115200u); }
void board_uart_putc(char c) { cmsdk_uart_putc(UART0_BASE, c); }
const char *board_name(void) { return "mps2-an500"; }
uint32_t board_tick_hz(void) { return SYSCLK_HZ; }
