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
 *   std::sort (introsort, below), then the longest run of equal values in
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
 * The steps and their constants are libstdc++'s (bits/stl_algo.h,
 * stl_heap.h), which PyTorch's CPU mode kernel runs on its pairs: an
 * introsort down to ranges of 16 (SORT_THRESHOLD) or less with a depth
 * limit of 2 floor(log2 n) partitions, a heapsort of a range that reaches
 * it, then one insertion sort over the whole row. Any other sort (even a
 * correct one) leaves equal values in another order, and so another
 * position. The "unguarded" scans of libstdc++ rely on the order's
 * sentinels; they are kept bounded here too, which changes nothing where
 * libstdc++'s own scans stay in the row. */

enum { SORT_THRESHOLD = 16, SORT_STACK = 64 };

typedef struct mode_row {
    const ptec_tensor *t;
    size_t at, step;
    uint32_t *p;      /* scratch: the row's positions, in sort order */
} mode_row;

static float value_of(const mode_row *r, uint32_t position) { return element(r->t, r->at + position * r->step); }

/* std::sort's comparison in PyTorch's mode: the values' plain < (false both ways for a NaN) */
static bool lt(const mode_row *r, uint32_t a, uint32_t b) { return value_of(r, a) < value_of(r, b); }

static void swap_at(uint32_t *p, uint32_t i, uint32_t j)
{
    uint32_t k = p[i];
    p[i] = p[j];
    p[j] = k;
}

/* __move_median_to_first: the median of a, b, c to `result` (a swap) */
static void median_to_first(const mode_row *r, uint32_t result, uint32_t a, uint32_t b, uint32_t c)
{
    const uint32_t *p = r->p;
    uint32_t pick;
    if (lt(r, p[a], p[b])) {
        pick = lt(r, p[b], p[c]) ? b : lt(r, p[a], p[c]) ? c : a;
    } else {
        pick = lt(r, p[a], p[c]) ? a : lt(r, p[b], p[c]) ? c : b;
    }
    swap_at(r->p, result, pick);
}

/* __unguarded_partition of [first, last) around the pivot at `pivot`:
 * where the upper part starts */
static uint32_t partition(const mode_row *r, uint32_t first, uint32_t last, uint32_t pivot)
{
    uint32_t *p = r->p;
    uint32_t lo = first, hi = last;
    for (;;) {
        while (lo < last && lt(r, p[lo], p[pivot])) {
            ++lo;
        }
        --hi;
        while (hi > pivot && lt(r, p[pivot], p[hi])) {
            --hi;
        }
        if (!(lo < hi)) {
            return lo;
        }
        swap_at(p, lo, hi);
        ++lo;
    }
}

/* __adjust_heap: sift the hole at `hole` of the heap p[base, base + len)
 * down to a leaf, then push `value` up from there (no higher than `hole`) */
static void adjust_heap(const mode_row *r, uint32_t base, uint32_t hole, uint32_t len, uint32_t value)
{
    uint32_t *h = r->p + base;
    uint32_t top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (lt(r, h[child], h[child - 1])) {
            --child;
        }
        h[hole] = h[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        h[hole] = h[child - 1];
        hole = child - 1;
    }
    while (hole > top && lt(r, h[(hole - 1) / 2], value)) {
        h[hole] = h[(hole - 1) / 2];
        hole = (hole - 1) / 2;
    }
    h[hole] = value;
}

/* __partial_sort over the whole range: __make_heap, then __sort_heap */
static void heap_sort(const mode_row *r, uint32_t first, uint32_t last)
{
    uint32_t len = last - first;
    if (len < 2) {
        return;
    }
    for (uint32_t parent = (len - 2) / 2 + 1; parent-- > 0;) {
        adjust_heap(r, first, parent, len, r->p[first + parent]);
    }
    while (len > 1) {
        --len;
        uint32_t value = r->p[first + len];
        r->p[first + len] = r->p[first];
        adjust_heap(r, first, 0, len, value);
    }
}

/* __introsort_loop: partition ranges longer than SORT_THRESHOLD, the
 * upper part first (libstdc++ recurses into it, then loops on the lower);
 * the ranges are disjoint, so a stack of pending lower parts with their
 * depths does the same. Each partition pushes at most one range and lowers
 * the depth, so the stack holds at most 2 floor(log2 n) < SORT_STACK. */
static void introsort(const mode_row *r, uint32_t n)
{
    struct { uint32_t first, last, depth; } stack[SORT_STACK];
    uint32_t depth = 0, top = 0;
    for (uint32_t m = n; m > 1; m >>= 1) {
        depth += 2;
    }
    uint32_t first = 0, last = n;
    for (;;) {
        while (last - first > SORT_THRESHOLD) {
            if (depth == 0) {
                heap_sort(r, first, last);
                break;
            }
            --depth;
            median_to_first(r, first, first + 1, first + (last - first) / 2, last - 1);
            uint32_t cut = partition(r, first + 1, last, first);
            if (top < SORT_STACK) {
                stack[top].first = first;
                stack[top].last = cut;
                stack[top].depth = depth;
                ++top;
            }
            first = cut;
        }
        if (top == 0) {
            return;
        }
        --top;
        first = stack[top].first;
        last = stack[top].last;
        depth = stack[top].depth;
    }
}

/* __unguarded_linear_insert of position i into the sorted p[0, i) */
static void insert_back(const mode_row *r, uint32_t i)
{
    uint32_t *p = r->p;
    uint32_t v = p[i];
    while (i > 0 && lt(r, v, p[i - 1])) {
        p[i] = p[i - 1];
        --i;
    }
    p[i] = v;
}

/* __final_insertion_sort. The guarded __insertion_sort of the first
 * min(n, 16) moves an element smaller than the first straight to the
 * front; otherwise both insert backwards past larger elements. */
static void final_insertion(const mode_row *r, uint32_t n)
{
    uint32_t *p = r->p;
    uint32_t head = n < SORT_THRESHOLD ? n : SORT_THRESHOLD;
    for (uint32_t i = 1; i < head; ++i) {
        if (lt(r, p[i], p[0])) {
            uint32_t v = p[i];
            memmove(p + 1, p, i * sizeof *p);
            p[0] = v;
        } else {
            insert_back(r, i);
        }
    }
    for (uint32_t i = head; i < n; ++i) {
        insert_back(r, i);
    }
}

/* The position in the row of the mode (PyTorch's procedure above). */
static uint32_t mode_of(const ptec_tensor *t, size_t at, size_t step, uint32_t n, uint32_t *scratch)
{
    mode_row r = {t, at, step, scratch};
    for (uint32_t i = 0; i < n; ++i) {
        scratch[i] = i;
    }
    introsort(&r, n);
    final_insertion(&r, n);
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
