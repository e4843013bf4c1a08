# The i.MX93 M33's default kernel list (read by the top CMakeLists.txt
# before PTEC_KERNEL_LIST is set). The code TCM (128 KiB) holds the model
# server and its kernels, and every kernel ptec has no longer fits: the
# default is upstream ExecuTorch's operator set: every kernel but those
# all_kernels.def marks "ptec only", ptec's own `ptec::` operators (16-bit
# activations, 4-bit weights, LSTM, SVDF, ...) and the ATen ones upstream
# has no kernel for (sort, bicubic upsampling, hypot, ...). A program's own
# list (`compile --kernel-list`, as bench/imx93_size.sh's ds_cnn firmware)
# links exactly what it calls, ptec's operators included; -DPTEC_KERNEL_LIST=... overrides this default.
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/../../src/kernels/all_kernels.def ptec_board_kernels REGEX "^PTEC_KERNEL")
list(FILTER ptec_board_kernels EXCLUDE REGEX ", ptec only \\*/")
string(JOIN "\n" ptec_board_kernels ${ptec_board_kernels})
file(WRITE ${CMAKE_BINARY_DIR}/board_kernels.def
     "/* boards/imx93_common/kernels.cmake: all_kernels.def without its ptec-only operators */\n${ptec_board_kernels}\n")
set(PTEC_BOARD_DEFAULT_KERNEL_LIST ${CMAKE_BINARY_DIR}/board_kernels.def)
