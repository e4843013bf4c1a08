# boards/imx93_m33 simulated on QEMU's mps2-an505 (the same Cortex-M33):
# the i.MX93's region sizes at AN505 addresses, DDR as a file-backed PSRAM
# that tools/ptec-rproc shares, polling for the doorbell, the AN505's UART
# and exact instruction counts (docs/boards/imx93.md, "Emulation").
set(PTEC_BOARD_CPU cortex-m33)
set(PTEC_BOARD_DESCRIPTION "i.MX93 Cortex-M33 on mps2-an505 (remoteproc, RPMsg)")
set(PTEC_BOARD_QEMU_MACHINE mps2-an505)
set(PTEC_BOARD_LINKER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/imx93_m33_sim.ld)
set(PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR})
set(PTEC_BOARD_ARCH cortex_m)
set(PTEC_BOARD_CONSOLE ${CMAKE_CURRENT_LIST_DIR}/../common_mps/console_exit.c
                       ${CMAKE_CURRENT_LIST_DIR}/../common_mps/cmsdk_uart.c)
set(PTEC_BOARD_COUNTER ${CMAKE_CURRENT_LIST_DIR}/../common_mps/fpgaio_icount.c)
list(APPEND PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR}/../common_mps)
include(${CMAKE_CURRENT_LIST_DIR}/../imx93_common/imx93_common.cmake)
