# The Cortex-M arch layer (Armv8-M here): reset and vectors, fault report,
# newlib system calls, the log hook, and the section placement every
# board's linker script includes. A board adds its console, counter and
# host link (boards/<name>/board.cmake). dwt_cycles.c is a counter a board
# on silicon can name as its PTEC_BOARD_COUNTER.
set(PTEC_ARCH_DIR ${CMAKE_CURRENT_LIST_DIR})
set(PTEC_ARCH_SOURCES
    ${PTEC_ARCH_DIR}/startup.c
    ${PTEC_ARCH_DIR}/fault_report.c
    ${PTEC_ARCH_DIR}/newlib_syscalls.c
    ${PTEC_ARCH_DIR}/platform_hooks.c)
set(PTEC_ARCH_INCLUDE_DIRS ${PTEC_ARCH_DIR})
set(PTEC_ARCH_LINKER_DIR ${PTEC_ARCH_DIR})
set(PTEC_ARCH_COMPILE_OPTIONS --specs=nano.specs)
set(PTEC_ARCH_LINK_OPTIONS --specs=nano.specs -nostartfiles)
set(PTEC_ARCH_CYCLE_COUNTER ${PTEC_ARCH_DIR}/dwt_cycles.c)
