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

/* Byte order of a NUL-terminated candidate against name[0..name_len). */
static int compare(const char *candidate, const char *name, size_t name_len)
{
    const int c = strncmp(candidate, name, name_len);
    if (c != 0) {
        return c;
    }
    return candidate[name_len] != '\0' ? 1 : 0;
}

/* The generated lists are sorted by name (python/ptec/ops.py), so a binary
 * search finds a kernel in a few comparisons. A hand-written list need not
 * be sorted: a name the search misses is looked for once more, in order,
 * so an unsorted list is slower, never wrong. */
const ptec_kernel *ptec_kernel_find(const char *name, size_t name_len)
{
    size_t lo = 0;
    size_t hi = ptec_kernel_count();
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2u;
        const int c = compare(kernel_table[mid]->name, name, name_len);
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
        if (compare(kernel_table[i]->name, name, name_len) == 0) {
            return kernel_table[i];
        }
    }
    return NULL;
}
