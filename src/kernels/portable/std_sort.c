/* libstdc++'s std::sort on uint32 entries (std_sort.h). The "unguarded"
 * scans of libstdc++ rely on the order's sentinels; they are kept bounded
 * here too, which changes nothing where libstdc++'s own scans stay in the
 * range (they do under a strict weak order). */
#include "kernels/portable/std_sort.h"

#include <stddef.h>
#include <string.h>

enum { SORT_THRESHOLD = 16, SORT_STACK = 64 };

typedef struct sorter {
    uint32_t *p;
    ptec_std_sort_less less;
    const void *ctx;
} sorter;

static bool lt(const sorter *s, uint32_t a, uint32_t b) { return s->less(s->ctx, a, b); }

static void swap_at(uint32_t *p, uint32_t i, uint32_t j)
{
    uint32_t k = p[i];
    p[i] = p[j];
    p[j] = k;
}

/* __move_median_to_first: the median of a, b, c to `result` (a swap) */
static void median_to_first(const sorter *s, uint32_t result, uint32_t a, uint32_t b, uint32_t c)
{
    const uint32_t *p = s->p;
    uint32_t pick;
    if (lt(s, p[a], p[b])) {
        pick = lt(s, p[b], p[c]) ? b : lt(s, p[a], p[c]) ? c : a;
    } else {
        pick = lt(s, p[a], p[c]) ? a : lt(s, p[b], p[c]) ? c : b;
    }
    swap_at(s->p, result, pick);
}

/* __unguarded_partition of [first, last) around the pivot at `pivot`:
 * where the upper part starts */
static uint32_t partition(const sorter *s, uint32_t first, uint32_t last, uint32_t pivot)
{
    uint32_t *p = s->p;
    uint32_t lo = first, hi = last;
    for (;;) {
        while (lo < last && lt(s, p[lo], p[pivot])) {
            ++lo;
        }
        --hi;
        while (hi > pivot && lt(s, p[pivot], p[hi])) {
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
static void adjust_heap(const sorter *s, uint32_t base, uint32_t hole, uint32_t len, uint32_t value)
{
    uint32_t *h = s->p + base;
    uint32_t top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (lt(s, h[child], h[child - 1])) {
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
    while (hole > top && lt(s, h[(hole - 1) / 2], value)) {
        h[hole] = h[(hole - 1) / 2];
        hole = (hole - 1) / 2;
    }
    h[hole] = value;
}

/* __partial_sort over the whole range: __make_heap, then __sort_heap */
static void heap_sort(const sorter *s, uint32_t first, uint32_t last)
{
    uint32_t len = last - first;
    if (len < 2) {
        return;
    }
    for (uint32_t parent = (len - 2) / 2 + 1; parent-- > 0;) {
        adjust_heap(s, first, parent, len, s->p[first + parent]);
    }
    while (len > 1) {
        --len;
        uint32_t value = s->p[first + len];
        s->p[first + len] = s->p[first];
        adjust_heap(s, first, 0, len, value);
    }
}

/* __introsort_loop: partition ranges longer than SORT_THRESHOLD, the
 * upper part first (libstdc++ recurses into it, then loops on the lower);
 * the ranges are disjoint, so a stack of pending lower parts with their
 * depths does the same. Each partition pushes at most one range and lowers
 * the depth, so the stack holds at most 2 floor(log2 n) < SORT_STACK. */
static void introsort(const sorter *s, uint32_t n)
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
                heap_sort(s, first, last);
                break;
            }
            --depth;
            median_to_first(s, first, first + 1, first + (last - first) / 2, last - 1);
            uint32_t cut = partition(s, first + 1, last, first);
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

/* __unguarded_linear_insert of entry i into the sorted p[0, i) */
static void insert_back(const sorter *s, uint32_t i)
{
    uint32_t *p = s->p;
    uint32_t v = p[i];
    while (i > 0 && lt(s, v, p[i - 1])) {
        p[i] = p[i - 1];
        --i;
    }
    p[i] = v;
}

/* __final_insertion_sort. The guarded __insertion_sort of the first
 * min(n, 16) moves an entry going before the first straight to the
 * front; otherwise both insert backwards past entries going after. */
static void final_insertion(const sorter *s, uint32_t n)
{
    uint32_t *p = s->p;
    uint32_t head = n < SORT_THRESHOLD ? n : SORT_THRESHOLD;
    for (uint32_t i = 1; i < head; ++i) {
        if (lt(s, p[i], p[0])) {
            uint32_t v = p[i];
            memmove(p + 1, p, i * sizeof *p);
            p[0] = v;
        } else {
            insert_back(s, i);
        }
    }
    for (uint32_t i = head; i < n; ++i) {
        insert_back(s, i);
    }
}

void ptec_std_sort(uint32_t *p, uint32_t n, ptec_std_sort_less less, const void *ctx)
{
    if (p == NULL || less == NULL || n < 2u) {
        return;
    }
    sorter s = {p, less, ctx};
    introsort(&s, n);
    final_insertion(&s, n);
}
