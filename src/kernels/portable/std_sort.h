/* libstdc++'s std::sort (GCC's bits/stl_algo.h and stl_heap.h), step for
 * step, on an array of uint32 entries ordered by a caller's comparison:
 * what PyTorch 1.13's CPU kernels run where they sort without stability
 * (torch.mode's (value, position) pairs; torch.sort(stable=False), whose
 * (value, index) pairs torchvision's batched_nms orders its kept boxes
 * by). Equal entries end in the order these exact steps leave them, which
 * no other sort (stable or not) reproduces: an introsort down to ranges of
 * 16 or less with a depth limit of 2 floor(log2 n) partitions (the median
 * of three moved to the front, an unguarded partition), a heapsort of a
 * range reaching the limit, then one insertion sort over the array. Only
 * the comparison sees what the entries stand for, so an array of
 * positions sorts as libstdc++ sorts the pairs they carry.
 * python/ptec/reference/std_sort.py runs the same steps. */
#ifndef PTEC_KERNELS_PORTABLE_STD_SORT_H
#define PTEC_KERNELS_PORTABLE_STD_SORT_H

#include <stdbool.h>
#include <stdint.h>

/* The strict weak order: true when entry a goes before entry b. */
typedef bool (*ptec_std_sort_less)(const void *ctx, uint32_t a, uint32_t b);

/* Sorts p[0, n) in place; no memory beyond p and a fixed stack. */
void ptec_std_sort(uint32_t *p, uint32_t n, ptec_std_sort_less less, const void *ctx);

#endif
