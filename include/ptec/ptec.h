/* ptec: run ExecuTorch .pte programs with caller-owned memory.
 *
 *   ptec_program_init()         check the header, find segments and constants
 *   ptec_method_requirements()  exact bytes a method needs, computed from the file
 *   ptec_method_load()          bind memory, resolve kernels, prepare every op
 *   ptec_method_set_input()     copy (or bind) inputs, checked against the program
 *   ptec_method_execute()       run the instruction list
 *   ptec_method_output()        read results
 *   ptec_method_reset_state()   put state tensors back to their initial values
 *
 * Nothing here allocates. Structures are the caller's; their fields are
 * private unless documented.
 *
 * The program is a read-only view: nothing writes a ptec_program after
 * ptec_program_init() returns, so it (and the bytes it views) can be `const`,
 * in flash or in write-protected memory, and one program can serve several
 * methods at once. Everything that changes lives in the caller's ptec_method:
 * the values, what requirements measured, and the last error's detail.
 *
 * Errors: every call returns a status. Its detail, one line, comes from
 * ptec_program_error() for ptec_program_init() and from ptec_method_error()
 * for every ptec_method_* call (requirements included). */
#ifndef PTEC_PTEC_H
#define PTEC_PTEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptec/backend.h"
#include "ptec/config.h"
#include "ptec/kernel.h"
#include "ptec/platform.h"
#include "ptec/status.h"
#include "ptec/types.h"

#define PTEC_BUFFER_ALIGN 16u /* every caller buffer must start on this boundary */
/* Default execution budget, in straight passes over the instruction list
 * (see ptec_method_set_budget). */
#define PTEC_DEFAULT_BUDGET_PASSES 4u

/* Why the last call failed, in words, plus where. */
typedef struct ptec_error_detail {
    ptec_status status;
    int32_t instruction;       /* -1 when not about an instruction */
    const char *op_name;       /* points into the program; NULL when unknown */
    uint32_t op_name_len;
    char message[PTEC_DETAIL_LEN];
} ptec_error_detail;

typedef struct ptec_requirements {
    size_t metadata_bytes;                          /* values, tensors, op state */
    size_t planned_count;                           /* planned buffers (memory ids 1..n) */
    size_t planned_bytes[PTEC_MAX_PLANNED_BUFFERS]; /* [i] is memory id i+1 */
    size_t scratch_bytes;                           /* temporaries, max over kernels and delegates */
    size_t fast_scratch_bytes;                      /* delegates' fast temporaries (e.g. NPU SRAM) */
    size_t total_bytes;                             /* for ptec_method_load_single() */
} ptec_requirements;

typedef struct ptec_program {
    const uint8_t *data;
    size_t size;               /* bytes available at data */
    size_t program_size;       /* flatbuffer part */
    uint64_t segment_base;
    uint64_t segment_data_size;
    uint32_t root;             /* position of the Program table */
    const uint8_t *constants;  /* new-style constant segment, or NULL */
    size_t constants_size;
    uint32_t constant_offsets; /* position of the offsets vector (0: none) */
    uint32_t constant_count;
    uint32_t legacy_buffers;   /* position of the constant_buffer vector (0: none) */
    uint32_t legacy_count;
    const uint8_t *mutables;   /* mutable_data_segments[0]'s segment: initial values, or NULL */
    size_t mutables_size;
    uint32_t mutable_offsets;  /* position of its offsets vector (0: none) */
    uint32_t mutable_count;
    ptec_error_detail error;   /* why ptec_program_init failed; written by it alone */
} ptec_program;


typedef struct ptec_memory {
    void *metadata;
    size_t metadata_size;
    void *planned[PTEC_MAX_PLANNED_BUFFERS];
    size_t planned_size[PTEC_MAX_PLANNED_BUFFERS];
    size_t planned_count;
    void *scratch;
    size_t scratch_size;
    void *fast_scratch;        /* only when a delegate asks for fast scratch; else NULL, 0 */
    size_t fast_scratch_size;
} ptec_memory;

struct ptec_instr;
struct ptec_exec_ctx;
struct ptec_kept_word;
/* What ptec_method_requirements() measured, kept so that the load that
 * follows does not walk the program a second time. */
