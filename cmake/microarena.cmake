# microarena_core and microarena_add_model (see ../CMakeLists.txt and docs/library.md).
# Sources, include folders and warning flags come from firmware/build.mk, their one definition.
# INTERNAL cache entries: microarena_add_model runs in the caller's scope, not this one.
get_filename_component(_ma_root ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
set(MICROARENA_ROOT ${_ma_root} CACHE INTERNAL "")
set(MICROARENA_FIRMWARE ${MICROARENA_ROOT}/firmware)

# `NAME := words` lines of build.mk (backslash continuations joined) as MA_<NAME> lists.
file(READ ${MICROARENA_FIRMWARE}/build.mk _ma_mk)
string(REGEX REPLACE "\\\\\n" " " _ma_mk "${_ma_mk}")
string(REPLACE "\n" ";" _ma_lines "${_ma_mk}")
foreach(_line IN LISTS _ma_lines)
  if(_line MATCHES "^([A-Z0-9_]+)[ \t]*:=[ \t]*(.*)$")
    separate_arguments(_words UNIX_COMMAND "${CMAKE_MATCH_2}")
    set(_MK_${CMAKE_MATCH_1} ${_words})
  endif()
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${MICROARENA_FIRMWARE}/build.mk)

set(_ma_sources)
foreach(_src IN LISTS _MK_MA_CORE_SRC)
  list(APPEND _ma_sources ${MICROARENA_FIRMWARE}/${_src})
endforeach()
set(_ma_kernels)
foreach(_dir IN LISTS _MK_MA_KERNEL_DIRS)
  file(GLOB _ma_dir_kernels CONFIGURE_DEPENDS ${MICROARENA_FIRMWARE}/${_dir}/*.c)
  list(APPEND _ma_kernels ${_ma_dir_kernels})
endforeach()
set(MICROARENA_REGISTRY ${MICROARENA_FIRMWARE}/${_MK_MA_KERNEL_DIR}/registry.c CACHE INTERNAL "")
list(REMOVE_ITEM _ma_kernels ${MICROARENA_REGISTRY})
set(_ma_includes)
foreach(_dir IN LISTS _MK_MA_INCLUDE_DIRS)
  list(APPEND _ma_includes ${MICROARENA_FIRMWARE}/${_dir})
endforeach()

# The fast paths follow the compiler's CPU flags (__ARM_FEATURE_DSP, __ARM_FEATURE_MVE): set
# -mcpu/-mfpu in the toolchain file or CMAKE_C_FLAGS, and every source gets them.
add_library(microarena_core STATIC ${_ma_sources} ${_ma_kernels})
target_include_directories(microarena_core PUBLIC ${_ma_includes})
# An application written against TFLM's C++ API links this instead: TFLM's include paths
# (firmware/compat) lead to microarena/tflm.h (docs/migrate_from_tflm.md).
add_library(microarena_tflm INTERFACE)
target_include_directories(microarena_tflm INTERFACE ${MICROARENA_FIRMWARE}/compat)
target_link_libraries(microarena_tflm INTERFACE microarena_core)
target_compile_options(microarena_core PRIVATE ${_MK_MA_WARN})
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(arm|ARM|cortex)")
  # build.mk's Cortex-M flags (-O2 among them: the int8 loops' inline assembly needs it).
  target_compile_options(microarena_core PRIVATE ${_MK_MA_ARM_FLAGS})
endif()
set_target_properties(microarena_core PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
if(NOT WIN32)
  target_link_libraries(microarena_core PUBLIC m)
endif()

find_package(Python3 COMPONENTS Interpreter)
set(MICROARENA_PYTHON "${Python3_EXECUTABLE}" CACHE FILEPATH
    "a Python with microarena installed (pip install microarena, or the checkout's .venv)")

# microarena_add_model(<target> <model.tflite> [TARGET microarena-cortex-m|microarena-host]
#                      [PLAN best|greedy|none|replace] [OVERLAP] [BANDS] [CPU cortex-mNN]
#                      [ALL_KERNELS])
# TARGET defaults to microarena-cortex-m when cross-compiling for ARM, else microarena-host.
function(microarena_add_model target model)
  cmake_parse_arguments(MA "OVERLAP;BANDS;ALL_KERNELS" "TARGET;PLAN;CPU" "" ${ARGN})
  if(NOT MA_TARGET)
    if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(arm|ARM|cortex)")
      set(MA_TARGET microarena-cortex-m)
    else()
      set(MA_TARGET microarena-host)
    endif()
  endif()
  if(NOT MA_PLAN)
    set(MA_PLAN best)
  endif()
  get_filename_component(model ${model} ABSOLUTE)
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${target}_microarena)
  set(args --out-dir ${gen} --target ${MA_TARGET} --plan ${MA_PLAN})
  if(MA_OVERLAP)
    list(APPEND args --overlap)
  endif()
  if(MA_BANDS)
    list(APPEND args --bands)
  endif()
  if(MA_CPU)
    list(APPEND args --cpu ${MA_CPU})
  endif()
  if(MA_ALL_KERNELS)
    list(APPEND args --kernels all)
  endif()
  if(NOT MICROARENA_PYTHON)
    message(FATAL_ERROR "microarena: no Python found; set MICROARENA_PYTHON to one with "
                        "microarena installed")
  endif()
  set(outputs ${gen}/microarena_model.h ${gen}/microarena_model_ops.h)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${MICROARENA_ROOT}
            ${MICROARENA_PYTHON} -m host.device.model_header ${model} ${args}
    DEPENDS ${model}
    COMMENT "microarena: planning ${model} for ${MA_TARGET}"
    VERBATIM)
  # The registry keeps only the model's kernels; with --gc-sections the rest is dropped. It
  # drops them by constant folding, so it is optimised whatever the application's build type
  # (unoptimised, it references every kernel: 94 against the demo model's 6).
  target_sources(${target} PRIVATE ${outputs} ${MICROARENA_REGISTRY})
  set_source_files_properties(${MICROARENA_REGISTRY} TARGET_DIRECTORY ${target} PROPERTIES
    COMPILE_DEFINITIONS "MA_SELECTED_OPS_H=\"microarena_model_ops.h\""
    COMPILE_OPTIONS "$<$<NOT:$<C_COMPILER_ID:MSVC>>:-O2>")
  target_include_directories(${target} PRIVATE ${gen})
  target_link_libraries(${target} PRIVATE microarena_core)
endfunction()
