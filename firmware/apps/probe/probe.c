/* Model-upload probe: receives a .tflite over the UART (upload_rx.c), loads it into its arena
 * with the microarena runtime, invokes it once on a deterministic input and reports the arena in
 * the wire format (ma_wire_interp.h). Built by host/device/probe.py for CMSDK-UART boards (mps2-an385,
 * -an386, -an500); run by `python -m host.record --board <board> --upload model.tflite`.
 *
 * A refused upload or a model that fails (does not load, arena too small, invoke error) is
 * reported and the probe waits for the next upload. After a model that ran, an emulated probe
 * exits with status 0 (so the emulator's exit status is the run's) unless its command line says
 * "serve"; a probe on a real board always serves again.
 */
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "ma_deterministic_input.h"
#include "ma_wire_interp.h"
#include "uart_cmsdk.h"
#include "upload_rx.h"

#ifndef PROBE_MODEL_MAX
#define PROBE_MODEL_MAX (1024u * 1024u)
#endif
#ifndef PROBE_ARENA_SIZE
#define PROBE_ARENA_SIZE (2048u * 1024u)
#endif
#define LINE_MAX 640 /* a chunk line of 256 data bytes is 540 characters */

#ifndef PROBE_UART_RX_IRQ
#define PROBE_UART_RX_IRQ 0u /* UART0 RX interrupt line on the MPS2 boards */
#endif
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ICER0 (*(volatile uint32_t *)0xE000E180u)
#define NVIC_ICPR0 (*(volatile uint32_t *)0xE000E280u)
#define CMSDK_UART_INTCLEAR(base) (*(volatile uint32_t *)((base) + 0x0Cu))
#define UART_RX_EN 0x2u
#define UART_RX_INT_EN 0x8u

/* The board layer only transmits; the probe enables the receiver itself. While receiving, the
 * core sleeps (WFI) until the RX interrupt is pending instead of polling: an emulator then
 * spends its time delivering bytes, which makes the upload many times faster. Interrupts stay
 * masked (PRIMASK), so the interrupt wakes the core but its handler, which the vector table
 * does not have, never runs. */
static void uart_rx_start(void) {
  __asm volatile("cpsid i" ::: "memory");
  CMSDK_UART_CTRL(BOARD_UART_BASE) |= UART_RX_EN | UART_RX_INT_EN;
  NVIC_ISER0 = 1u << PROBE_UART_RX_IRQ;
}

/* Before interrupts are unmasked again (SysTick times the invoke). */
static void uart_rx_stop(void) {
  CMSDK_UART_CTRL(BOARD_UART_BASE) &= ~UART_RX_INT_EN;
  NVIC_ICER0 = 1u << PROBE_UART_RX_IRQ;
  CMSDK_UART_INTCLEAR(BOARD_UART_BASE) = 0x2u;
  NVIC_ICPR0 = 1u << PROBE_UART_RX_IRQ;
  __asm volatile("cpsie i" ::: "memory");
}

static char uart_getc(void) {
  while ((CMSDK_UART_STATE(BOARD_UART_BASE) & 0x2u) == 0u) { /* RX buffer empty */
    __asm volatile("wfi");
  }
  char c = (char)(CMSDK_UART_DATA(BOARD_UART_BASE) & 0xffu);
  CMSDK_UART_INTCLEAR(BOARD_UART_BASE) = 0x2u;
  NVIC_ICPR0 = 1u << PROBE_UART_RX_IRQ;
  return c;
}

/* Straight to the UART: board_write would turn the encoder's CRLF into CR CR LF. */
static void uart_put(void *ctx, const char *s, size_t n) {
  (void)ctx;
  for (size_t i = 0; i < n; i++) board_uart_putc(s[i]);
}

static void put_line(const char *s) {
  uart_put(NULL, s, strlen(s));
  uart_put(NULL, "\r\n", 2);
}

