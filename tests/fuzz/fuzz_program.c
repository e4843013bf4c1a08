/* The fuzz target: one input is one .pte file, taken through everything a
 * user does with a program, with every buffer allocated at exactly the size
 * the runtime asked for, so ASan sees an access one byte past any of them.
 *
 * Linked into the libFuzzer binary (tests/fuzz, `make fuzz`) and into
 * fuzz_replay, which runs saved inputs (the seeds and the regression corpus)
 * under ctest with the ordinary compilers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_program.h"
#include "ptec/ptec.h"
#include "runtime/runtime_internal.h"

/* Larger requests are reported by the runtime and not allocated: the
 * fuzzer's point is memory safety, not the host's memory. */
#define FUZZ_MAX_BYTES (4u << 20)
#define FUZZ_MAX_METHODS 2u
#define FUZZ_MAX_IO 64u

/* An allocation of exactly `n` bytes that starts on the runtime's alignment.
 * posix_memalign does not round the size, so ASan's redzone starts at n. */
static void *exact_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, PTEC_BUFFER_ALIGN, n ? n : 1u) != 0) {
        abort();
    }
    return p;
}

/* Caller buffers of one run: the load's regions, or bound inputs and outputs. */
typedef struct run_memory {
    void *regions[FUZZ_MAX_IO];
    size_t count;
} run_memory;

static void *keep(run_memory *mem, size_t n)
{
    void *p = exact_alloc(n);
    mem->regions[mem->count++] = p;
    return p;
}

static void release(run_memory *mem)
{
    for (size_t i = 0; i < mem->count; ++i) {
        free(mem->regions[i]);
    }
    mem->count = 0;
}

char fuzz_last_error[PTEC_DETAIL_LEN + 64];

static void note_error(const char *message)
{
    snprintf(fuzz_last_error, sizeof fuzz_last_error, "%s", message);
}

static uint32_t hash_bytes(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; ++i) {
        h = (h ^ data[i]) * 16777619u;
    }
    return h;
}

/* Loads either with one region per kind (each exact-size) or carved from one
 * buffer, as the caller's choice would be. */
static ptec_status load(ptec_method *m, const ptec_program *p, const char *name, const ptec_requirements *req,
                        run_memory *mem, int single)
{
    if (single) {
        return ptec_method_load_single(m, p, name, keep(mem, req->total_bytes), req->total_bytes);
    }
    ptec_memory regions;
    memset(&regions, 0, sizeof regions);
    regions.metadata = keep(mem, req->metadata_bytes);
    regions.metadata_size = req->metadata_bytes;
    regions.planned_count = req->planned_count;
    for (size_t i = 0; i < req->planned_count && i < PTEC_MAX_PLANNED_BUFFERS; ++i) {
        regions.planned[i] = keep(mem, req->planned_bytes[i]);
        regions.planned_size[i] = req->planned_bytes[i];
    }
    regions.scratch = keep(mem, req->scratch_bytes);
    regions.scratch_size = req->scratch_bytes;
    if (req->fast_scratch_bytes > 0) {
        regions.fast_scratch = keep(mem, req->fast_scratch_bytes);
        regions.fast_scratch_size = req->fast_scratch_bytes;
    }
    return ptec_method_load(m, p, name, &regions);
}

/* Inputs filled with 0x3F bytes (0.75 as float, 63 as int8): ordinary
 * numbers, so kernels take their normal paths. A planned input is copied
 * from an exact-size buffer freed right after; an unplanned one is bound
 * once to an exact-size buffer kept in `io` until the run ends. */
static int set_inputs(ptec_method *m, run_memory *io, int first)
{
    for (size_t i = 0; i < ptec_method_input_count(m); ++i) {
        ptec_tensor_info info;
        if (ptec_method_input_info(m, i, &info) != PTEC_OK) {
            return 0;
        }
        if (info.kind != PTEC_VALUE_TENSOR || (!info.planned && !first)) {
            continue;
        }
        if (info.nbytes > FUZZ_MAX_BYTES || io->count == FUZZ_MAX_IO) {
            return 0;
        }
        uint8_t *bytes = exact_alloc(info.nbytes);
        memset(bytes, 0x3F, info.nbytes);
        ptec_status st;
        if (info.planned) {
            st = ptec_method_set_input(m, i, (ptec_dtype)info.dtype, info.sizes, info.rank, bytes, info.nbytes);
            free(bytes);
        } else {
            io->regions[io->count++] = bytes;
            st = ptec_method_bind_input(m, i, (ptec_dtype)info.dtype, info.sizes, info.rank, bytes, info.nbytes);
        }
        if (st != PTEC_OK) {
            return 0;
        }
    }
    return 1;
}

