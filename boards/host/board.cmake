# The machine the build runs on: the board of ptec-run and the host tests.
# No arch layer (the C library and the OS are its startup and console), no
# CPU flags, no QEMU. Console: stderr; counter: a monotonic clock in ns.
set(PTEC_BOARD_CPU "")
set(PTEC_BOARD_DESCRIPTION "host")
set(PTEC_BOARD_QEMU_MACHINE "")
set(PTEC_BOARD_ARCH "")
set(PTEC_BOARD_LINKER_SCRIPT "")
set(PTEC_BOARD_CONSOLE ${CMAKE_CURRENT_LIST_DIR}/host_platform.c)
set(PTEC_BOARD_COUNTER "")
set(PTEC_BOARD_HOST_LINK "")
set(PTEC_BOARD_INCLUDE_DIRS "")
