"""libstdc++'s std::sort (GCC's bits/stl_algo.h and stl_heap.h) on a row's
positions ordered by value with the plain < (false both ways for a NaN):
what PyTorch 1.13's CPU torch.mode sorts its (value, position) pairs with,
and so which position its mode reports; with keys standing for another
order (descending_keys), torch.sort(descending=True, stable=False)'s,
which torchvision's batched_nms orders its kept boxes by. The same steps
as the C (src/kernels/portable/std_sort.c, shared by op_median_mode.c and
op_batched_nms.c): an introsort down to ranges of 16 with a depth limit of
2 floor(log2 n) partitions (the median of three moved to the front, an
unguarded partition), a heapsort of a range reaching the limit, then one
insertion sort over the row."""
from __future__ import annotations

import math
from typing import List, Optional, Sequence

THRESHOLD = 16


def sorted_positions(values: Sequence[float], depth_limit: Optional[int] = None) -> List[int]:
    """The positions 0..n-1 of values in the order std::sort leaves them
    (depth_limit: libstdc++'s 2 floor(log2 n) unless given; tests pass a
    larger one to tell whether a row reaches the heapsort). The values are
    compared as given, with their own <."""
    v = list(values)
    p = list(range(len(v)))
    n = len(p)

    def lt(a: int, b: int) -> bool:
        return v[a] < v[b]

    def median_to_first(result, a, b, c):
        if lt(p[a], p[b]):
            pick = b if lt(p[b], p[c]) else c if lt(p[a], p[c]) else a
        else:
            pick = a if lt(p[a], p[c]) else c if lt(p[b], p[c]) else b
        p[result], p[pick] = p[pick], p[result]

    def partition(first, last, pivot):
        lo, hi = first, last
        while True:
            while lo < last and lt(p[lo], p[pivot]):
                lo += 1
            hi -= 1
            while hi > pivot and lt(p[pivot], p[hi]):
                hi -= 1
            if not lo < hi:
                return lo
            p[lo], p[hi] = p[hi], p[lo]
            lo += 1

    def adjust_heap(base, hole, length, value):
        top = child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if lt(p[base + child], p[base + child - 1]):
                child -= 1
            p[base + hole] = p[base + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            p[base + hole] = p[base + child - 1]
            hole = child - 1
        while hole > top and lt(p[base + (hole - 1) // 2], value):
            p[base + hole] = p[base + (hole - 1) // 2]
            hole = (hole - 1) // 2
        p[base + hole] = value

    def heap_sort(first, last):
        length = last - first
        if length < 2:
            return
        for parent in range((length - 2) // 2, -1, -1):
            adjust_heap(first, parent, length, p[first + parent])
        while length > 1:
            length -= 1
            value = p[first + length]
            p[first + length] = p[first]
            adjust_heap(first, 0, length, value)

    def introsort(first, last, depth):
        while last - first > THRESHOLD:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            introsort(cut, last, depth)
            last = cut

    def insert_back(i):
        x = p[i]
        while i > 0 and lt(x, p[i - 1]):
            p[i] = p[i - 1]
            i -= 1
        p[i] = x

    if n:
        introsort(0, n, 2 * (n.bit_length() - 1) if depth_limit is None else depth_limit)
        head = min(n, THRESHOLD)
        for i in range(1, head):
            if lt(p[i], p[0]):
                p[1:i + 1], p[0] = p[0:i], p[i]
            else:
                insert_back(i)
        for i in range(head, n):
            insert_back(i)
    return p


def descending_keys(values: Sequence[float]) -> List[tuple]:
    """Keys whose plain < is PyTorch's CPU comparison for a descending sort
    (KeyValueCompDesc: a NaN before every number, else the larger first,
    -0.0 and 0.0 equal), so sorted_positions(descending_keys(v)) is the
    order torch.sort(v, descending=True, stable=False) gives."""
    return [(-1, 0.0) if math.isnan(x) else (0, -float(x)) for x in (float(v) for v in values)]


def mode_position(values: Sequence[float]) -> int:
    """PyTorch's torch.mode position of a row: over the sorted positions, the
    last position of the first longest run of equal values (!=: a NaN ends
    its run; -0.0 and 0.0 are one value)."""
    v = [float(x) for x in values]
    p = sorted_positions(v)
    best, best_count, count = 0, 0, 0
    for i in range(len(p)):
        count += 1
        if i == len(p) - 1 or v[p[i]] != v[p[i + 1]]:
            if count > best_count:
                best, best_count = p[i], count
            count = 0
    return best
