/* What aten::grid_sampler_2d.out and aten::grid_sampler_3d.out share: their
 * arguments (input, grid, interpolation_mode, padding_mode, align_corners,
 * out), the checks prepare makes of them, the codes of the modes, and the
 * one safe way to turn a coordinate read from a tensor into an index. How a
 * coordinate is unnormalized, padded and weighed is each kernel's own:
 * PyTorch computes 2-D with its vectorized CPU kernel and 3-D with its scalar
 * one, which differ on NaN, on reflection and on halfway nearest positions
 * (before PyTorch 2.1). */
#ifndef PTEC_KERNELS_PORTABLE_GRID_SAMPLER_ARGS_H
#define PTEC_KERNELS_PORTABLE_GRID_SAMPLER_ARGS_H

#include "ptec/kernel.h"

enum { PTEC_GRID_IN, PTEC_GRID_GRID, PTEC_GRID_MODE, PTEC_GRID_PAD, PTEC_GRID_ALIGN, PTEC_GRID_OUT, PTEC_GRID_RETURN,
       PTEC_GRID_ARGC };
enum { PTEC_GRID_BILINEAR, PTEC_GRID_NEAREST, PTEC_GRID_BICUBIC };
enum { PTEC_GRID_ZEROS, PTEC_GRID_BORDER, PTEC_GRID_REFLECTION };

typedef struct ptec_grid_state {
    uint8_t mode, padding;
    bool align_corners;
} ptec_grid_state;

/* prepare of a sampler over `spatial` (2 or 3) axes: float32 input
 * [N, C, spatial sizes...], grid [N, out sizes..., spatial] and out
 * [N, C, out sizes...], none empty, out not a constant, interpolation_mode
 * in 0 .. last_mode and padding_mode in 0 .. 2, kept in op->state (a
 * ptec_grid_state). */
ptec_status ptec_grid_sampler_prepare(ptec_op *op, int spatial, int32_t last_mode);

/* A whole-number coordinate v plus k as an index into [0, size), else -1.
 * Only v in [-8, 2^30] is converted: elsewhere (NaN, infinities, huge
 * floats) the conversion is undefined in C, and the index lies outside the
 * input anyway. */
static inline int32_t ptec_grid_index(float v, int32_t k, int32_t size)
{
    if (!(v >= -8.0f && v <= 1073741824.0f)) {
        return -1;
    }
    const int32_t i = (int32_t)v + k;
    return i >= 0 && i < size ? i : -1;
}

#endif
