# What the i.MX93 M33 board and its simulation share: the resource table,
# the trace buffer and the board's half of RPMsg (each reads its own
# board_config.h). A board.cmake includes this after naming its include
# directories. PTEC_BOARD_REMOTEPROC makes firmware/ build the RPMsg model
# server (firmware/remote) as the board's application.
list(APPEND PTEC_BOARD_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR})
list(APPEND PTEC_BOARD_SOURCES ${CMAKE_CURRENT_LIST_DIR}/rsc_table.c ${CMAKE_CURRENT_LIST_DIR}/trace_log.c
                               ${CMAKE_CURRENT_LIST_DIR}/rpmsg_link.c)
set(PTEC_BOARD_REMOTEPROC ON)
# The model's address in DDR, a build option (default: the board's,
# 0x80100000); the board record tells tools/ptec-rproc.
set(PTEC_IMX93_MODEL_ADDR "" CACHE STRING "i.MX93 firmware: model address in DDR (empty: 0x80100000)")
if(PTEC_IMX93_MODEL_ADDR)
  list(APPEND PTEC_BOARD_DEFINITIONS PTEC_IMX93_MODEL_ADDR=${PTEC_IMX93_MODEL_ADDR}u)
endif()
