"""`pio test` runner for emulated boards: runs the test image on QEMU through host.device.emulate.

The image prints "TEST <name> PASS|FAIL <why>" lines and exits with its failure count; each line
becomes a PlatformIO test case. Real boards cannot be tested here (no probe, no emulator).
"""

import sys
from pathlib import Path

from platformio.public import TestCase, TestRunnerBase, TestStatus

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
if str(PROJECT_DIR) not in sys.path:
    sys.path.insert(0, str(PROJECT_DIR))


class CustomTestRunner(TestRunnerBase):
    def stage_testing(self):
        from host.device import emulate
        from host.device.boards import get_board

        env_name = self.test_suite.env_name
        board_id = self.project_config.get(f"env:{env_name}", "board")
        board = get_board(board_id)
        if not board.emulated:
            self.test_suite.add_case(
                TestCase(
                    name=f"{env_name}:emulation",
                    status=TestStatus.SKIPPED,
                    message=f"{board_id} is a real board: no emulator here",
                )
            )
            return
        build_dir = Path(self.project_config.get("platformio", "build_dir"))
        elf = build_dir / env_name / "firmware.elf"
        result = emulate.run(board_id, elf, timeout=60)
        for line in result.uart_text.splitlines():
            self.on_testing_line_output(line + "\n")
            words = line.split(maxsplit=3)
            if len(words) >= 3 and words[0] == "TEST":
                passed = words[2] == "PASS"
                self.test_suite.add_case(
                    TestCase(
                        name=words[1],
                        status=TestStatus.PASSED if passed else TestStatus.FAILED,
                        message=None if passed else (words[3] if len(words) > 3 else "failed"),
                    )
                )
        if not result.ok:
            why = result.fault or (
                "timed out" if result.timed_out else f"exit status {result.exit_code}"
            )
            self.test_suite.add_case(
                TestCase(name="firmware_exit", status=TestStatus.FAILED, message=why)
            )
