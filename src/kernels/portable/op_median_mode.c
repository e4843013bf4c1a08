/* aten::median.dim_values(Tensor self, int dim, bool keepdim=False, *,
 *     Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
 * aten::nanmedian.dim_values(...)  (the same arguments)
 * aten::mode.values(...)           (the same arguments)
 *
 * One element of each row along dim, with its int64 position in the row:
 * the lower middle of the row's ascending order (median; nanmedian leaves
 * the NaNs out of the order), or the row's most frequent value (mode).
 * self and values are both float32 or both int8, any dim order; values and
 * indices of one dim order, with dim dropped (size 1 with keepdim). A
 * quantized graph passes its int8 values unchanged: dequantizing with a
 * positive scale keeps order and equality, and the values stay on self's
 * grid.
 *
 * The rules are PyTorch's (1.13, CPU) where it is deterministic:
 * - median: a row holding a NaN gives its first NaN; otherwise the element
 *   at position (n - 1) / 2 of the stable ascending order (equal values in
 *   row order), which is PyTorch's tie-break by index.
 * - nanmedian: the same over the m numbers of the row, position
 *   (m - 1) / 2; a row of NaNs only gives NaN at position 0 (PyTorch's
 *   position there is its partition's choice).
 * - mode: PyTorch's own procedure, which is deterministic: the row's
 *   (value, position) pairs sorted by value alone with libstdc++'s
 *   std::sort (introsort: std_sort.c), then the longest run of equal values in
 *   that order (a later run must be strictly longer, so the smallest value
 *   among equally frequent ones wins) gives the position of the run's last
 *   pair. On rows of up to 16 elements without NaN (an insertion sort,
 *   stable there) that is the value's last position;
 *   on longer rows it is where the sort's partitions leave it. NaN is
 *   unequal to everything (each NaN a run of one) and the sort compares it
 *   false both ways, as PyTorch's comparison of the values does; -0.0 and
 *   0.0 are one value. A PyTorch built with another C++ library (libc++,
 *   MSVC's) sorts differently and may give another position.
 *
 * median and nanmedian use no scratch memory: an element's place in the
 * order is found by comparing it with the whole row, so a row of n costs
 * up to n * n comparisons. mode asks 4 n bytes of scratch (the row's
 * positions, sorted; the values are read from self) and costs
 * O(n log n) comparisons. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/std_sort.h"
#include "kernels/portable/strides.h"

typedef struct row_pick_state {
    uint32_t n;       /* elements per row */
    uint8_t dim;      /* the reduced dim (0 for a 0-d self) */
    uint8_t keepdim;
} row_pick_state;

typedef enum { PICK_MEDIAN, PICK_NANMEDIAN, PICK_MODE } pick_rule;

static ptec_status prepare(ptec_op *op)
{
    row_pick_state *s = op->state;
    ptec_tensor *self, *values, *indices;
    int64_t dim64;
    bool keepdim;
    size_t returns;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 6)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &self)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 1, &dim64)) != PTEC_OK || (st = ptec_op_get_bool(op, 2, &keepdim)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 3, &values)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 4, &indices)) != PTEC_OK ||
        (st = ptec_op_get_tensor_list(op, 5, &returns)) != PTEC_OK) {
        return st;
    }
    if (returns != 2) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, 5, PTEC_MSG("return slot must list values and indices"));
    }
    if ((values->flags | indices->flags) & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, -1, PTEC_MSG("values and indices must not be constant tensors"));
    }
    if (self->dtype != values->dtype || (self->dtype != PTEC_DTYPE_FLOAT && self->dtype != PTEC_DTYPE_CHAR)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 3, PTEC_MSG("self and values must both be float32 or both int8"));
    }
    if (indices->dtype != PTEC_DTYPE_LONG) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 4, PTEC_MSG("indices must be int64"));
    }
    int dim = 0;
    if (self->rank > 0 && (st = ptec_portable_dim(op, 1, dim64, self->rank, &dim)) != PTEC_OK) {
        return st;
    }
    if (self->rank == 0 && dim64 != 0 && dim64 != -1) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("dim out of range for the tensor's rank"));
    }
    /* A 0-d self is one row of one element. */
    int32_t n = self->rank > 0 ? self->sizes[dim] : 1;
    if (n == 0) {
        /* PyTorch refuses a median or mode of no elements */
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("the reduced dim has no elements"));
    }
    int32_t want[PTEC_MAX_RANK];
    int rank = 0;
    for (int d = 0; d < self->rank; ++d) {
        if (d != dim || keepdim) {
            want[rank++] = d == dim ? 1 : self->sizes[d];
        }
    }
    if ((st = ptec_portable_expect_sizes(op, 3, values, want, rank,
                                         PTEC_MSG("values' sizes do not match self's without dim"))) != PTEC_OK ||
        (st = ptec_portable_expect_sizes(op, 4, indices, want, rank,
                                         PTEC_MSG("indices' sizes do not match values'"))) != PTEC_OK) {
        return st;
    }
    /* values and indices share one walk, so one dim order. */
    if (rank > 0 && memcmp(values->dim_order, indices->dim_order, (size_t)rank) != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 4, PTEC_MSG("indices' dim order differs from values'"));
    }
    memset(s, 0, sizeof *s);
    s->n = (uint32_t)n;
    s->dim = (uint8_t)dim;
    s->keepdim = keepdim;
    return PTEC_OK;
}

/* Element `at` of self widened to float (int8 codes
 * are exact in float, and keep their order and equality). */
static float element(const ptec_tensor *t, size_t at)
{
    return t->dtype == PTEC_DTYPE_CHAR ? (float)((const int8_t *)t->data)[at] : ((const float *)t->data)[at];
}

