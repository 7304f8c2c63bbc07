/* ST NUCLEO-F746ZG: USART3 on PD8 (TX) / PD9 (RX), wired to the ST-LINK virtual COM port.
 * Clocks (RM0385): after reset the core, AHB and APB1 run from the 16 MHz HSI oscillator and
 * USART3 is clocked from PCLK1, so 115200 baud needs BRR = 16 MHz / 115200 (oversampling 16).
 * The PLL is left off: timing stays in reset-clock cycles, which SysTick counts exactly.
 */
#include "board.h"

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define RCC_AHB1ENR REG32(0x40023830u)   /* bit 3: GPIOD clock */
#define RCC_APB1ENR REG32(0x40023840u)   /* bit 18: USART3 clock */
#define GPIOD_MODER REG32(0x40020C00u)
#define GPIOD_AFRH REG32(0x40020C24u)
#define USART3_CR1 REG32(BOARD_UART_BASE) /* board.json: build.uart_base */
#define USART3_BRR REG32(BOARD_UART_BASE + 0x0Cu)
#define USART3_ISR REG32(BOARD_UART_BASE + 0x1Cu)
#define USART3_TDR REG32(BOARD_UART_BASE + 0x28u)
#define HSI_HZ ((uint32_t)F_CPU) /* board.json: build.f_cpu */
#define BAUD 115200u

void board_uart_init(void) {
  RCC_AHB1ENR |= 1u << 3;
  RCC_APB1ENR |= 1u << 18;
  (void)RCC_APB1ENR; /* read back: the clock must be running before the peripheral is touched */
  GPIOD_MODER = (GPIOD_MODER & ~(0xFu << 16)) | (0xAu << 16); /* PD8, PD9: alternate function */
  GPIOD_AFRH = (GPIOD_AFRH & ~0xFFu) | 0x77u;                 /* AF7 = USART3 */
  USART3_BRR = (HSI_HZ + BAUD / 2u) / BAUD;
  USART3_CR1 = (1u << 3) | (1u << 0); /* TE, UE */
}

void board_uart_putc(char c) {
  while ((USART3_ISR & (1u << 7)) == 0u) { /* TXE: transmit data register empty */
  }
  USART3_TDR = (uint32_t)(unsigned char)c;
}
