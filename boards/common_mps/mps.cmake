# What the QEMU MPS2/MPS3 boards share: the CMSDK UART0 console (or
# semihosting), exit through semihosting, the FPGAIO counter as an exact
# instruction count, and the QEMU host link (program and input slots filled
# by scripts/run_qemu.sh). A board.cmake includes this after naming its own
# CPU, memory map and QEMU machine.
set(PTEC_BOARD_ARCH cortex_m)
set(PTEC_BOARD_CONSOLE ${CMAKE_CURRENT_LIST_DIR}/console_exit.c ${CMAKE_CURRENT_LIST_DIR}/cmsdk_uart.c)
set(PTEC_BOARD_COUNTER ${CMAKE_CURRENT_LIST_DIR}/fpgaio_icount.c)
set(PTEC_BOARD_HOST_LINK ${CMAKE_CURRENT_LIST_DIR}/qemu_host_link.c)
list(APPEND PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR})
