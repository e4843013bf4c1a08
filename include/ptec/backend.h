/* Delegate backends (for example an NPU): the contract between the runtime
 * and a backend.
 *
 * A backend is found by the id a BackendDelegate names ("EthosUBackend"),
 * at load time, in the build's backend table (src/backends/all_backends.def,
 * or the list PTEC_BACKEND_LIST names). Its life with one delegate of one
 * method:
 *
 *   prepare()  run by ptec_method_requirements() and again by the load, before
 *              any memory exists: reads the blob and reports the bytes the
 *              delegate needs (ptec_delegate_needs). Must be deterministic and
 *              must not keep state: the two calls must report the same needs.
 *   init()     at load, once: the context now holds the memory prepare asked
 *              for and the method's planned buffers (their addresses are final).
 *   execute()  once per DelegateCall instruction run.
 *   destroy()  at ptec_method_unload(), or when a later step of the load fails.
 *
 * Memory, all of it the caller's (nothing is allocated):
 *   persistent    bytes that live as long as the loaded method (the backend's
 *                 handle: parsed blob pointers, driver state). Carved from the
 *                 method's metadata region, 16-byte aligned, zeroed before init.
 *   scratch       temporary bytes, valid during one init or execute call only.
 *                 Shared with the kernels' scratch (the method's scratch region
 *                 is the largest need of any kernel or delegate). 16-byte aligned.
 *   fast scratch  like scratch, but from the caller's separate fast-scratch
 *                 region (for example an NPU's dedicated SRAM). 16-byte aligned.
 * A region asked for with 0 bytes has base NULL.
 *
 * All hooks but execute may be NULL (prepare NULL: the delegate needs no memory). */
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

/* A byte range of caller memory. */
typedef struct ptec_region {
    uint8_t *base; /* NULL while requirements are measured, or when size is 0 */
    size_t size;
} ptec_region;

/* What prepare() reports; each becomes part of ptec_requirements. */
typedef struct ptec_delegate_needs {
    size_t persistent_bytes;   /* added to metadata_bytes (rounded up to 16) */
    size_t scratch_bytes;      /* scratch_bytes is at least this */
    size_t fast_scratch_bytes; /* fast_scratch_bytes is at least this */
} ptec_delegate_needs;

struct ptec_exec_ctx;   /* runtime-private */
struct ptec_backend;

/* What the runtime hands every hook. The runtime owns it; a backend reads it
 * and may keep pointers to it while the method stays loaded. */
typedef struct ptec_delegate_ctx {
    const struct ptec_backend *backend;
    uint32_t index;                  /* position in the method's delegate list */
    ptec_delegate_blob blob;         /* the delegate's processed bytes and compile specs */
    /* The method's planned buffers: planned[i] is memory id i+1 (the ids the
     * program's tensors name). Sizes are known in prepare; bases from init on,
     * where they are the caller's ptec_memory.planned[i] and stay fixed. */
    const ptec_region *planned;
    uint32_t planned_count;
    /* prepare: all {NULL, 0}. init, execute, destroy: exactly the sizes
     * prepare reported. */
    ptec_region persistent;
    ptec_region scratch;
    ptec_region fast_scratch;
    struct ptec_exec_ctx *exec;      /* private: the method, for ptec_delegate_fail() */
} ptec_delegate_ctx;

typedef struct ptec_backend {
    const char *name; /* the BackendDelegate id it serves, e.g. "EthosUBackend" */
    ptec_status (*prepare)(ptec_delegate_ctx *ctx, ptec_delegate_needs *needs);
    ptec_status (*init)(ptec_delegate_ctx *ctx);
    /* argv: the delegate's inputs, then its outputs (the DelegateCall's args). */
    ptec_status (*execute)(ptec_delegate_ctx *ctx, ptec_value *const *argv, size_t argc);
    void (*destroy)(ptec_delegate_ctx *ctx);
} ptec_backend;

/* Records why a hook failed, in the method's error detail (the same sink
 * kernels' ptec_op_fail() writes to: ptec_method_error() reads it), and
 * returns `status`. The detail names the backend, the delegate and, during
 * execute, the instruction. `message` must outlive the call (a literal). */
ptec_status ptec_delegate_fail(ptec_delegate_ctx *ctx, ptec_status status, const char *message);

size_t ptec_backend_count(void);
const ptec_backend *ptec_backend_at(size_t index);
const ptec_backend *ptec_backend_find(const char *name, size_t name_len);

#endif
