/* ptec::bag_positions.out(Tensor offsets, int length, bool include_last_offset, *, Tensor(a!) out)
 *
 * nn.EmbeddingBag's bags, from offsets given at run time, as a table of
 * positions: out[b, j] = offsets[b] + j for the j-th id of bag b, and
 * `length` (one past the ids: the row ptec appends for "no id") for the
 * rest of row b. out is [bags, length] int64: a bag holds at most every
 * id, so the rows of the ids looked up by it (aten::embedding.out) are
 * each bag's ids then filler, reduced over dim 1 like bags of one length.
 *
 * offsets is 1-D int64, torch's: bag b spans ids [offsets[b], offsets[b+1])
 * and the last bag runs to the end of the ids, or with include_last_offset
 * the last offset ends the last bag (bags = len(offsets) - 1). The offsets
 * are data, checked as torch checks them before anything is written: the
 * first must be 0, none may decrease, and the last may not pass `length`;
 * otherwise the call fails with PTEC_INVALID_ARGUMENT. They are read again
 * and checked again as rows are written: a hostile plan may place out over
 * offsets, and a position past `length` is never written. */
#include "kernels/portable/portable_args.h"

enum { B_OFFSETS = 0, B_LENGTH = 1, B_LAST = 2, B_OUT = 3 };

typedef struct bag_positions_state {
    int32_t length;   /* the ids' count: the filler position */
    uint8_t last;     /* include_last_offset */
} bag_positions_state;

static ptec_status prepare(ptec_op *op)
{
    bag_positions_state *s = op->state;
    ptec_tensor *offsets, *out;
    int32_t length;
    bool last;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 5)) != PTEC_OK || (st = ptec_op_get_tensor(op, B_OFFSETS, &offsets)) != PTEC_OK ||
        (st = ptec_op_get_int32(op, B_LENGTH, &length)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, B_LAST, &last)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (offsets->dtype != PTEC_DTYPE_LONG || offsets->rank != 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, B_OFFSETS, PTEC_MSG("offsets must be a 1-D int64 tensor"));
    }
    if (length < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, B_LENGTH, PTEC_MSG("length must be at least 1"));
    }
    const int32_t bags = offsets->sizes[0] - (last ? 1 : 0);
    if (bags < 1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, B_OFFSETS, PTEC_MSG("offsets must name at least one bag"));
    }
    if (out->dtype != PTEC_DTYPE_LONG) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, B_OUT, PTEC_MSG("out must be int64"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, B_OUT, PTEC_MSG("out must not be a constant tensor"));
    }
    const int32_t want[2] = {bags, length};
    if ((st = ptec_portable_expect_sizes(op, B_OUT, out, want, 2, PTEC_MSG("out must be [bags, length]"))) != PTEC_OK) {
        return st;
    }
    if (out->dim_order[0] != 0) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, B_OUT, PTEC_MSG("out must be contiguous"));
    }
    s->length = length;
    s->last = last;
    return PTEC_OK;
}

/* Bag b's [start, end) in the ids, or false when the offsets break torch's
 * rules there (the first not 0, one decreasing, one past the ids) */
static bool bag_span(const bag_positions_state *s, const int64_t *offsets, int32_t count, int32_t b,
                     int64_t *start, int64_t *end)
{
    *start = offsets[b];
    *end = b + 1 < count ? offsets[b + 1] : (int64_t)s->length;
    return (b > 0 || *start == 0) && *start >= 0 && *start <= *end && *end <= s->length;
}

static ptec_status run(ptec_op *op)
{
    const bag_positions_state *s = op->state;
    const ptec_tensor *t_off = ptec_op_tensor(op, B_OFFSETS), *t_out = ptec_op_tensor(op, B_OUT);
    const int64_t *offsets = t_off->data;
    const int32_t count = t_off->sizes[0], bags = t_out->sizes[0];
    int64_t start, end;
    for (int32_t b = 0; b < bags; ++b) {
        if (!bag_span(s, offsets, count, b, &start, &end)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, B_OFFSETS,
                                PTEC_MSG("offsets must start at 0, never decrease and stay within the ids"));
        }
    }
    int64_t *y = t_out->data;
    for (int32_t b = 0; b < bags; ++b) {
        if (!bag_span(s, offsets, count, b, &start, &end)) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, B_OFFSETS,
                                PTEC_MSG("offsets must start at 0, never decrease and stay within the ids"));
        }
        int64_t *row = y + (size_t)b * (size_t)s->length;
        for (int32_t j = 0; j < s->length; ++j) {
            row[j] = start + j < end ? start + j : (int64_t)s->length;
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_bag_positions_out = {"ptec::bag_positions.out", sizeof(bag_positions_state), prepare,
                                                        run};
