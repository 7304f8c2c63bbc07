# The one definition of the runtime's sources and compile flags. Read by firmware/Makefile
# (include), the PlatformIO builder (boards/platform/builder/main.py) and the probe build
# (host/runtime/sources.py parses it): keep to plain `NAME := words` lines, paths relative to
# this folder. Kernels are every .c file in the folders of MA_KERNEL_DIRS: MA_KERNEL_DIR (the
# contract, the registry and the portable operators) and the optimised paths by architecture
# under it (docs/architecture.md); a new architecture's folder is added here.
MA_CORE_SRC := src/core/arena.c src/core/control.c src/core/deterministic_input.c \
               src/core/fb.c src/core/interp.c src/core/model.c src/core/op_names.c \
               src/core/options_schema.c src/core/planner.c src/core/report.c \
               src/core/unsupported.c src/wire/report_wire.c src/wire/report_wire_interp.c
MA_KERNEL_DIR := src/kernels
MA_KERNEL_DIRS := src/kernels src/kernels/fast src/kernels/fast/mve
MA_INCLUDE_DIRS := include src/core src/kernels
MA_WARN := -std=c11 -Wall -Wextra
# Cortex-M builds, whatever the board (its -mcpu/-mfpu come from boards/<id>/board.json).
MA_ARM_FLAGS := -mthumb -O2 -g -ffunction-sections -fdata-sections -fno-common
MA_ARM_LINK := -nostartfiles --specs=nano.specs -Wl,--gc-sections -Wl,--no-warn-rwx-segments
# The Cortex-M4F used for the board-independent static library (make arm) and `make check`.
MA_ARM_M4F := -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16
