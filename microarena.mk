# The microarena runtime for a plain Makefile: include this file, then build $(MICROARENA_SRC)
# with $(MICROARENA_CFLAGS) beside your sources, after $(MICROARENA_HEADERS) (see
# docs/library.md). Set before the include (defaults in brackets):
#   MICROARENA_MODEL   the .tflite to embed (required)
#   MICROARENA_GEN     folder for the generated headers [build/microarena]
#   MICROARENA_TARGET  microarena-cortex-m | microarena-host [microarena-cortex-m]
#   MICROARENA_PLAN    best | greedy | none | replace [best; an embedded plan stays unless replace]
#   MICROARENA_PYTHON  a Python with microarena installed [python3]
# Your CPU flags (-mcpu, -mfpu) choose the kernels' fast paths; on Cortex-M add
# $(MA_ARM_FLAGS) (build.mk's -O2 and section flags) and link with -Wl,--gc-sections.
_MA_GOAL := $(.DEFAULT_GOAL)
MICROARENA_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
include $(MICROARENA_DIR)/firmware/build.mk
MICROARENA_GEN ?= build/microarena
MICROARENA_TARGET ?= microarena-cortex-m
MICROARENA_PLAN ?= best
MICROARENA_PYTHON ?= python3
MICROARENA_SRC := $(addprefix $(MICROARENA_DIR)/firmware/,$(MA_CORE_SRC)) \
                  $(sort $(foreach d,$(MA_KERNEL_DIRS),$(wildcard $(MICROARENA_DIR)/firmware/$(d)/*.c)))
MICROARENA_CFLAGS := $(MA_WARN) $(addprefix -I$(MICROARENA_DIR)/firmware/,$(MA_INCLUDE_DIRS)) \
                     -I$(MICROARENA_GEN) -DMA_SELECTED_OPS_H='"microarena_model_ops.h"'
MICROARENA_HEADERS := $(MICROARENA_GEN)/microarena_model.h $(MICROARENA_GEN)/microarena_model_ops.h

$(MICROARENA_GEN)/microarena_model.h: $(MICROARENA_MODEL)
	PYTHONPATH=$(MICROARENA_DIR) $(MICROARENA_PYTHON) -m host.device.model_header $< \
	  --out-dir $(MICROARENA_GEN) --target $(MICROARENA_TARGET) --plan $(MICROARENA_PLAN)
$(MICROARENA_GEN)/microarena_model_ops.h: $(MICROARENA_GEN)/microarena_model.h
# Not this file's rules: the includer's first target stays make's default goal.
.DEFAULT_GOAL := $(_MA_GOAL)