typedef struct ptec_measurement {
    const ptec_program *program;
    const uint8_t *data;       /* the program's bytes and plan when measured */
    size_t size;
    uint32_t plan;
    uint32_t check;            /* tells a measurement from leftover bytes */
    uint32_t kept_values;      /* values the load keeps a header for */
    uint32_t from_record;      /* 1: read from the program's requirements record; 2: measured after it disagreed with a load */
    ptec_requirements req;
} ptec_measurement;

typedef struct ptec_method {
    const ptec_program *program;
    uint32_t plan;             /* position of the ExecutionPlan table */
    uint32_t values_vec;       /* position of the values vector */
    uint32_t value_count;
    ptec_value *values;        /* the values the load keeps (runtime_internal.h), in program order */
    const struct ptec_kept_word *kept; /* which ones they are */
    struct ptec_instr *instrs; /* one per instruction */
    struct ptec_exec_ctx *ctx;
    uint32_t instruction_count;
    uint32_t inputs_vec, input_count;
    uint32_t outputs_vec, output_count;
    uint8_t *input_set;        /* one flag per input */
    uint32_t inputs_ready;     /* inputs whose set flag is on (execute checks one number) */
    bool inputs_reused;        /* some planned input's bytes are overwritten by the plan */
    bool outputs_ready;        /* every output had memory at the last full check */
    ptec_delegate_ctx *delegates;
    uint32_t delegate_count;
    void *scratch;
    size_t scratch_size;
    void *fast_scratch;
    size_t fast_scratch_size;
    uint64_t *profile;         /* optional, one tick count per instruction */
    size_t profile_count;
    uint64_t last_execute_ticks;
    ptec_value **io;           /* input values, then output values (never re-read from the file) */
    uint64_t pass_cost;        /* cost of running every instruction once */
    uint64_t budget;           /* cost one execute may spend */
    bool loaded;
    bool executed;             /* an execute has succeeded since load */
    /* Last, so that a load can clear all of the above and keep these. */
    ptec_error_detail error;   /* the last failure of a call on this method */
    ptec_measurement measured;
} ptec_method;

/* Metadata about one input or output, readable before inputs are set. For
 * a bound-dynamic output (aten::masked_select's) sizes and nbytes are the
 * current ones: its bound before the first execute, then what the last
 * execute wrote. Memory for it (ptec_method_bind_output) must hold the bound:
 * query it before the first execute. */
typedef struct ptec_tensor_info {
    ptec_value_kind kind;      /* PTEC_VALUE_TENSOR for tensors */
    uint8_t dtype;
    uint8_t rank;
    const int32_t *sizes;
    const uint8_t *dim_order;
    size_t nbytes;
    bool planned;              /* set_input copies; otherwise the caller binds memory */
    const void *data;          /* where the bytes live once loaded: a planned input's or output's
                                  place in its planned buffer, a bound one's buffer; NULL when unbound */
} ptec_tensor_info;

/* Program ------------------------------------------------------------------ */

/* `data` must stay valid and unchanged while the program is used and be
 * 16-byte aligned. Nothing is copied: a program in flash runs in place. */
ptec_status ptec_program_init(ptec_program *program, const void *data, size_t size);
size_t ptec_program_method_count(const ptec_program *program);
/* Name of method i (not NUL-terminated). */
ptec_status ptec_program_method_name(const ptec_program *program, size_t index,
                                     const char **name, size_t *name_len);
/* Why ptec_program_init() failed, as one line ("" after a success; never NULL). */
const char *ptec_program_error(const ptec_program *program);

/* Delegate `index` of a method: the backend id it names and its blob, found
 * inline or in a segment. Works whether or not that backend is linked.
 * A query: status only, no detail. */
ptec_status ptec_program_delegate(const ptec_program *program, const char *method_name, size_t index,
                                  const char **backend_id, size_t *backend_id_len,
                                  ptec_delegate_blob *blob);

/* Method ------------------------------------------------------------------- */

/* Exact memory a method needs; allocates nothing. `name` NULL means "forward"
 * or, failing that, the first method. `method` receives the error detail
 * and remembers the result (nothing else of it is touched), so that a
 * ptec_method_load() of the same program and method that follows does not
 * walk the program again. Re-initialising the program object with other
 * bytes in between calls for a new measurement. */
ptec_status ptec_method_requirements(ptec_method *method, const ptec_program *program,
                                     const char *name, ptec_requirements *req);