/* One line without its end; an over-long line is cut (its CRC then fails, so it is NACKed). */
static size_t read_line(char *buf, size_t cap) {
  size_t n = 0;
  for (;;) {
    char c = uart_getc();
    if (c == '\n') break;
    if (c != '\r' && n < cap) buf[n++] = c;
  }
  return n;
}

/* Returns once a whole model has arrived with a good CRC. The ready line goes out first, for a
 * host that is already listening; a host that connects later pings for it. */
static void receive_model(upload_rx *u) {
  char line[LINE_MAX], reply[96];
  upload_rx_ready(u, reply, sizeof reply);
  put_line(reply);
  for (;;) {
    size_t n = read_line(line, sizeof line);
    upload_result r = upload_rx_line(u, line, n, reply, sizeof reply);
    if (reply[0] != '\0') put_line(reply);
    if (r == UPLOAD_DONE) return;
  }
}

typedef struct {
  uint32_t arena_size; /* "arena=N": run with only N bytes of arena */
  int serve;           /* "serve": keep serving after a model that ran */
} probe_options;

static uint32_t parse_size(const char *p, uint32_t have) {
  uint32_t n = 0;
  for (; *p >= '0' && *p <= '9' && n <= have; p++) n = n * 10u + (uint32_t)(*p - '0');
  return n < have ? n : have;
}

/* Words on the emulator's command line (QEMU -append), e.g. "arena=4096 serve". */
static probe_options read_options(uint32_t arena_have) {
  probe_options o = {arena_have, 0};
#ifndef BOARD_EMULATED
  o.serve = 1; /* nobody reads an exit status on a real board */
#endif
  char buf[512]; /* QEMU puts the image's full path first */
  const char *p = board_cmdline(buf, sizeof buf);
  while (p != NULL && *p != '\0') {
    if (strncmp(p, "arena=", 6) == 0) o.arena_size = parse_size(p + 6, arena_have);
    if (strncmp(p, "serve", 5) == 0 && (p[5] == ' ' || p[5] == '\0')) o.serve = 1;
    while (*p != '\0' && *p != ' ') p++;
    while (*p == ' ') p++;
  }
  return o;
}

/* Loads, invokes and reports one model; MA_OK if it ran. */
static ma_status run_model(const uint8_t *model, uint32_t size, uint8_t *arena,
                           uint32_t arena_size) {
  static const char info[] = "probe board=" MA_BOARD_NAME;
  char msg[160];
  ma_interp *it = NULL;
  ma_status st = ma_open(&it, model, size, arena, arena_size, msg, sizeof msg);
  if (st != MA_OK) {
    size_t need = 0;
    if (st == MA_ERR_ARENA) { /* the whole buffer measures what the model needs */
      st = ma_arena_shortfall(model, size, arena, arena_size, arena, PROBE_ARENA_SIZE, msg,
                              sizeof msg, &need);
    }
    ma_wire_emit_failure(st, msg, (uint32_t)need, info, uart_put, NULL);
    return st;
  }
  for (int32_t i = 0; i < ma_num_inputs(it); i++) ma_fill_deterministic_input(ma_input(it, i));
  uint64_t t0 = board_ticks();
  st = ma_invoke(it);
  uint64_t t1 = board_ticks();
  ma_wire_run run = {st, arena_size, 1, t1 - t0, board_tick_hz(), info, NULL, 0};
  ma_wire_emit_interp(it, &run, uart_put, NULL);
  return st;
}

int main(void) {
  static uint8_t model[PROBE_MODEL_MAX] __attribute__((aligned(16)));
  static uint8_t arena[PROBE_ARENA_SIZE] __attribute__((aligned(16)));
  const probe_options opt = read_options(sizeof arena);
  for (;;) {
    upload_rx u;
    upload_rx_init(&u, model, sizeof model);
    uart_rx_start();
    receive_model(&u);
    uart_rx_stop();
    if (run_model(model, u.size, arena, opt.arena_size) == MA_OK && !opt.serve) {
      return BOARD_EXIT_OK;
    }
  }
}
