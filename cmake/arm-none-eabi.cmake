# Bare-metal Arm toolchain. TARGET_CPU picks the core, as in Arm's own build
# systems: cortex-m55 (MVE + FPU), cortex-m33 (DSP + FPU), cortex-m7 (DSP +
# double-precision FPU), cortex-m4 (DSP + FPU) or cortex-m3 (no DSP, no FPU:
# soft float). PTEC_BOARD picks the board (boards/CMakeLists.txt); either
# one alone is enough.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# With only PTEC_BOARD given, the core is the board's (boards/<name>/board.cmake);
# with neither, cortex-m55. try_compile projects see both.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TARGET_CPU PTEC_BOARD)
if(NOT TARGET_CPU AND PTEC_BOARD)
  set(ptec_board_file ${CMAKE_CURRENT_LIST_DIR}/../boards/${PTEC_BOARD}/board.cmake)
  if(NOT EXISTS ${ptec_board_file})
    message(FATAL_ERROR "PTEC_BOARD '${PTEC_BOARD}': no boards/${PTEC_BOARD}/board.cmake")
  endif()
  include(${ptec_board_file})
  set(TARGET_CPU ${PTEC_BOARD_CPU})
endif()
if(NOT TARGET_CPU)
  set(TARGET_CPU cortex-m55)
endif()
set(TARGET_CPU "${TARGET_CPU}" CACHE STRING "Target core: cortex-m55, cortex-m33, cortex-m7, cortex-m4 or cortex-m3")

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar)
set(CMAKE_RANLIB arm-none-eabi-ranlib)
set(CMAKE_OBJCOPY arm-none-eabi-objcopy)
set(CMAKE_SIZE arm-none-eabi-size)

if(TARGET_CPU STREQUAL "cortex-m55")
  set(PTEC_CPU_FLAGS "-mcpu=cortex-m55 -mfloat-abi=hard -mthumb")
elseif(TARGET_CPU STREQUAL "cortex-m33")
  set(PTEC_CPU_FLAGS "-mcpu=cortex-m33 -mfloat-abi=hard -mfpu=fpv5-sp-d16 -mthumb")
elseif(TARGET_CPU STREQUAL "cortex-m7")
  set(PTEC_CPU_FLAGS "-mcpu=cortex-m7 -mfloat-abi=hard -mfpu=fpv5-d16 -mthumb")
elseif(TARGET_CPU STREQUAL "cortex-m4")
  set(PTEC_CPU_FLAGS "-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16 -mthumb")
elseif(TARGET_CPU STREQUAL "cortex-m3")
  set(PTEC_CPU_FLAGS "-mcpu=cortex-m3 -mfloat-abi=soft -mthumb")
else()
  message(FATAL_ERROR "TARGET_CPU must be cortex-m55, cortex-m33, cortex-m7, cortex-m4 or cortex-m3, not '${TARGET_CPU}'")
endif()

set(CMAKE_C_FLAGS_INIT "${PTEC_CPU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${PTEC_CPU_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${PTEC_CPU_FLAGS} -Wl,--gc-sections")
set(CMAKE_C_FLAGS_MINSIZEREL_INIT "-Os -DNDEBUG")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
