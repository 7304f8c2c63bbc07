/* What every board gives the firmware application: a UART to print on, a tick counter to time
 * with, and a way to finish. A board's UART lives in boards/<board>/board.c, or in
 * boards/common/board_uart_<kind>.c for a UART kind several boards share (board.json "uart");
 * the Cortex-M start-up and fault reporting shared by all boards live in boards/common/.
 */
#ifndef BOARD_H
#define BOARD_H

#include <stddef.h>
#include <stdint.h>

/* Exit statuses, also QEMU's exit code on emulated boards (semihosting SYS_EXIT_EXTENDED). */
#define BOARD_EXIT_OK 0
#define BOARD_EXIT_FAIL 1    /* the application reported an error */
#define BOARD_EXIT_FAULT 70  /* a CPU fault (HardFault, MemManage, BusFault, UsageFault) */

/* Board specific: UART (boards/<board>/board.c or common/board_uart_<kind>.c); name and
 * clock from board.json (common/board_facts.c). */
void board_uart_init(void);
void board_uart_putc(char c);
const char *board_name(void);
uint32_t board_tick_hz(void); /* the SysTick clock, i.e. the core clock */

/* Shared (boards/common/). */
void board_init(void);                     /* FPU, fault traps, UART, tick counter */
void board_write(const char *s, size_t n);
void board_puts(const char *s);            /* no newline added */
void board_put_u64(uint64_t v);
void board_put_i32(int32_t v);
void board_put_hex32(uint32_t v);          /* 8 hex digits, no prefix */
void board_put_hex8(uint8_t v);
uint64_t board_ticks(void);                /* SysTick ticks since board_init() */
/* Arguments given to the emulator (QEMU -append), "" on real boards; NULL when they cannot be
 * read (the emulator's command line, image path included, is longer than buf). Uses buf. */
const char *board_cmdline(char *buf, size_t size);
void board_exit(int status) __attribute__((noreturn));
/* Stack high-water (startup.c paints the free RAM below the stack before main): bytes of stack
 * used since the last painting, the budget (STACK_SIZE: board.json's build.stack_size), and the depth painted, which
 * `used` reaching means "at least". board_stack_paint() paints again below the caller. */
void board_stack_paint(void);
uint32_t board_stack_used(void);
uint32_t board_stack_size(void);
uint32_t board_stack_measured(void);

#endif
