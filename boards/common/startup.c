/* Cortex-M start-up shared by all boards (ARMv6-M, ARMv7-M and ARMv8-M Mainline): vector table, C runtime
 * initialisation, FPU enable, fault trapping and reporting, and the SysTick tick counter.
 * Linker scripts (boards/<board>/link.ld) provide the symbols below.
 */
#include <stdint.h>

#include "board.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _sstack, _estack;
/* Called as main(0, NULL), as newlib's crt0 does on bare metal: an application written with
 * main(int argc, char **argv) sees no arguments (one with main(void) ignores them). */
extern int main(int argc, char **argv);

#define REG32(addr) (*(volatile uint32_t *)(addr))
#define SCB_VTOR REG32(0xE000ED08u)
#define SCB_CCR REG32(0xE000ED14u)
#define SCB_SHCSR REG32(0xE000ED24u)
#define SCB_CFSR REG32(0xE000ED28u)
#define SCB_HFSR REG32(0xE000ED2Cu)
#define SCB_MMFAR REG32(0xE000ED34u)
#define SCB_BFAR REG32(0xE000ED38u)
#define SCB_CPACR REG32(0xE000ED88u)
#define SYST_CSR REG32(0xE000E010u)
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)
#define SYST_RELOAD 0x00FFFFFFu

void Reset_Handler(void);
void Fault_Handler(void);
void SysTick_Handler(void);
void Default_Handler(void);

typedef void (*vector_fn)(void);

/* 16 system exceptions; the application uses no peripheral interrupt. */
__attribute__((section(".isr_vector"), used)) static const vector_fn vector_table[16] = {
    (vector_fn)(uintptr_t)&_estack, Reset_Handler,
    Default_Handler, /* NMI */
    Fault_Handler,   /* HardFault */
    Fault_Handler,   /* MemManage */
    Fault_Handler,   /* BusFault */
    Fault_Handler,   /* UsageFault */
    Fault_Handler,   /* SecureFault (ARMv8-M), reserved elsewhere */
    0, 0, 0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,
    Default_Handler, /* PendSV */
    SysTick_Handler,
};

/* The one variable written from an interrupt: SysTick wraps every 2^24 ticks (under a second
 * at 25 MHz), so the wrap count must live outside the timer. Nothing else is global. */
static volatile uint32_t systick_wraps;

void SysTick_Handler(void) { systick_wraps = systick_wraps + 1u; }

uint64_t board_ticks(void) {
  uint32_t wraps, value;
  do {
    wraps = systick_wraps;
    value = SYST_CVR;
  } while (wraps != systick_wraps);
  return ((uint64_t)wraps << 24) + (uint64_t)(SYST_RELOAD - value);
}

static void tick_start(void) {
  SYST_RVR = SYST_RELOAD;
  SYST_CVR = 0u;
  SYST_CSR = 0x7u; /* processor clock, interrupt on wrap, enabled */
}

void board_init(void) {
  SCB_VTOR = (uint32_t)(uintptr_t)vector_table;
#if defined(__ARM_FP)
  SCB_CPACR |= (0xFu << 20); /* CP10, CP11 full access: hard-float code faults without it */
  __asm volatile("dsb\n isb" ::: "memory");
#endif
  /* Report faults precisely instead of escalating everything to HardFault. */
  SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18);
  SCB_CCR |= (1u << 4); /* DIV_0_TRP: integer division by zero is a bug, not 0 */
  board_uart_init();
  tick_start();
}

/* Stack high-water: the free RAM below the stack is painted with a pattern before main, and
 * the deepest word no longer holding it is how far the stack went. Painted down to twice the
 * budget (or the end of .bss), so an overflow is measured too, not just seen. */
#define STACK_PAINT 0xC5A3E16Bu
#define STACK_PAINT_SKIP 64u /* left unpainted below the painter's own stack pointer */

static uint32_t *stack_paint_low(void) {
  uintptr_t low = (uintptr_t)&_estack - 2u * ((uintptr_t)&_estack - (uintptr_t)&_sstack);
  if (low < (uintptr_t)&_ebss || low > (uintptr_t)&_estack) low = (uintptr_t)&_ebss;
  return (uint32_t *)((low + 3u) & ~(uintptr_t)3u);
}

/* Nothing lives below the stack pointer (an interrupt's frame is gone when it returns), so the
 * painting can start there; volatile keeps it a plain loop, not a memset call. */
void board_stack_paint(void) {
  uintptr_t sp;
  __asm volatile("mov %0, sp" : "=r"(sp));
  volatile uint32_t *top = (volatile uint32_t *)((sp - STACK_PAINT_SKIP) & ~(uintptr_t)3u);
  for (volatile uint32_t *p = stack_paint_low(); p < top; p++) *p = STACK_PAINT;
}

uint32_t board_stack_size(void) { return (uint32_t)((uintptr_t)&_estack - (uintptr_t)&_sstack); }

uint32_t board_stack_measured(void) {
  return (uint32_t)((uintptr_t)&_estack - (uintptr_t)stack_paint_low());
}

uint32_t board_stack_used(void) {
  const volatile uint32_t *p = stack_paint_low();
  while ((uintptr_t)p < (uintptr_t)&_estack && *p == STACK_PAINT) p++;
  return (uint32_t)((uintptr_t)&_estack - (uintptr_t)p);
}

void Reset_Handler(void) {
  board_stack_paint();
  const uint32_t *src = &_sidata;
  for (uint32_t *dst = &_sdata; dst < &_edata;) *dst++ = *src++;
  for (uint32_t *dst = &_sbss; dst < &_ebss;) *dst++ = 0u;
  board_init();
  board_exit(main(0, (char **)0));
}

static void put_reg(const char *name, uint32_t value) {
  board_puts(name);
  board_puts("=0x");
  board_put_hex32(value);
  board_puts(" ");
}

/* Called with the stacked exception frame (r0-r3, r12, lr, pc, xpsr). */
__attribute__((used, noreturn)) static void fault_report(const uint32_t *frame, uint32_t exc_return) {
  uint32_t ipsr;
  __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
  board_puts("\n*** FAULT ");
  put_reg("exception", ipsr & 0x1FFu);
  put_reg("pc", frame[6]);
  put_reg("lr", frame[5]);
  put_reg("xpsr", frame[7]);
  put_reg("cfsr", SCB_CFSR);
  put_reg("hfsr", SCB_HFSR);
  put_reg("mmfar", SCB_MMFAR);
  put_reg("bfar", SCB_BFAR);
  put_reg("exc_return", exc_return);
  board_puts("\n");
  board_exit(BOARD_EXIT_FAULT);
}

/* Finds the frame on whichever stack was active, then reports in C. */
__attribute__((naked)) void Fault_Handler(void) {
#if defined(__ARM_ARCH_6M__)
  /* ARMv6-M (M0/M0+ code): no IT blocks, TST takes registers only. */
  __asm volatile(
      "mov r1, lr\n"
      "movs r2, #4\n"
      "mrs r0, msp\n"
      "tst r1, r2\n"
      "beq 1f\n"
      "mrs r0, psp\n"
      "1: ldr r2, =fault_report\n"
      "bx r2\n");
#else
  __asm volatile(
      "tst lr, #4\n"
      "ite eq\n"
      "mrseq r0, msp\n"
      "mrsne r0, psp\n"
      "mov r1, lr\n"
      "b fault_report\n");
#endif
}

void Default_Handler(void) {
  board_puts("\n*** FAULT unexpected exception\n");
  board_exit(BOARD_EXIT_FAULT);
}

/* newlib's init code references these; there are no C++ constructors to run. */
void _init(void) {}
void _fini(void) {}
