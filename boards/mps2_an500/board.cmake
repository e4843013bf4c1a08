# Arm MPS2 FPGA image AN500 as QEMU's mps2-an500 models it: Cortex-M7, DSP +
# double-precision FPU.
# Memory map: mps2_an500.ld; device addresses: common_mps/mps2_v7m/.
set(PTEC_BOARD_CPU cortex-m7)
set(PTEC_BOARD_DESCRIPTION "mps2-an500 (Cortex-M7, DSP + double-precision FPU)")
set(PTEC_BOARD_QEMU_MACHINE mps2-an500)
set(PTEC_BOARD_LINKER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/mps2_an500.ld)
set(PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR}/../common_mps/mps2_v7m)
include(${CMAKE_CURRENT_LIST_DIR}/../common_mps/mps.cmake)
