/* Delegate backends (for example an NPU). A backend is found by the id a
 * BackendDelegate names ("EthosUBackend"), at load time. */
#ifndef PTEC_BACKEND_H
#define PTEC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "ptec/status.h"
#include "ptec/types.h"

typedef struct ptec_delegate_blob {
    const uint8_t *data;     /* the processed blob; it stays resident in the program */
    size_t size;
    const uint8_t *specs;    /* private: the CompileSpec vector, read with the call below */
    uint32_t spec_count;
    const uint8_t *program;  /* private: the flatbuffer the specs live in */
    size_t program_size;
} ptec_delegate_blob;

/* Compile spec i as (key, value) byte ranges inside the program. */
ptec_status ptec_delegate_compile_spec(const ptec_delegate_blob *blob, size_t i,
                                       const char **key, size_t *key_len,
                                       const uint8_t **value, size_t *value_len);

typedef struct ptec_backend {
    const char *name;
    uint32_t handle_size; /* bytes of metadata the runtime gives each delegate instance */
    ptec_status (*init)(void *handle, const ptec_delegate_blob *blob);
    /* argv: the delegate's inputs, then its outputs. */
    ptec_status (*execute)(void *handle, ptec_value *const *argv, size_t argc);
    void (*destroy)(void *handle);
} ptec_backend;

size_t ptec_backend_count(void);
const ptec_backend *ptec_backend_at(size_t index);
const ptec_backend *ptec_backend_find(const char *name, size_t name_len);

#endif
