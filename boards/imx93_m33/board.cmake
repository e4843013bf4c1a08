# NXP i.MX93's Cortex-M33, a remoteproc firmware: code in code TCM, data in
# system TCM, the model in DDR, results over RPMsg (docs/boards/imx93.md).
# No QEMU machine: boards/imx93_m33_sim is the same board on QEMU's AN505.
# Its one application is the RPMsg model server (firmware/remote).
set(PTEC_BOARD_CPU cortex-m33)
set(PTEC_BOARD_DESCRIPTION "NXP i.MX93 Cortex-M33 (remoteproc, RPMsg)")
set(PTEC_BOARD_QEMU_MACHINE "")
set(PTEC_BOARD_LINKER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/imx93_m33.ld)
set(PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_CURRENT_LIST_DIR}/../imx93_common)
set(PTEC_BOARD_ARCH cortex_m)
set(PTEC_BOARD_CONSOLE ${CMAKE_CURRENT_LIST_DIR}/lpuart_console.c)
set(PTEC_BOARD_COUNTER ${PROJECT_SOURCE_DIR}/src/arch/cortex_m/dwt_cycles.c) # core cycles
include(${CMAKE_CURRENT_LIST_DIR}/../imx93_common/imx93_common.cmake)
list(APPEND PTEC_BOARD_SOURCES ${CMAKE_CURRENT_LIST_DIR}/mu_doorbell.c ${CMAKE_CURRENT_LIST_DIR}/npu_cache.c)
# What drives the Ethos-U65 in this board's firmware: none (CPU only) or
# arm, Arm's ethos-u-core-driver, which the application links (npu_irq.c
# brings it up at the NPU's base address, with its interrupt). The
# simulation links ptec's functional NPU model instead.
set(PTEC_IMX93_NPU_DRIVER none CACHE STRING "Ethos-U65 driver in the i.MX93 firmware: none or arm")
if(PTEC_IMX93_NPU_DRIVER STREQUAL "arm")
  list(APPEND PTEC_BOARD_SOURCES ${CMAKE_CURRENT_LIST_DIR}/npu_irq.c)
  list(APPEND PTEC_BOARD_DEFINITIONS PTEC_IMX93_ARM_NPU=1) # the server brings the NPU up at boot
endif()
