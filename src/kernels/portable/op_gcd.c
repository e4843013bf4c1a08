/* PyTorch's gcd and lcm of int32 / int64 tensors, broadcast (int_binary.c):
 *   aten::gcd.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *   aten::lcm.out(Tensor self, Tensor other, *, Tensor(a!) out)
 *
 * gcd is Euclid's algorithm on |self| and |other| (gcd(0, 0) = 0); lcm is
 * |self / gcd * other| (0 when the gcd is 0), the product wrapping in the
 * dtype, as PyTorch's CPU kernels compute them. The least value's magnitude
 * is itself there (std::abs wraps), so gcd(least, 0) is the least value and
 * other results beside it may be negative: PyTorch's too. lcm of the least
 * value with a gcd of -1 (PyTorch's division traps) fails the execute
 * (InvalidArgument). Upstream's portable library has no gcd or lcm kernel:
 * these are ptec's, under PyTorch's schemas. */
#include "kernels/portable/int_binary.h"

static ptec_status run_gcd(ptec_op *op) { return ptec_int_binary_run(op, INT_GCD); }
static ptec_status run_lcm(ptec_op *op) { return ptec_int_binary_run(op, INT_LCM); }

const ptec_kernel ptec_kernel_aten_gcd_out = {"aten::gcd.out", sizeof(int_binary_state), ptec_int_binary_prepare,
                                              run_gcd};
const ptec_kernel ptec_kernel_aten_lcm_out = {"aten::lcm.out", sizeof(int_binary_state), ptec_int_binary_prepare,
                                              run_lcm};
