# The board's default kernel list: boards/imx93_common/kernels.cmake.
include(${CMAKE_CURRENT_LIST_DIR}/../imx93_common/kernels.cmake)