static int bind_outputs(ptec_method *m, run_memory *io)
{
    for (size_t i = 0; i < ptec_method_output_count(m); ++i) {
        ptec_tensor_info info;
        if (ptec_method_output_info(m, i, &info) != PTEC_OK) {
            return 0;
        }
        if (info.kind != PTEC_VALUE_TENSOR || info.planned || info.data != NULL) {
            continue;
        }
        if (info.nbytes > FUZZ_MAX_BYTES || io->count == FUZZ_MAX_IO) {
            return 0;
        }
        if (ptec_method_bind_output(m, i, keep(io, info.nbytes), info.nbytes) != PTEC_OK) {
            return 0;
        }
    }
    return 1;
}

/* Reads every output byte, so an output pointing outside its memory shows. */
static void read_outputs(const ptec_method *m)
{
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < ptec_method_output_count(m); ++i) {
        const ptec_tensor *t;
        if (ptec_method_output(m, i, &t) == PTEC_OK && t != NULL && t->data != NULL) {
            const uint8_t *bytes = t->data;
            for (uint32_t b = 0; b < t->nbytes; ++b) {
                sink ^= bytes[b];
            }
        }
    }
    (void)sink;
}

/* The API's contract on a loaded method: calls that are wrong by
 * construction must be refused (not crash, not succeed). A call that succeeds
 * anyway aborts, which libFuzzer reports like a crash. */
static void expect_refused(ptec_status st, const char *call)
{
    if (st == PTEC_OK) {
        fprintf(stderr, "fuzz: %s was accepted\n", call);
        abort();
    }
}

static void misuse(ptec_method *m)
{
    const size_t inputs = ptec_method_input_count(m);
    const size_t outputs = ptec_method_output_count(m);
    const size_t instructions = ptec_method_instruction_count(m);
    ptec_tensor_info info;
    const ptec_tensor *t;
    const char *name;
    size_t name_len;
    uint8_t byte = 0;
    expect_refused(ptec_method_input_info(m, inputs, &info), "input_info(count)");
    expect_refused(ptec_method_output_info(m, outputs, &info), "output_info(count)");
    expect_refused(ptec_method_output(m, outputs, &t), "output(count)");
    expect_refused(ptec_method_instruction_name(m, instructions, &name, &name_len), "instruction_name(count)");
    expect_refused(ptec_method_set_input(m, inputs, PTEC_DTYPE_FLOAT, NULL, 0, &byte, 1), "set_input(count)");
    expect_refused(ptec_method_bind_output(m, outputs, &byte, 1), "bind_output(count)");
    if (instructions > 0) {
        uint64_t tick;
        expect_refused(ptec_method_set_profile(m, &tick, instructions - 1u), "set_profile(too short)");
    }
    for (size_t i = 0; i < inputs; ++i) {
        if (ptec_method_input_info(m, i, &info) != PTEC_OK || info.kind != PTEC_VALUE_TENSOR ||
            info.nbytes > FUZZ_MAX_BYTES) {
            continue;
        }
        /* One byte too many, a shape with one more dim, the other dtype. */
        uint8_t *bytes = exact_alloc(info.nbytes + 1u);
        memset(bytes, 0x3F, info.nbytes + 1u);
        int32_t sizes[256];
        memcpy(sizes, info.sizes, info.rank * sizeof sizes[0]);
        sizes[info.rank] = 1;
        const ptec_dtype other = info.dtype == PTEC_DTYPE_FLOAT ? PTEC_DTYPE_CHAR : PTEC_DTYPE_FLOAT;
        if (info.planned) {
            expect_refused(ptec_method_set_input(m, i, (ptec_dtype)info.dtype, NULL, 0, bytes, info.nbytes + 1u),
                           "set_input(nbytes + 1)");
            expect_refused(ptec_method_set_input(m, i, (ptec_dtype)info.dtype, sizes, info.rank + 1u, bytes,
                                                 info.nbytes), "set_input(rank + 1)");
            expect_refused(ptec_method_set_input(m, i, other, NULL, 0, bytes, info.nbytes), "set_input(dtype)");
            expect_refused(ptec_method_bind_input(m, i, (ptec_dtype)info.dtype, NULL, 0, bytes, info.nbytes),
                           "bind_input(planned)");
        }
        free(bytes);
    }
}

