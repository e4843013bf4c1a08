/* Registry of delegate backends linked into this build. Like the kernel
 * table, the list is an X-macro file: PTEC_BACKEND_LIST, all_backends.def
 * unless a build (or a test with a mock backend) names another. */
#include <string.h>

#include "ptec/backend.h"

#ifndef PTEC_BACKEND_LIST
#define PTEC_BACKEND_LIST "all_backends.def"
#endif

#define PTEC_BACKEND(symbol) extern const ptec_backend symbol;
#include PTEC_BACKEND_LIST
#undef PTEC_BACKEND

static const ptec_backend *const backend_table[] = {
#define PTEC_BACKEND(symbol) &symbol,
#include PTEC_BACKEND_LIST
#undef PTEC_BACKEND
    NULL
};

/* Registering a backend is what links delegate support (the ptec_delegates
 * library): the load calls it through this hook, NULL when the table is
 * empty, so a build with no backend links none of it and refuses programs
 * with delegates, naming the backend (src/runtime/delegate_hook.c). */
struct ptec_delegate_support;
extern const struct ptec_delegate_support ptec_delegate_support;
const struct ptec_delegate_support *const ptec_delegate_hook =
    sizeof backend_table > sizeof backend_table[0] ? &ptec_delegate_support : NULL;

size_t ptec_backend_count(void)
{
    return sizeof(backend_table) / sizeof(backend_table[0]) - 1u;
}

const ptec_backend *ptec_backend_at(size_t index)
{
    return index < ptec_backend_count() ? backend_table[index] : NULL;
}

const ptec_backend *ptec_backend_find(const char *name, size_t name_len)
{
    for (size_t i = 0; i < ptec_backend_count(); ++i) {
        const char *candidate = backend_table[i]->name;
        if (strlen(candidate) == name_len && memcmp(candidate, name, name_len) == 0) {
            return backend_table[i];
        }
    }
    return NULL;
}
