/* The output size of aten::upsample_*2d.vec_out: output_size or
 * scale_factors, exactly one of them, giving out's [H, W] (PyTorch's rule:
 * out = floor(in * factor)). */
#ifndef PTEC_KERNELS_PORTABLE_UPSAMPLE_ARGS_H
#define PTEC_KERNELS_PORTABLE_UPSAMPLE_ARGS_H

#include "ptec/kernel.h"

/* PTEC_OK with factors[] = the two scale factors, or {0, 0} when
 * output_size was given; else the op's failure naming the argument. */
ptec_status ptec_upsample_output_args(ptec_op *op, size_t size_arg, size_t scales_arg, const ptec_tensor *in,
                                      const ptec_tensor *out, double factors[2]);

#endif
