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

const ptec_kernel *ptec_kernel_find(const char *name, size_t name_len)
{
    for (size_t i = 0; i < ptec_kernel_count(); ++i) {
        const char *candidate = kernel_table[i]->name;
        if (strlen(candidate) == name_len && memcmp(candidate, name, name_len) == 0) {
            return kernel_table[i];
        }
    }
    return NULL;
}
