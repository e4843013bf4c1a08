#include "kernels/portable/grid_sampler_args.h"

#include "kernels/portable/portable_args.h"

ptec_status ptec_grid_sampler_prepare(ptec_op *op, int spatial, int32_t last_mode)
{
    ptec_grid_state *s = op->state;
    const bool volume = spatial == 3;
    const int rank = spatial + 2;
    ptec_tensor *in, *grid, *out;
    int32_t mode, padding;
    bool align;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, PTEC_GRID_ARGC)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, PTEC_GRID_IN, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, PTEC_GRID_GRID, &grid)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, PTEC_GRID_OUT, &out)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, PTEC_GRID_MODE, &mode)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, PTEC_GRID_PAD, &padding)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, PTEC_GRID_ALIGN, &align)) != PTEC_OK) {
        return st;
    }
    if (in->rank != rank || grid->rank != rank || out->rank != rank || in->dtype != PTEC_DTYPE_FLOAT ||
        grid->dtype != PTEC_DTYPE_FLOAT || out->dtype != PTEC_DTYPE_FLOAT) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, PTEC_GRID_OUT,
                            volume ? PTEC_MSG("input, grid and out must be 5-D float")
                                   : PTEC_MSG("input, grid and out must be 4-D float"));
    }
    /* grid [N, out sizes..., spatial], out [N, C, out sizes...] */
    int32_t want_grid[5], want_out[5];
    want_grid[0] = want_out[0] = in->sizes[0];
    want_out[1] = in->sizes[1];
    for (int d = 0; d < spatial; ++d) {
        want_grid[1 + d] = want_out[2 + d] = out->sizes[2 + d];
    }
    want_grid[rank - 1] = spatial;
    st = ptec_portable_expect_sizes(op, PTEC_GRID_GRID, grid, want_grid, rank,
                                    volume ? PTEC_MSG("grid must be [N, D_out, H_out, W_out, 3]")
                                           : PTEC_MSG("grid must be [N, H_out, W_out, 2]"));
    if (st == PTEC_OK) {
        st = ptec_portable_expect_sizes(op, PTEC_GRID_OUT, out, want_out, rank,
                                        volume ? PTEC_MSG("out must be [N, C, D_out, H_out, W_out]")
                                               : PTEC_MSG("out must be [N, C, H_out, W_out]"));
    }
    if (st != PTEC_OK) {
        return st;
    }
    if (in->numel == 0 || out->numel == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, PTEC_GRID_IN, PTEC_MSG("empty input or output"));
    }
    if (mode < PTEC_GRID_BILINEAR || mode > last_mode) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, PTEC_GRID_MODE,
                            last_mode == PTEC_GRID_BICUBIC ? PTEC_MSG("interpolation_mode must be 0, 1 or 2")
                                                           : PTEC_MSG("interpolation_mode must be 0 or 1"));
    }
    if (padding < PTEC_GRID_ZEROS || padding > PTEC_GRID_REFLECTION) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, PTEC_GRID_PAD, PTEC_MSG("padding_mode must be 0, 1 or 2"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, PTEC_GRID_OUT, PTEC_MSG("out is a constant tensor"));
    }
    s->mode = (uint8_t)mode;
    s->padding = (uint8_t)padding;
    s->align_corners = align;
    return PTEC_OK;
}
