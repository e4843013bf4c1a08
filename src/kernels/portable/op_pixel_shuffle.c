/* aten::pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out)
 * aten::pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out)
 *
 * Depth to space and back on 4-D [N, C, H, W] tensors, r the factor:
 * shuffle maps input channel c * r * r + i * r + j at (h, w) to output
 * channel c at (h * r + i, w * r + j); unshuffle is its inverse. Any dtype
 * (int8 in quantized graphs: a copy of bytes, so the grid is the input's)
 * and any dim order. */
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

typedef struct shuffle_state {
    int32_t factor;
    uint32_t elem;
    uint8_t unshuffle;
} shuffle_state;

enum { ARG_SELF, ARG_FACTOR, ARG_OUT, ARG_RETURN, ARG_COUNT };

static ptec_status prepare_shuffle(ptec_op *op, uint8_t unshuffle)
{
    shuffle_state *s = op->state;
    ptec_tensor *in, *out;
    int32_t r;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT)) != PTEC_OK || (st = ptec_op_get_tensor(op, ARG_SELF, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_OUT, &out)) != PTEC_OK || (st = ptec_op_get_int32(op, ARG_FACTOR, &r)) != PTEC_OK) {
        return st;
    }
    if (in->rank != 4 || out->rank != 4 || in->dtype != out->dtype) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("self and out must be 4-D [N, C, H, W] of one dtype"));
    }
    if (r < 1 || r > 256) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_FACTOR, PTEC_MSG("the factor must be 1 to 256"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_OUT, PTEC_MSG("out is a constant tensor"));
    }
    /* The small side (in for shuffle, out for unshuffle) has r * r times the
     * channels and 1 / r of the height and width of the large side. */
    const ptec_tensor *deep = unshuffle ? out : in;
    const ptec_tensor *wide = unshuffle ? in : out;
    const int64_t rr = (int64_t)r * r;
    if (deep->sizes[0] != wide->sizes[0] || (int64_t)deep->sizes[1] != rr * wide->sizes[1] ||
        (int64_t)deep->sizes[2] * r != wide->sizes[2] || (int64_t)deep->sizes[3] * r != wide->sizes[3]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                            PTEC_MSG("the sizes are not [N, C * r * r, H, W] and [N, C, H * r, W * r]"));
    }
    memset(s, 0, sizeof *s);
    s->factor = r;
    s->elem = (uint32_t)ptec_dtype_size(in->dtype);
    s->unshuffle = unshuffle;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const shuffle_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, ARG_SELF), *out = ptec_op_tensor(op, ARG_OUT);
    const ptec_tensor *deep = s->unshuffle ? out : in;
    const ptec_tensor *wide = s->unshuffle ? in : out;
    int32_t sd[PTEC_MAX_RANK], sw[PTEC_MAX_RANK];
    ptec_physical_strides(deep, sd);
    ptec_physical_strides(wide, sw);
    const int32_t r = s->factor;
    const uint8_t *x = in->data;
    uint8_t *y = out->data;
    /* Walk the wide tensor; each element pairs with one of the deep one. */
    for (int32_t n = 0; n < wide->sizes[0]; ++n) {
        for (int32_t c = 0; c < wide->sizes[1]; ++c) {
            for (int32_t h = 0; h < wide->sizes[2]; ++h) {
                for (int32_t w = 0; w < wide->sizes[3]; ++w) {
                    const int32_t dc = (c * r + h % r) * r + w % r;
                    const size_t at_deep = (size_t)n * (size_t)sd[0] + (size_t)dc * (size_t)sd[1] +
                                           (size_t)(h / r) * (size_t)sd[2] + (size_t)(w / r) * (size_t)sd[3];
                    const size_t at_wide = (size_t)n * (size_t)sw[0] + (size_t)c * (size_t)sw[1] +
                                           (size_t)h * (size_t)sw[2] + (size_t)w * (size_t)sw[3];
                    if (s->unshuffle) {
                        memcpy(y + at_deep * s->elem, x + at_wide * s->elem, s->elem);
                    } else {
                        memcpy(y + at_wide * s->elem, x + at_deep * s->elem, s->elem);
                    }
                }
            }
        }
    }
    return PTEC_OK;
}

static ptec_status prepare_pixel_shuffle(ptec_op *op)
{
    return prepare_shuffle(op, 0);
}

static ptec_status prepare_pixel_unshuffle(ptec_op *op)
{
    return prepare_shuffle(op, 1);
}

const ptec_kernel ptec_kernel_aten_pixel_shuffle_out = {"aten::pixel_shuffle.out", sizeof(shuffle_state),
                                                        prepare_pixel_shuffle, run};
const ptec_kernel ptec_kernel_aten_pixel_unshuffle_out = {"aten::pixel_unshuffle.out", sizeof(shuffle_state),
                                                          prepare_pixel_unshuffle, run};
