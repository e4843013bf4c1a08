# Arm MPS3 FPGA image AN547 as QEMU's mps3-an547 models it: Cortex-M55 with
# MVE. Memory map: mps3_an547.ld; device addresses: board_config.h.
set(PTEC_BOARD_CPU cortex-m55)
set(PTEC_BOARD_DESCRIPTION "mps3-an547 (Cortex-M55, MVE)")
set(PTEC_BOARD_QEMU_MACHINE mps3-an547)
set(PTEC_BOARD_LINKER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/mps3_an547.ld)
set(PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../common_mps/mps.cmake)
