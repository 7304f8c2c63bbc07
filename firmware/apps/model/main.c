/* Model application: runs a model compiled into the image (custom_model in platformio.ini;
 * with several, the emulator's -append text names the one to run, default the first) once on
 * a deterministic input, or with "name*N" N times in a row on the same input (the variables'
 * state carried from one invocation to the next, as a recurrent model's is: a state byte
 * moved to the wrong place shows only after several), and reports over the UART:
 *   - a banner with board, model and arena size (and where that size came from),
 *   - one "output" line per output tensor (bytes in hex, CRC-32) for comparison with TFLM,
 *     as the last invocation leaves them,
 *   - "ticks=" for the last invoke (SysTick; under QEMU -icount, ticks * 1e9 / tick_hz
 *     instructions),
 *   - "stack_used= stack_size= stack_open= stack_invoke=": the stack high-water of ma_open
 *     (from start-up) and of the invokes, the larger in the record (boards/common/startup.c),
 *   - the arena report (TFLM RecordingMicroAllocator lines + CRC-checked record, ma_wire.h),
 *     with, in a profiling build (-DMA_APP_PROFILE: custom_profile = 1, host.record --profile),
 *     each operator's ticks (the invoke's ticks then include the hook's own, a few dozen
 *     instructions per operator),
 * then exits (semihosting on an emulator, idles on a real board) with 0, or 1 on error.
 */
#include <stdint.h>

#include "board.h"
#include "ma_deterministic_input.h"
#include "ma_wire_interp.h"
#include "microarena.h"
#include "model_config.h"

/* The arena: its size is the host's prediction for the model(s) (model_config.h). */
static uint8_t arena[MA_APP_ARENA_BYTES] __attribute__((aligned(16)));

#define MAX_HEX_BYTES 256u /* longer outputs are compared by CRC only */

#ifdef MA_APP_PROFILE
/* Operators timed, in the order they first ran; an operator run again (in a loop body) adds
 * to its entry. Operators past the capacity go untimed (their caller's time still holds
 * them). The stack holds start times of operators running nested subgraphs. */
#define PROFILE_CAPACITY 256
static ma_wire_op profile[PROFILE_CAPACITY];
static size_t n_profile;
static uint64_t started[MA_MAX_NESTING + 1];
static int depth;

static void time_op(void *ctx, int32_t sg, int32_t op, int32_t code, int done) {
  (void)ctx;
  if (!done) {
    if (depth <= MA_MAX_NESTING) started[depth] = board_ticks();
    depth++;
    return;
  }
  const uint64_t now = board_ticks();
  if (--depth > MA_MAX_NESTING) return;
  size_t i = 0;
  while (i < n_profile && (profile[i].subgraph != (uint16_t)sg || profile[i].op != (uint32_t)op))
    i++;
  if (i == n_profile) {
    if (n_profile == PROFILE_CAPACITY) return;
    profile[n_profile++] = (ma_wire_op){(uint16_t)sg, (uint32_t)op, (uint32_t)code, 0};
  }
  profile[i].ticks += now - started[depth];
}
#endif

static void uart_put(void *ctx, const char *s, size_t n) {
  (void)ctx;
  board_write(s, n);
}

static void print_output(int32_t index, const ma_tensor *t) {
  const uint8_t *bytes = (const uint8_t *)t->data;
  board_puts("output ");
  board_put_i32(index);
  board_puts(" type=");
  board_put_i32(t->type);
  board_puts(" bytes=");
  board_put_u64(t->bytes);
  board_puts(" crc32=");
  board_put_hex32(ma_wire_crc32(0u, bytes, t->bytes));
  board_puts(" data=");
  if (t->bytes > MAX_HEX_BYTES) {
    board_puts("(omitted)");
  } else {
    for (size_t i = 0; i < t->bytes; i++) board_put_hex8(bytes[i]);
  }
  board_puts("\n");
}

/* dst = a b c, truncated to fit. */
static void join3(char *dst, size_t size, const char *a, const char *b, const char *c) {
  const char *parts[3] = {a, b, c};
  size_t n = 0;
  for (int p = 0; p < 3; p++) {
    for (const char *s = parts[p]; *s != '\0' && n + 1 < size; s++) dst[n++] = *s;
  }
  dst[n] = '\0';
}

/* Whether the command line's name (up to its end or a '*') is `name`. */
static int names(const char *cmd, const char *name) {
  while (*name != '\0' && *cmd == *name) cmd++, name++;
  return *name == '\0' && (*cmd == '\0' || *cmd == '*');
}

/* N of a command line "name*N" (1 without a '*'), or 0 when N is not a positive decimal
 * number below 10^6. */
static int32_t invocations_of(const char *name) {
  while (*name != '\0' && *name != '*') name++;
  if (*name++ == '\0') return 1;
  int32_t n = 0;
  for (int digits = 0; *name != '\0'; name++, digits++) {
    if (*name < '0' || *name > '9' || digits == 6) return 0;
    n = n * 10 + (*name - '0');
  }
  return n;
}

