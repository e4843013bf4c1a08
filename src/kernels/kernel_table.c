/* The static operator table. Which kernels it holds is decided at build
 * time by PTEC_KERNEL_LIST, an X-macro file of PTEC_KERNEL(symbol) lines:
 * all_kernels.def by default, or a list generated from a program's operators
 * for a selective firmware build. Kernels not named are not linked. */
#include <string.h>

#include "ptec/kernel.h"

/* Every kernel, unless the build names a selection (CMake: PTEC_KERNEL_LIST). */
#ifndef PTEC_KERNEL_LIST
#define PTEC_KERNEL_LIST "all_kernels.def"
#endif

#define PTEC_KERNEL(symbol) extern const ptec_kernel symbol;
#include PTEC_KERNEL_LIST
#undef PTEC_KERNEL

static const ptec_kernel *const kernel_table[] = {
#define PTEC_KERNEL(symbol) &symbol,
#include PTEC_KERNEL_LIST
#undef PTEC_KERNEL
    NULL /* keeps the array non-empty for an empty selection */
};

size_t ptec_kernel_count(void)
{
    return sizeof(kernel_table) / sizeof(kernel_table[0]) - 1u;
}

const ptec_kernel *ptec_kernel_at(size_t index)
{
    return index < ptec_kernel_count() ? kernel_table[index] : NULL;
}

/* Byte order of the NUL-terminated kernel name k, from position *at,
 * against len bytes of part (from a file: any byte value, NUL included);
 * *at moves past what matched. */
static int compare_part(const char *k, size_t *at, const char *part, size_t len)
{
    /* Indexes from a local base, *at moved once at the end: a load looks up
     * each operator once, but with a dozen names sharing long prefixes. */
    const unsigned char *a = (const unsigned char *)k + *at;
    const unsigned char *b = (const unsigned char *)part;
    for (size_t j = 0; j < len; ++j) {
        if (a[j] == 0u || a[j] != b[j]) {
            return a[j] == 0u || a[j] < b[j] ? -1 : 1; /* k ended first, or the first difference */
        }
    }
    *at += len;
    return 0;
}

/* Byte order of kernel name k against "name" + "." + "overload" (or just
 * "name"): the order of the generated kernel lists. */
static int compare_kernel(const char *k, const char *name, size_t name_len, const char *overload,
                          size_t overload_len)
{
    size_t at = 0;
    int c = compare_part(k, &at, name, name_len);
    if (c == 0 && overload_len > 0u) {
        c = compare_part(k, &at, ".", 1u);
        if (c == 0) {
            c = compare_part(k, &at, overload, overload_len);
        }
    }
    return c != 0 ? c : (k[at] != '\0' ? 1 : 0);
}

/* The generated lists are sorted by name (python/ptec/ops.py), so a binary
 * search finds a kernel in a few comparisons. A hand-written list need not
 * be sorted: a name the search misses is looked for once more, in order,
 * so an unsorted list is slower, never wrong. */
const ptec_kernel *ptec_kernel_find_overload(const char *name, size_t name_len, const char *overload,
                                             size_t overload_len)
{
    size_t lo = 0;
    size_t hi = ptec_kernel_count();
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2u;
        const int c = compare_kernel(kernel_table[mid]->name, name, name_len, overload, overload_len);
        if (c == 0) {
            return kernel_table[mid];
        }
        if (c < 0) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    for (size_t i = 0; i < ptec_kernel_count(); ++i) {
        if (compare_kernel(kernel_table[i]->name, name, name_len, overload, overload_len) == 0) {
            return kernel_table[i];
        }
    }
    return NULL;
}

const ptec_kernel *ptec_kernel_find(const char *name, size_t name_len)
{
    return ptec_kernel_find_overload(name, name_len, NULL, 0);
}