/* The position in the row of the median (skip_nan: nanmedian, NaNs left out). */
static uint32_t median_of(const ptec_tensor *t, size_t at, size_t step, uint32_t n, bool skip_nan)
{
    uint32_t numbers = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (!isnan(element(t, at + i * step))) {
            ++numbers;
        } else if (!skip_nan) {
            return i;                   /* median: the first NaN */
        }
    }
    if (numbers == 0) {
        return 0;                       /* nanmedian of NaNs only: NaN */
    }
    uint32_t want = (numbers - 1) / 2;
    for (uint32_t i = 0; i < n; ++i) {
        float v = element(t, at + i * step);
        if (isnan(v)) {
            continue;
        }
        /* v's place in the stable order: the smaller ones, and the equal
         * ones before it (a NaN is neither) */
        uint32_t place = 0;
        for (uint32_t j = 0; j < n; ++j) {
            float w = element(t, at + j * step);
            place += w < v || (w == v && j < i);
        }
        if (place == want) {
            return i;
        }
    }
    return 0;                           /* not reached: every place is taken once */
}

/* -- mode: libstdc++'s std::sort on the row's positions, ordered by value --
 *
 * PyTorch's CPU mode kernel sorts its pairs with libstdc++'s std::sort,
 * run here step for step by the shared ptec_std_sort (std_sort.c). Any
 * other sort (even a correct one) leaves equal values in another order,
 * and so another position. */

typedef struct mode_row {
    const ptec_tensor *t;
    size_t at, step;
} mode_row;

static float value_of(const mode_row *r, uint32_t position) { return element(r->t, r->at + position * r->step); }

/* std::sort's comparison in PyTorch's mode: the values' plain < (false both ways for a NaN) */
static bool mode_less(const void *ctx, uint32_t a, uint32_t b)
{
    const mode_row *r = ctx;
    return value_of(r, a) < value_of(r, b);
}

/* The position in the row of the mode (PyTorch's procedure above). */
static uint32_t mode_of(const ptec_tensor *t, size_t at, size_t step, uint32_t n, uint32_t *scratch)
{
    mode_row r = {t, at, step};
    for (uint32_t i = 0; i < n; ++i) {
        scratch[i] = i;
    }
    ptec_std_sort(scratch, n, mode_less, &r);
    uint32_t best = 0, best_count = 0, count = 0;
    for (uint32_t i = 0; i < n; ++i) {
        ++count;
        /* a run ends where the next value differs (!=: a NaN ends its run) */
        if (i == n - 1 || value_of(&r, scratch[i]) != value_of(&r, scratch[i + 1])) {
            if (count > best_count) {
                best = scratch[i];
                best_count = count;
            }
            count = 0;
        }
    }
    return best;
}

static ptec_status run_with(ptec_op *op, pick_rule rule)
{
    const row_pick_state *s = op->state;
    const ptec_tensor *t_in = ptec_op_tensor(op, 0), *t_val = ptec_op_tensor(op, 3);
    int64_t *idx = ptec_op_tensor(op, 4)->data;
    int32_t sx[PTEC_MAX_RANK] = {1}, kept_index[PTEC_MAX_RANK] = {0};
    ptec_reduce_walk w;
    ptec_reduce_walk_init(t_in, t_val, t_in->rank > 0 ? 1u << s->dim : 0u, s->keepdim, &w);
    if (t_in->rank > 0) {
        ptec_physical_strides(t_in, sx);
    }
    size_t step = (size_t)sx[t_in->rank > 0 ? s->dim : 0], off_x = 0, off_y = 0;
    for (uint32_t o = 0; o < t_val->numel; ++o) {
        uint32_t i = rule == PICK_MODE ? mode_of(t_in, off_x, step, s->n, op->scratch)
                                       : median_of(t_in, off_x, step, s->n, rule == PICK_NANMEDIAN);
        size_t at = off_x + i * step;
        if (t_in->dtype == PTEC_DTYPE_CHAR) {
            ((int8_t *)t_val->data)[off_y] = ((const int8_t *)t_in->data)[at];
        } else {
            ((float *)t_val->data)[off_y] = ((const float *)t_in->data)[at];
        }
        idx[off_y] = (int64_t)i;
        ptec_walk_step(w.kept, w.kept_sizes, kept_index, w.kept_sx, &off_x, w.kept_sy, &off_y);
    }
    return PTEC_OK;
}

/* mode's scratch: the row's positions, 4 bytes each */
static ptec_status prepare_mode(ptec_op *op)
{
    ptec_status st = prepare(op);
    if (st != PTEC_OK) {
        return st;
    }
    const row_pick_state *s = op->state;
    if (s->n > UINT32_MAX / sizeof(uint32_t)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 0, PTEC_MSG("row too long for the scratch"));
    }
    op->scratch_bytes = s->n * (uint32_t)sizeof(uint32_t);
    return PTEC_OK;
}

static ptec_status run_median(ptec_op *op) { return run_with(op, PICK_MEDIAN); }

static ptec_status run_nanmedian(ptec_op *op) { return run_with(op, PICK_NANMEDIAN); }

static ptec_status run_mode(ptec_op *op) { return run_with(op, PICK_MODE); }

const ptec_kernel ptec_kernel_aten_median_dim_values = {"aten::median.dim_values", sizeof(row_pick_state), prepare,
                                                        run_median};
const ptec_kernel ptec_kernel_aten_nanmedian_dim_values = {"aten::nanmedian.dim_values", sizeof(row_pick_state),
                                                           prepare, run_nanmedian};
const ptec_kernel ptec_kernel_aten_mode_values = {"aten::mode.values", sizeof(row_pick_state), prepare_mode,
                                                    run_mode};