/* The model named on the command line ("name" or "name*N"), the first one when none is named,
 * or NULL; *invocations is N (1 without "*N"). Not inlined: its buffer leaves the stack before
 * the model runs. */
__attribute__((noinline)) static const ma_app_model *choose_model(int32_t *invocations) {
  char buf[512];
  const char *name = board_cmdline(buf, sizeof buf);
  if (name == NULL) {
    board_puts("error: cannot read the command line (too long?)\nstatus=error\n");
    return NULL;
  }
  *invocations = invocations_of(name);
  if (*invocations == 0) {
    board_puts("error: the count after '*' must be a whole number from 1 to 999999\n"
               "status=error\n");
    return NULL;
  }
  if (name[0] == '\0' || name[0] == '*') return &ma_app_models[0];
  for (int i = 0; i < MA_APP_N_MODELS; i++) {
    if (names(name, ma_app_models[i].name)) return &ma_app_models[i];
  }
  board_puts("error: no model named '");
  board_puts(name);
  board_puts("' in this image; it has:");
  for (int i = 0; i < MA_APP_N_MODELS; i++) {
    board_puts(" ");
    board_puts(ma_app_models[i].name);
  }
  board_puts("\nstatus=error\n");
  return NULL;
}

static void print_banner(const ma_app_model *model) {
  board_puts("microarena board=");
  board_puts(board_name());
  board_puts(" model=");
  board_puts(model->name);
  board_puts(" model_bytes=");
  board_put_u64(model->size);
  board_puts(" arena_bytes=");
  board_put_u64(MA_APP_ARENA_BYTES);
  board_puts(" arena_source=" MA_APP_ARENA_SOURCE "\n");
}

/* After the invokes: the outputs, ticks, stack and arena report; returns main's exit code. Not
 * inlined: its record is not on the stack while the model runs. */
__attribute__((noinline)) static int finish(ma_interp *it, ma_status st, uint64_t ticks,
                                            uint32_t stack_open, const char *info) {
  const uint32_t stack_invoke = board_stack_used();
  const uint32_t stack_used = stack_open > stack_invoke ? stack_open : stack_invoke;
  if (st == MA_OK) {
    for (int32_t i = 0; i < ma_num_outputs(it); i++) print_output(i, ma_output(it, i));
  } else {
    board_puts("error: ma_invoke: ");
    board_puts(ma_error(it));
    board_puts("\n");
  }
  board_puts("ticks=");
  board_put_u64(ticks);
  board_puts(" tick_hz=");
  board_put_u64(board_tick_hz());
  board_puts("\n");
  board_puts("stack_used=");
  board_put_u64(stack_used);
  board_puts(" stack_size=");
  board_put_u64(board_stack_size());
  board_puts(" stack_open=");
  board_put_u64(stack_open);
  board_puts(" stack_invoke=");
  board_put_u64(stack_invoke);
  board_puts("\n");
  ma_wire_run run = {(int32_t)st, (uint32_t)sizeof arena, 1, ticks, board_tick_hz(), info,
                     NULL, 0, 1, stack_used, board_stack_size(), board_stack_measured()};
#ifdef MA_APP_PROFILE
  run.ops = profile;
  run.n_ops = n_profile;
#endif
  ma_wire_emit_interp(it, &run, uart_put, NULL);
  board_puts(st == MA_OK ? "status=ok\n" : "status=error\n");
  return st == MA_OK ? BOARD_EXIT_OK : BOARD_EXIT_FAIL;
}

int main(void) {
  int32_t invocations = 1;
  const ma_app_model *model = choose_model(&invocations);
  if (model == NULL) return BOARD_EXIT_FAIL;
  /* Static, as the arena: the stack measured while the model runs is the runtime's. */
  static char info[128];
  join3(info, sizeof info, "board=" MA_BOARD_NAME " model=", model->name, "");
  static char msg[160];
  ma_interp *it = NULL;
  print_banner(model);
  ma_status st = ma_open(&it, model->data, model->size, arena, sizeof arena, msg, sizeof msg);
  /* The stack high-water of the set-up (since start-up), then of the invoke alone. */
  const uint32_t stack_open = board_stack_used();
  board_stack_paint();
  if (st != MA_OK) {
    board_puts("error: ma_open: ");
    board_puts(msg);
    board_puts("\n");
    ma_wire_emit_failure((int32_t)st, msg, 0u, info, uart_put, NULL);
    board_puts("status=error\n");
    return BOARD_EXIT_FAIL;
  }
#ifdef MA_APP_PROFILE
  ma_set_op_hook(it, time_op, NULL);
#endif
  uint64_t ticks = 0;
  for (int32_t n = 0; n < invocations && st == MA_OK; n++) {
    /* Filled again each time: an invocation may reuse an input's bytes once it is read. */
    for (int32_t i = 0; i < ma_num_inputs(it); i++) ma_fill_deterministic_input(ma_input(it, i));
    const uint64_t t0 = board_ticks();
    st = ma_invoke(it);
    ticks = board_ticks() - t0;
  }
  return finish(it, st, ticks, stack_open, info);
}