/* Loads with the regions in `mem`. Any region smaller than required fails
 * with PTEC_MEMORY_ALLOCATION_FAILED, naming the region and the shortfall,
 * before any delegate is initialised. */
ptec_status ptec_method_load(ptec_method *method, const ptec_program *program, const char *name,
                             const ptec_memory *mem);
/* Convenience: carves metadata, planned buffers, scratch and fast scratch
 * (in that order, each 16-byte aligned) from one buffer of req.total_bytes. */
ptec_status ptec_method_load_single(ptec_method *method, const ptec_program *program,
                                    const char *name, void *buffer, size_t size);
/* Why the last call on `method` failed, as one line: which region, which
 * instruction, operator or backend, which argument (never NULL). */
const char *ptec_method_error(const ptec_method *method);

size_t ptec_method_input_count(const ptec_method *method);
size_t ptec_method_output_count(const ptec_method *method);
ptec_status ptec_method_input_info(const ptec_method *method, size_t index,
                                   ptec_tensor_info *info);
ptec_status ptec_method_output_info(const ptec_method *method, size_t index,
                                    ptec_tensor_info *info);

/* Copies nbytes of data into input `index`. `dtype` must match; `sizes` may be
 * NULL (then only nbytes is checked), otherwise rank and sizes must match. */
ptec_status ptec_method_set_input(ptec_method *method, size_t index, ptec_dtype dtype,
                                  const int32_t *sizes, size_t rank,
                                  const void *data, size_t nbytes);
/* Zero-copy: the input reads straight from `data`, which must stay valid
 * through execute. Only for inputs that are not memory-planned. */
ptec_status ptec_method_bind_input(ptec_method *method, size_t index, ptec_dtype dtype,
                                   const int32_t *sizes, size_t rank,
                                   void *data, size_t nbytes);
/* Gives a non-planned output the memory it writes to: at least its bytes at
 * its bound for a bound-dynamic output. */
ptec_status ptec_method_bind_output(ptec_method *method, size_t index, void *data,
                                    size_t nbytes);

/* Optional profiling: ticks[i] receives instruction i's ticks on each execute. */
ptec_status ptec_method_set_profile(ptec_method *method, uint64_t *ticks, size_t count);
size_t ptec_method_instruction_count(const ptec_method *method);
/* "aten::add.out" for a kernel call, "delegate:<id>" for a delegate call,
 * "move", "jump_false" or "free" otherwise. Not NUL-terminated. */
ptec_status ptec_method_instruction_name(const ptec_method *method, size_t index,
                                         const char **name, size_t *name_len);

/* Execution budget. Each instruction has a cost fixed at load: 1 plus the
 * bytes of the tensors it names, so one straight pass over the instruction
 * list costs ptec_method_pass_cost(). An execute that would spend more than
 * the budget stops with PTEC_OUT_OF_RESOURCES, naming the backward jump that
 * would exceed it (only a program that jumps backwards can get there; each
 * taken backward jump pays for the span it repeats). The default after load is
 * PTEC_DEFAULT_BUDGET_PASSES passes; `budget` 0 restores it, and a budget
 * below one pass is refused (PTEC_INVALID_ARGUMENT). */
uint64_t ptec_method_pass_cost(const ptec_method *method);
ptec_status ptec_method_set_budget(ptec_method *method, uint64_t budget);

ptec_status ptec_method_execute(ptec_method *method);
/* State. A planned tensor with an initial value (upstream's mutable buffers:
 * data_buffer_idx > 0 and allocation_info present, the bytes in
 * Program.mutable_data_segments[0]) gets that value copied into its planned
 * memory at load, as upstream's runtime does. Nothing else writes it but the
 * program's own instructions, so what one execute leaves there the next one
 * reads: a recurrent layer compiled with --stateful streams its hidden state
 * across executes. This call copies every initial value again (back to the
 * state right after load); the inputs stay set. PTEC_INVALID_STATE before a
 * successful load. A method without such tensors has nothing to reset (OK). */
ptec_status ptec_method_reset_state(ptec_method *method);
/* Output tensor `index` after a successful execute; before the first one,
 * PTEC_INVALID_STATE (there is no output yet). */
ptec_status ptec_method_output(const ptec_method *method, size_t index,
                               const ptec_tensor **tensor);
/* Calls each delegate's destroy hook. The caller's memory can then be reused. */
void ptec_method_unload(ptec_method *method);

#endif
