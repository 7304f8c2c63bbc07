/* Cortex-M4F (QEMU mps2-an386) driver for tests/runtime/test_runtime_qemu.py: loads the embedded
 * model into a static arena of ARENA_BYTES (the Python prediction for cortex-m), fills the
 * inputs with a fixed pattern, invokes, and prints the allocation report and the outputs
 * through semihosting. Exit status: 0, or the ma_status that failed (+100 for invoke).
 * With -DMAIN_ELSEWHERE only the start-up is kept: another file's main() runs, its return
 * value is the exit status (tests/runtime/test_concat_in_place_arm.py). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "microarena.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;

#ifndef MAIN_ELSEWHERE
extern const uint8_t model_data[], model_end[];
static uint8_t arena[ARENA_BYTES] __attribute__((aligned(16)));
#else
int main(void);
#endif

static void semihost(int op, const void *arg) {
  register int r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
}

static void put(const char *s) { semihost(0x04, s); } /* SYS_WRITE0 */

static void quit(int status) {
  uint32_t block[2] = {0x20026u, (uint32_t)status}; /* ADP_Stopped_ApplicationExit */
  semihost(0x20, block);                             /* SYS_EXIT_EXTENDED */
  for (;;) {
  }
}

#ifndef MAIN_ELSEWHERE
static void emit(void *ctx, const char *line) {
  (void)ctx;
  put(line);
  put("\n");
}

/* The same pattern as the Python side: int types count up, floats step in eighths. */
static void fill(ma_tensor *t) {
  for (size_t i = 0; i < t->bytes / ma_type_size(t->type); i++) {
    if (t->type == MA_FLOAT32) {
      ((float *)t->data)[i] = (float)((int)(i % 17) - 8) / 8.0f;
    } else if (t->type == MA_INT8) {
      ((int8_t *)t->data)[i] = (int8_t)((int)((i * 7) % 256) - 128);
    } else {
      memset(t->data, 0, t->bytes);
      return;
    }
  }
}

int main(void) {
  char msg[160], line[64];
  ma_interp *it;
  ma_status st = ma_open(&it, model_data, (size_t)(model_end - model_data), arena, sizeof arena,
                         msg, sizeof msg);
  if (st != MA_OK) {
    put("open failed: ");
    put(msg);
    put("\n");
    quit((int)st);
  }
  for (int32_t i = 0; i < ma_num_inputs(it); i++) fill(ma_input(it, i));
  st = ma_invoke(it);
  if (st != MA_OK) {
    put("invoke failed: ");
    put(ma_error(it));
    put("\n");
    quit(100 + (int)st);
  }
  ma_report(it, emit, NULL);
  for (int32_t o = 0; o < ma_num_outputs(it); o++) {
    const ma_tensor *t = ma_output(it, o);
    snprintf(line, sizeof line, "output %d:", (int)o);
    put(line);
    for (size_t i = 0; i < t->bytes; i++) {
      snprintf(line, sizeof line, "%02x", ((const uint8_t *)t->data)[i]);
      put(line);
    }
    put("\n");
  }
  quit(0);
  return 0;
}
#endif

void reset_handler(void) {
  /* The FPU must be on before any floating-point instruction. */
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n isb");
  uint32_t *src = &_sidata;
  for (uint32_t *dst = &_sdata; dst < &_edata;) *dst++ = *src++;
  for (uint32_t *dst = &_sbss; dst < &_ebss;) *dst++ = 0;
  quit(main());
}

static void fault(void) {
  put("fault\n");
  quit(99);
}

__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&_estack, reset_handler, fault, fault, fault, fault, fault,
    0, 0, 0, 0, fault, fault, 0, fault, fault};

/* newlib's snprintf needs these; nothing here allocates. */
void *_sbrk(int incr) {
  (void)incr;
  return (void *)-1;
}
