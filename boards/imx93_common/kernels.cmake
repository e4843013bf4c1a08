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
# Nor the operators ptec runs only for integer arithmetic on index values: the bitwise, shift
# and floor-division ones (int_binary.c) and the int64 reductions (op_int_reduce.c: sum, amax,
# amin, cumsum, prod). Upstream has them, but with them the server no longer fits the code
# TCM, and an int8 model rarely calls them; a program that does lists them (`compile
# --kernel-list`, which links exactly what it calls). The float grid sampler (a spatial
# transformer's, rare on a microcontroller) leaves for the same reason: the code TCM holds
# less than 1 KiB more than this list needs (818 bytes free after the data's load image,
# measured without the requirements record's reader, below: the sections in CODE_TCM of
# build/imx93-m33/firmware/remote/ptec_remote.elf; 618 before issue 16's round-24 changes:
# the delegate support left the core of a server with no backend, +824; the prepared-argument
# release and the load's inline readers took back most of it, 738; the prepared arguments'
# move, list-item and argc checks, -472; round 25, 266 to 818: the M33 convolution's C copy
# of the short requantization went (its assembly requantizes) and no 64-bit division is linked).
# The overloads end in "," in all_kernels.def, not ".": the
# pattern once missed sum.IntList_out, and with it all of op_int_reduce.c stayed linked.
list(FILTER ptec_board_kernels EXCLUDE REGEX
     "aten::(bitwise_[a-z_]+|floor_divide|sum[.]IntList_out|amax|amin|cumsum|prod|grid_sampler_2d)[.,]")
# Nor the float32 math functions (op_float_unary_math.c: exp ... sign) and the float / integer
# element-wise minimum and maximum (op_minimum_maximum.c): ptec runs them only in fp32 regions,
# which an int8 model on this core rarely has, and together they are about 12 KiB, past the
# code TCM; a program that calls them lists them.
list(FILTER ptec_board_kernels EXCLUDE REGEX
     "aten::(exp|expm1|log|log1p|log2|log10|sqrt|rsqrt|sin|cos|tan|asin|acos|atan|sinh|cosh|asinh|acosh|atanh|erf|abs|neg|floor|ceil|round|trunc|reciprocal|sign|minimum|maximum)[.,]")
string(JOIN "\n" ptec_board_kernels ${ptec_board_kernels})
file(WRITE ${CMAKE_BINARY_DIR}/board_kernels.def
     "/* boards/imx93_common/kernels.cmake: all_kernels.def without its ptec-only operators */\n${ptec_board_kernels}\n")
set(PTEC_BOARD_DEFAULT_KERNEL_LIST ${CMAKE_BINARY_DIR}/board_kernels.def)
# The requirements record's reader (about 1.2 KiB: ptec_method_requirements() reading the
# figures ptec's AOT wrote instead of walking the method) does not fit either: the server loads
# a model once per request, so its requirements walk the method (-DPTEC_REQUIREMENTS_RECORD=ON
# takes the reader back, for a server built with a program's own kernel list).
set(PTEC_BOARD_REQUIREMENTS_RECORD OFF)
