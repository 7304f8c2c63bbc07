"""The stack high-water a model image reports (boards/common/startup.c paints the stack, the
model application prints `stack_used=N stack_size=S` after the invoke) against the board's
stack: board.json's build.stack_size, which the builder gives the linker as STACK_SIZE."""

from __future__ import annotations

import re

from host.device.firmware import board_json

# Room the deepest run must leave: an exception frame with the FP registers (104 bytes on
# ARMv7-M/ARMv8-M) and a handler's frame, with room for kernels to grow before this fails.
STACK_MARGIN = 512
STACK_LINE = re.compile(r"^stack_used=(\d+) stack_size=(\d+) ", re.M)


def board_stack_size(board: str) -> int:
    return board_json(board)["build"]["stack_size"]


def assert_stack_margin(uart_text: str, board: str, what: str, budget: int | None = None) -> int:
    """Asserts the run left STACK_MARGIN bytes of the board's stack unused and, where given, used
    at most `budget` bytes (a measured figure, tighter than the board's stack, that a change
    deepening the kernels' frames must not pass unnoticed); returns its use."""
    found = STACK_LINE.findall(uart_text)
    assert len(found) == 1, f"{what} on {board}: no single stack_used line"
    used, size = map(int, found[0])
    assert size == board_stack_size(board), f"{board}: stack {size} is not board.json's"
    assert used >= 256, f"{what} on {board}: stack used {used} bytes: the paint did not work"
    assert used + STACK_MARGIN <= size, (
        f"{what} on {board}: stack used {used} of {size} bytes, under {STACK_MARGIN} to spare"
    )
    assert budget is None or used <= budget, (
        f"{what} on {board}: stack used {used} bytes, over its budget of {budget}"
    )
    return used
