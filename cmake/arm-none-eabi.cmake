# Toolchain file for bare-metal Cortex-M with the GNU Arm toolchain on PATH:
#   cmake -B build -DCMAKE_TOOLCHAIN_FILE=<microarena>/cmake/arm-none-eabi.cmake \
#         -DMICROARENA_CPU_FLAGS="-mcpu=cortex-m55 -mfloat-abi=hard -mfpu=auto"
# MICROARENA_CPU_FLAGS (default: a Cortex-M4F) pick the core; the runtime's fast paths follow.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(MICROARENA_CPU_FLAGS "-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16"
    CACHE STRING "-mcpu/-mfpu/-mfloat-abi of the target core")
set(CMAKE_C_FLAGS_INIT "${MICROARENA_CPU_FLAGS} -mthumb -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${CMAKE_C_FLAGS_INIT}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections --specs=nano.specs")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
