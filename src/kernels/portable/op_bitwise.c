/* PyTorch's bitwise functions of int32 / int64 tensors, broadcast (int_binary.c):
 *   aten::bitwise_and.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::bitwise_or.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::bitwise_xor.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::bitwise_left_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::bitwise_right_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
 *
 * On two's complement bits: a left shift drops the bits shifted out (it
 * wraps, as PyTorch's), a right shift is arithmetic (the sign copied in). A
 * shift amount that is negative or not below the width (32 or 64) fails the
 * execute (InvalidArgument): PyTorch 1.13's CPU kernels take it modulo the
 * width, 2.x's give 0 or the sign, so no one result is PyTorch's. */
#include "kernels/portable/int_binary.h"

static ptec_status run_and(ptec_op *op) { return ptec_int_binary_run(op, INT_AND); }
static ptec_status run_or(ptec_op *op) { return ptec_int_binary_run(op, INT_OR); }
static ptec_status run_xor(ptec_op *op) { return ptec_int_binary_run(op, INT_XOR); }
static ptec_status run_left_shift(ptec_op *op) { return ptec_int_binary_run(op, INT_LEFT_SHIFT); }
static ptec_status run_right_shift(ptec_op *op) { return ptec_int_binary_run(op, INT_RIGHT_SHIFT); }

const ptec_kernel ptec_kernel_aten_bitwise_and_tensor_out = {"aten::bitwise_and.Tensor_out", sizeof(int_binary_state),
                                                             ptec_int_binary_prepare, run_and};
const ptec_kernel ptec_kernel_aten_bitwise_or_tensor_out = {"aten::bitwise_or.Tensor_out", sizeof(int_binary_state),
                                                            ptec_int_binary_prepare, run_or};
const ptec_kernel ptec_kernel_aten_bitwise_xor_tensor_out = {"aten::bitwise_xor.Tensor_out", sizeof(int_binary_state),
                                                             ptec_int_binary_prepare, run_xor};
const ptec_kernel ptec_kernel_aten_bitwise_left_shift_tensor_out = {
    "aten::bitwise_left_shift.Tensor_out", sizeof(int_binary_state), ptec_int_binary_prepare, run_left_shift};
const ptec_kernel ptec_kernel_aten_bitwise_right_shift_tensor_out = {
    "aten::bitwise_right_shift.Tensor_out", sizeof(int_binary_state), ptec_int_binary_prepare, run_right_shift};