static fuzz_stage run_method(const ptec_program *p, const char *name, int single)
{
    ptec_requirements req;
    ptec_method m;
    memset(&m, 0, sizeof m);
    if (ptec_method_requirements(&m, p, name, &req) != PTEC_OK) {
        note_error(ptec_method_error(&m));
        return FUZZ_STAGE_REQUIREMENTS;
    }
    if (req.total_bytes > FUZZ_MAX_BYTES || req.planned_count > PTEC_MAX_PLANNED_BUFFERS) {
        return FUZZ_STAGE_TOO_BIG;
    }
    run_memory mem = {{0}, 0};
    run_memory io = {{0}, 0};
    fuzz_stage stage = FUZZ_STAGE_LOAD;
    if (load(&m, p, name, &req, &mem, single) != PTEC_OK) {
        note_error(ptec_method_error(&m));
    } else {
        /* A small execution budget: two straight passes (the default is
         * PTEC_DEFAULT_BUDGET_PASSES), so a crafted loop ends quickly. */
        (void)ptec_method_set_budget(&m, 2u * ptec_method_pass_cost(&m));
        for (size_t i = 0; i < ptec_method_instruction_count(&m); ++i) {
            const char *op;
            size_t op_len;
            if (ptec_method_instruction_name(&m, i, &op, &op_len) == PTEC_OK && op_len > 0) {
                volatile char last = op[op_len - 1];
                (void)last;
            }
        }
        stage = FUZZ_STAGE_INPUTS;
        if (bind_outputs(&m, &io) && set_inputs(&m, &io, 1)) {
            stage = FUZZ_STAGE_EXECUTE;
            /* Twice: the second run starts from the state the first left
             * (inputs are given again: the plan may reuse their bytes). */
            /* Then a state reset (initial values copied back) and a third run. */
            if (ptec_method_execute(&m) == PTEC_OK && set_inputs(&m, &io, 0) && ptec_method_execute(&m) == PTEC_OK &&
                ptec_method_reset_state(&m) == PTEC_OK && set_inputs(&m, &io, 0) &&
                ptec_method_execute(&m) == PTEC_OK) {
                stage = FUZZ_STAGE_RAN;
                read_outputs(&m);
            }
        }
        if (stage != FUZZ_STAGE_RAN) {
            note_error(ptec_method_error(&m));
        }
        if (stage >= FUZZ_STAGE_EXECUTE) {
            misuse(&m);
        }
        ptec_method_unload(&m);
    }
    release(&io);
    release(&mem);
    return stage;
}

fuzz_stage fuzz_run_program(const uint8_t *data, size_t size)
{
    /* The program in a buffer of exactly its size. */
    uint8_t *copy = exact_alloc(size);
    if (size > 0) {
        memcpy(copy, data, size);
    }
    fuzz_stage furthest = FUZZ_STAGE_INIT;
    ptec_program p;
    fuzz_last_error[0] = '\0';
    if (ptec_program_init(&p, copy, size) != PTEC_OK) {
        note_error(ptec_program_error(&p));
    } else {
        const size_t methods = ptec_program_method_count(&p);
        const int single = (int)(hash_bytes(data, size) & 1u);
        furthest = FUZZ_STAGE_REQUIREMENTS;
        for (size_t i = 0; i < methods && i < FUZZ_MAX_METHODS; ++i) {
            const char *name;
            size_t name_len;
            char name_z[64];
            if (ptec_program_method_name(&p, i, &name, &name_len) != PTEC_OK || name_len >= sizeof name_z) {
                continue;
            }
            memcpy(name_z, name, name_len);
            name_z[name_len] = '\0';
            fuzz_stage stage = run_method(&p, name_z, single);
            furthest = stage > furthest ? stage : furthest;
        }
        const char *id;
        size_t id_len;
        ptec_delegate_blob blob;
        if (ptec_program_delegate(&p, NULL, 0, &id, &id_len, &blob) == PTEC_OK && blob.size > 0) {
            volatile uint8_t last = blob.data[blob.size - 1];
            (void)last;
        }
    }
    free(copy);
    return furthest;
}

const char *fuzz_stage_name(fuzz_stage stage)
{
    static const char *const names[] = {"init", "requirements", "too big", "load", "inputs", "execute", "ran"};
    return names[stage];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The input as a requirements record too, looking for its own first
     * entry's fingerprint and method (the one entry-matching path). */
    ptec_record_entry entry;
    (void)ptec_record_parse(data, size, size >= 20u ? fb_le32(data + 16) : 0u, size >= 24u ? fb_le32(data + 20) : 0u,
                            &entry);
    (void)fuzz_run_program(data, size);
    return 0;
}
