/* UART of boards whose board.json says "uart": "cmsdk" (ARM MPS2 FPGA images, QEMU):
 * CMSDK UART0 at build.uart_base, clocked by the system clock. */
#include "board.h"
#include "uart_cmsdk.h"

void board_uart_init(void) { cmsdk_uart_init(BOARD_UART_BASE, (uint32_t)F_CPU, 115200u); }
void board_uart_putc(char c) { cmsdk_uart_putc(BOARD_UART_BASE, c); }
