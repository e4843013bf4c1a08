#include "kernels/portable/data_movement.h"

#include <string.h>

#include "kernels/portable/strides.h"

ptec_status ptec_move_prepare(ptec_op *op, size_t argc, ptec_tensor **self, ptec_tensor **out)
{
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, argc)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, out)) != PTEC_OK) {
        return st;
    }
    if ((*self)->dtype != (*out)->dtype || ptec_dtype_size((*out)->dtype) == 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("self and out must share one dtype"));
    }
    return PTEC_OK;
}

ptec_status ptec_move_prepare_list(ptec_op *op, ptec_move_list_args *args)
{
    const ptec_status st = ptec_move_prepare(op, 4, &args->self, &args->out);
    return st != PTEC_OK ? st : ptec_op_get_int_list(op, 1, args->list, PTEC_MAX_RANK, &args->count, false);
}

ptec_status ptec_move_run_reshape(ptec_op *op)
{
    ptec_copy_reshape(ptec_op_tensor(op, 0), ptec_op_tensor(op, 2));
    return PTEC_OK;
}

void ptec_copy_reshape(const ptec_tensor *in, const ptec_tensor *out)
{
    size_t es = ptec_dtype_size(out->dtype);
    const uint8_t *src = in->data;
    uint8_t *dst = out->data;
    if (ptec_tensor_is_contiguous(in) && ptec_tensor_is_contiguous(out)) {
        memmove(dst, src, (size_t)out->numel * es);
        return;
    }
    int32_t s_in[PTEC_MAX_RANK], s_out[PTEC_MAX_RANK], zero[PTEC_MAX_RANK] = {0};
    int32_t i_in[PTEC_MAX_RANK] = {0}, i_out[PTEC_MAX_RANK] = {0};
    ptec_physical_strides(in, s_in);
    ptec_physical_strides(out, s_out);
    size_t off_in = 0, off_out = 0, unused = 0;
    for (uint32_t n = 0; n < out->numel; ++n) {
        memcpy(dst + off_out * es, src + off_in * es, es);
        ptec_walk_step(in->rank, in->sizes, i_in, s_in, &off_in, zero, &unused);
        ptec_walk_step(out->rank, out->sizes, i_out, s_out, &off_out, zero, &unused);
    }
}

void ptec_copy_strided(size_t elem_size, int rank, const int32_t *sizes, const uint8_t *in, const int32_t *in_strides,
                       size_t in_offset, uint8_t *out, const int32_t *out_strides, size_t out_offset)
{
    uint64_t numel = 1;
    for (int d = 0; d < rank; ++d) {
        numel *= (uint64_t)sizes[d];
    }
    int32_t index[PTEC_MAX_RANK] = {0};
    for (uint64_t n = 0; n < numel; ++n) {
        memcpy(out + out_offset * elem_size, in + in_offset * elem_size, elem_size);
        ptec_walk_step(rank, sizes, index, in_strides, &in_offset, out_strides, &out_offset);
    }
}
