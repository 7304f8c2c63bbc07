/* Board facts every board has, from boards/<id>/board.json (the build passes them as macros). */
#include "board.h"

const char *board_name(void) { return MA_BOARD_NAME; }
uint32_t board_tick_hz(void) { return (uint32_t)F_CPU; } /* SysTick runs on the core clock */
