/* aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out)
 *
 * The one form ptec's compiler emits: a single bool mask over self's leading
 * k dims (x[mask] with mask of x.shape[:k], k < rank; a mask over every dim is
 * aten::masked_select). out = the rows of self, each a self.sizes[k:] block,
 * where the mask is true, in row-major order: [count, self.sizes[k:]...].
 * The count depends on the mask's values, so out is a bound-dynamic tensor
 * planned for every row (its first size at least the mask's numel, checked
 * at prepare) and run sets its real first size. Upstream's kernel takes any
 * mix of index tensors; the others are refused here by name. Rows are copied
 * as bytes, so an int8 program's values stay exactly on the grid.
 *
 * ptec also takes out with a dim of size 1 in front, [1, bound,
 * self.sizes[k:]...] (torch's `x[mask].unsqueeze(0)` of rows), run setting
 * [1, count, ...]: a static-rank program cannot give the selection a dim in
 * front otherwise. Upstream's kernel resizes out to [count, ...] and so
 * refuses that form (upstream_rules.ptec_only_operators reports it).
 *
 * Leading None indices before the mask (x[:, :, mask], torch's and
 * upstream's meaning: the mask over self's dims p..p+k-1 after p whole
 * dims) give out [self.sizes[:p]..., count, self.sizes[p+k:]...], its
 * bound-dynamic dim p set at run (the mask may then cover the last dims);
 * upstream's kernel takes the same form. */
#include <string.h>

#include "ptec/kernel.h"

typedef struct index_state {
    uint32_t rows;      /* the mask's numel */
    uint32_t row_bytes; /* one self.sizes[p + k:] block */
    uint32_t outer;     /* self.sizes[:p]'s product */
    uint8_t k;          /* the mask's rank */
    uint8_t p;          /* the None indices before it */
    uint8_t lead;       /* 1: out [1, count, ...]; 0: [count, ...] */
} index_state;

static ptec_status prepare(ptec_op *op)
{
    index_state *s = op->state;
    ptec_tensor *self, *out, *mask, temp;
    size_t count;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4u)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK ||
        (st = ptec_op_get_optional_tensor_list(op, 1, &count)) != PTEC_OK) {
        return st;
    }
    if (count == 0u || count > self->rank) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1,
                            PTEC_MSG("only one index (a bool mask), after None indices, is supported"));
    }
    uint8_t p = (uint8_t)(count - 1u);
    for (uint8_t i = 0; i < p; ++i) {
        ptec_tensor *none;
        if ((st = ptec_op_get_optional_tensor_list_item(op, 1, i, &temp, &none)) != PTEC_OK) {
            return st;
        }
        if (none != NULL) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1,
                                PTEC_MSG("only one index (a bool mask), after None indices, is supported"));
        }
    }
    if ((st = ptec_op_get_optional_tensor_list_item(op, 1, p, &temp, &mask)) != PTEC_OK) {
        return st;
    }
    if (mask == NULL || mask->dtype != PTEC_DTYPE_BOOL) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1, PTEC_MSG("the index must be a bool mask"));
    }
    uint8_t k = mask->rank;
    if (k == 0u || (size_t)p + k > self->rank || (p == 0u && k == self->rank)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 1,
                            PTEC_MSG("the mask must cover self's leading dims (after any None indices), not all of them"));
    }
    for (uint8_t d = 0; d < k; ++d) {
        if (mask->sizes[d] != self->sizes[p + d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1,
                                PTEC_MSG("the mask's shape is not self's leading dims (after any None indices)"));
        }
    }
    if (!ptec_tensor_is_contiguous(self) || !ptec_tensor_is_contiguous(mask)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("self and the mask must be row-major"));
    }
    size_t es = ptec_dtype_size(self->dtype);
    if (out->dtype != self->dtype || es == 0u) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out must have self's dtype"));
    }
    /* a dim of 1 in front (no None indices): one more dim than the plain form, its first size exactly 1 */
    uint8_t lead = p == 0u && out->rank == 2u + self->rank - k && out->sizes[0] == 1 ? 1u : 0u;
    if (!(out->flags & PTEC_TENSOR_DYNAMIC) || (out->flags & PTEC_TENSOR_CONSTANT) || !ptec_tensor_is_contiguous(out) ||
        out->rank != 1u + lead + self->rank - k) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 2,
                            PTEC_MSG("out must be a row-major bound-dynamic tensor of one dim plus self's kept dims "
                                     "(or [1, that...])"));
    }
    uint32_t outer = 1u;
    for (uint8_t d = 0; d < p; ++d) {
        if (out->sizes[d] != self->sizes[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out's first dims are not self's"));
        }
        outer *= (uint32_t)self->sizes[d]; /* a factor of self's numel, which fits uint32 */
    }
    for (uint8_t d = (uint8_t)(p + k); d < self->rank; ++d) {
        if (out->sizes[1 + lead + d - k] != self->sizes[d]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("out's rows are not self's kept dims"));
        }
    }
    /* at load the sizes are the bound; the mask's numel rows must fit it */
    if ((uint32_t)out->sizes[p + lead] < mask->numel) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 2, PTEC_MSG("out's bound has fewer rows than the mask"));
    }
    s->rows = mask->numel;
    s->k = k;
    s->p = p;
    s->outer = outer;
    s->lead = lead;
    /* outer * rows * row_bytes is self's nbytes (outer and the mask's numel
     * are extents of self), which fits uint32 */
    s->row_bytes = mask->numel == 0u || outer == 0u ? 0u : self->nbytes / outer / mask->numel;
    return PTEC_OK;
}

static ptec_status run(ptec_op *op)
{
    const index_state *s = op->state;
    const ptec_tensor *self = ptec_op_tensor(op, 0), *mask = ptec_op_tensor_list_item(op, 1, s->p);
    ptec_tensor *out = ptec_op_tensor(op, 2);
    const uint8_t *x = self->data, *m = mask->data;
    uint8_t *y = out->data;
    int32_t count = 0;
    for (uint32_t r = 0; r < s->rows; ++r) {
        count += m[r] != 0u;
    }
    /* count <= rows, which out's planned bound holds (prepare): each outer
     * block of out, count rows, lies in the bound's */
    size_t at = 0;
    for (uint32_t o = 0; o < s->outer; ++o) {
        const uint8_t *block = x + (size_t)o * s->rows * s->row_bytes;
        for (uint32_t r = 0; r < s->rows; ++r) {
            if (m[r] != 0u) {
                /* memmove: a hostile plan may overlap out with self (junk, never out of bounds) */
                memmove(y + at * s->row_bytes, block + (size_t)r * s->row_bytes, s->row_bytes);
                ++at;
            }
        }
    }
    int32_t sizes[PTEC_MAX_RANK];
    sizes[0] = 1;
    for (uint8_t d = 0; d < s->p; ++d) {
        sizes[d] = self->sizes[d];
    }
    sizes[s->p + s->lead] = count;
    for (uint8_t d = (uint8_t)(s->p + s->lead + 1u); d < out->rank; ++d) {
        sizes[d] = self->sizes[s->k + d - s->lead - 1u];
    }
    if (ptec_tensor_resize(out, sizes, out->rank) != PTEC_OK) {
        return ptec_op_fail(op, PTEC_INVALID_STATE, 2, PTEC_MSG("out's size cannot be set (not resizable)"));
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_index_tensor_out = {"aten::index.Tensor_out", sizeof(index_state), prepare, run};
