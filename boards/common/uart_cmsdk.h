/* ARM CMSDK APB UART (MPS2 FPGA images and their QEMU models). */
#ifndef UART_CMSDK_H
#define UART_CMSDK_H

#include <stdint.h>

#define CMSDK_UART_DATA(base) (*(volatile uint32_t *)((base) + 0x00u))
#define CMSDK_UART_STATE(base) (*(volatile uint32_t *)((base) + 0x04u))
#define CMSDK_UART_CTRL(base) (*(volatile uint32_t *)((base) + 0x08u))
#define CMSDK_UART_BAUDDIV(base) (*(volatile uint32_t *)((base) + 0x10u))

static inline void cmsdk_uart_init(uint32_t base, uint32_t pclk_hz, uint32_t baud) {
  CMSDK_UART_BAUDDIV(base) = pclk_hz / baud; /* the model needs >= 16 */
  CMSDK_UART_CTRL(base) = 0x1u;              /* TX enable: without it nothing is sent */
}

static inline void cmsdk_uart_putc(uint32_t base, char c) {
  while (CMSDK_UART_STATE(base) & 0x1u) { /* TX buffer full */
  }
  CMSDK_UART_DATA(base) = (uint32_t)(unsigned char)c;
}

#endif
