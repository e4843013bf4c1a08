# Arm MPS2+ FPGA image AN505 as QEMU's mps2-an505 models it: Cortex-M33 with
# DSP. Memory map: mps2_an505.ld; device addresses: board_config.h.
set(PTEC_BOARD_CPU cortex-m33)
set(PTEC_BOARD_DESCRIPTION "mps2-an505 (Cortex-M33, DSP)")
set(PTEC_BOARD_QEMU_MACHINE mps2-an505)
set(PTEC_BOARD_LINKER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/mps2_an505.ld)
set(PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../common_mps/mps.cmake)
