# Arm MPS2 FPGA image AN386 as QEMU's mps2-an386 models it: Cortex-M4, DSP + FPU.
# Memory map and device addresses: common_mps/mps2_v7m/ (shared with the
# other Armv7-M MPS2 images).
set(PTEC_BOARD_CPU cortex-m4)
set(PTEC_BOARD_DESCRIPTION "mps2-an386 (Cortex-M4, DSP + FPU)")
set(PTEC_BOARD_QEMU_MACHINE mps2-an386)
set(PTEC_BOARD_LINKER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/../common_mps/mps2_v7m/mps2_v7m.ld)
set(PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR}/../common_mps/mps2_v7m)
include(${CMAKE_CURRENT_LIST_DIR}/../common_mps/mps.cmake)
