/* The output size of aten::upsample_*2d.vec_out: output_size or
 * scale_factors, exactly one of them, giving out's [H, W] (PyTorch's rule:
 * out = floor(in * factor)); first, out not a constant and neither tensor
 * empty. */
#ifndef PTEC_KERNELS_PORTABLE_UPSAMPLE_ARGS_H
#define PTEC_KERNELS_PORTABLE_UPSAMPLE_ARGS_H

#include "ptec/kernel.h"

/* PTEC_OK with factors[] = the two scale factors, or {0, 0} when
 * output_size was given; else the op's failure naming the argument. */
ptec_status ptec_upsample_output_args(ptec_op *op, size_t size_arg, size_t scales_arg, const ptec_tensor *in,
                                      const ptec_tensor *out, double factors[2]);

/* The state and prepare of the interpolating resizes (bilinear, bicubic),
 * whose arguments are the same: input, output_size, align_corners,
 * scale_factors, out, return. Checks a 4-D float input and out of equal N
 * and C, a non-constant out, no empty tensor, the output size; keeps
 * align_corners and each axis's source scale, in float (PyTorch's
 * area_pixel_compute_scale): align_corners: (in - 1) / (out - 1), 0 when
 * out is 1; else 1 / scale_factor when given, or in / out. */
typedef struct ptec_upsample_interp_state {
    float scale[2]; /* H, W */
    bool align_corners;
} ptec_upsample_interp_state;

enum { PTEC_UPSAMPLE_IN, PTEC_UPSAMPLE_SIZE, PTEC_UPSAMPLE_ALIGN, PTEC_UPSAMPLE_SCALES, PTEC_UPSAMPLE_OUT,
       PTEC_UPSAMPLE_RETURN, PTEC_UPSAMPLE_ARGC };

ptec_status ptec_upsample_interp_prepare(ptec_op *op);

#endif
