/* The delegate path and the backend contract (include/ptec/backend.h), with
 * a stand-in backend named EthosUBackend:
 *   - the upstream Ethos-U sample loads; its blob and compile specs reach the
 *     backend; each execute calls it once with the delegate's inputs then its
 *     outputs; failures name the backend; unload destroys what init built;
 *   - what prepare() reports (persistent, scratch, fast scratch) enters the
 *     requirements exactly: load with exactly those sizes works and the
 *     backend gets exactly its bytes (each region is allocated to its exact
 *     size, so ASan sees any write past one); one byte less in any region
 *     fails with PTEC_MEMORY_ALLOCATION_FAILED naming it, before init;
 *   - the backend sees the planned buffers: the caller's addresses and the
 *     sizes the Python writer put in the file (argv[2], the .sizes sidecar);
 *   - a load right after requirements does not measure again.
 * argv[1]: ethos_two_buffers.pte and argv[2]: its .sizes, from
 * make_delegate_programs.py. */
#include <stdint.h>

#include "ptec/ptec.h"
#include "test_regions.h"
#include "test_util.h"

static int checks;
#define T(cond) do { ++checks; CHECK(cond); } while (0)
#define TS(expr, want) do { ++checks; CHECK_STATUS(expr, want); } while (0)

#define PATTERN 0xA5
#define MOCK_STATE_BYTES 16u /* the mock's own state at the start of its persistent bytes */

typedef struct mock_state {
    int initialised;
    int executions;
} mock_state;

/* What the test asks the backend to do, and what the backend saw. */
static struct {
    ptec_delegate_needs needs;
    int grow_at_load;         /* ask for more scratch in the load's prepare than when measured */
    int prepares, inits, executes, destroys;
    size_t blob_size;
    int saw_target_spec;
    size_t argc;
    int args_int8;
    int persistent_zeroed;    /* persistent bytes arrived zeroed */
    int persistent_kept;      /* the pattern init wrote was intact at execute */
    uint32_t planned_count;
    ptec_region planned[PTEC_MAX_PLANNED_BUFFERS];
    uint32_t prepare_planned_count;
    ptec_region prepare_planned[PTEC_MAX_PLANNED_BUFFERS];
    ptec_region persistent, scratch, fast_scratch;
    ptec_status prepare_result, init_result, execute_result;
    const char *fail_message; /* given: the hook reports it with ptec_delegate_fail */
} mock;

static ptec_status mock_prepare(ptec_delegate_ctx *ctx, ptec_delegate_needs *needs)
{
    ++mock.prepares;
    mock.prepare_planned_count = ctx->planned_count;
    memcpy(mock.prepare_planned, ctx->planned, sizeof(ptec_region) * ctx->planned_count);
    if (ctx->blob.size < 15 || memcmp(ctx->blob.data, "vela_bin_stream", 15) != 0) {
        return ptec_delegate_fail(ctx, PTEC_DELEGATE_INVALID_COMPATIBILITY, "not a vela_bin_stream");
    }
    if (mock.prepare_result != PTEC_OK) {
        return mock.fail_message ? ptec_delegate_fail(ctx, mock.prepare_result, mock.fail_message)
                                 : mock.prepare_result;
    }
    *needs = mock.needs;
    if (needs->persistent_bytes < MOCK_STATE_BYTES) {
        needs->persistent_bytes = MOCK_STATE_BYTES;
    }
    if (mock.grow_at_load && mock.prepares % 2 == 0) {
        needs->scratch_bytes += 16;
    }
    return PTEC_OK;
}

static int all_bytes(const ptec_region *r, int value, size_t from)
{
    for (size_t i = from; i < r->size; ++i) {
        if (r->base[i] != value) {
            return 0;
        }
    }
    return 1;
}

/* Touches every byte of the temporary regions: a region smaller than
 * promised is an ASan report. */
static void fill_temporaries(const ptec_delegate_ctx *ctx)
{
    if (ctx->scratch.size > 0) {
        memset(ctx->scratch.base, PATTERN, ctx->scratch.size);
    }
    if (ctx->fast_scratch.size > 0) {
        memset(ctx->fast_scratch.base, PATTERN, ctx->fast_scratch.size);
    }
}

static ptec_status mock_init(ptec_delegate_ctx *ctx)
{
    mock_state *s = (mock_state *)(void *)ctx->persistent.base;
    ++mock.inits;
    mock.blob_size = ctx->blob.size;
    mock.saw_target_spec = 0;
    for (size_t i = 0; i < ctx->blob.spec_count; ++i) {
        const char *key;
        size_t key_len, value_len;
        const uint8_t *value;
        if (ptec_delegate_compile_spec(&ctx->blob, i, &key, &key_len, &value, &value_len) == PTEC_OK &&
            key_len == 6 && memcmp(key, "target", 6) == 0) {
            mock.saw_target_spec = 1;
        }
    }
    mock.persistent = ctx->persistent;
    mock.scratch = ctx->scratch;
    mock.fast_scratch = ctx->fast_scratch;
    mock.planned_count = ctx->planned_count;
    memcpy(mock.planned, ctx->planned, sizeof(ptec_region) * ctx->planned_count);
    mock.persistent_zeroed = all_bytes(&ctx->persistent, 0, 0);
    memset(ctx->persistent.base, PATTERN, ctx->persistent.size);
    fill_temporaries(ctx);
    if (mock.init_result != PTEC_OK) {
        return mock.fail_message ? ptec_delegate_fail(ctx, mock.init_result, mock.fail_message) : mock.init_result;
    }
    s->initialised = 1;
    s->executions = 0;
    return PTEC_OK;
}

/* Stands in for the NPU: the output is the first input, element by element. */
static ptec_status mock_execute(ptec_delegate_ctx *ctx, ptec_value *const *argv, size_t argc)
{
    mock_state *s = (mock_state *)(void *)ctx->persistent.base;
    ++mock.executes;
    mock.persistent_kept = s->initialised == 1 && all_bytes(&ctx->persistent, PATTERN, MOCK_STATE_BYTES);
    ++s->executions;
    mock.argc = argc;
    mock.args_int8 = 1;
    for (size_t i = 0; i < argc; ++i) {
        mock.args_int8 &= argv[i]->kind == PTEC_VALUE_TENSOR && argv[i]->u.tensor->dtype == PTEC_DTYPE_CHAR;
    }
    fill_temporaries(ctx);
    if (mock.execute_result != PTEC_OK) {
        return mock.fail_message ? ptec_delegate_fail(ctx, mock.execute_result, mock.fail_message)
                                 : mock.execute_result;
    }
    ptec_tensor *out = argv[argc - 1]->u.tensor;
    memcpy(out->data, argv[0]->u.tensor->data, out->nbytes);
    return PTEC_OK;
}

static void mock_destroy(ptec_delegate_ctx *ctx)
{
    mock_state *s = (mock_state *)(void *)ctx->persistent.base;
    ++mock.destroys;
    s->initialised = 0;
}

const ptec_backend ptec_test_mock_ethos_u = {"EthosUBackend", mock_prepare, mock_init, mock_execute,
                                            mock_destroy};

static void set_inputs(ptec_method *m, float x)
{
    for (size_t i = 0; i < ptec_method_input_count(m); ++i) {
        TS(ptec_method_set_input(m, i, PTEC_DTYPE_FLOAT, NULL, 0, &x, sizeof x), PTEC_OK);
    }
}

static int load(const ptec_program *p, ptec_method *m, uint8_t *buf, size_t cap)
{
    ptec_requirements req;
    ptec_status st = ptec_method_requirements(m, p, NULL, &req);
    if (st != PTEC_OK) {
        return st;
    }
    if (req.total_bytes > cap) {
        return PTEC_MEMORY_ALLOCATION_FAILED;
    }
    return ptec_method_load_single(m, p, NULL, buf, req.total_bytes);
}

/* The sample end to end: blob, specs, arguments, outputs, failures. */
static void check_sample(const ptec_program *p)
{
    uint8_t *buf = test_alloc(1 << 16);
    ptec_method m;
    TS(load(p, &m, buf, 1 << 16), PTEC_OK);
    T(mock.inits == 1 && mock.blob_size == 1312 && mock.saw_target_spec);
    set_inputs(&m, 0.5f);
    TS(ptec_method_execute(&m), PTEC_OK);
    /* This plan puts the first quantized value where input 0 was: a second
     * execute on the same inputs would read overwritten bytes, so the
     * runtime asks for them again instead of computing garbage. */
    TS(ptec_method_execute(&m), PTEC_INVALID_STATE);
    T(strstr(ptec_method_error(&m), "set it before every execute") != NULL);
    set_inputs(&m, 0.5f);
    TS(ptec_method_execute(&m), PTEC_OK);
    T(mock.executes == 2 && mock.persistent_kept);
    T(mock.argc == 3 && mock.args_int8); /* two int8 inputs, then the int8 output */
    const ptec_tensor *out;
    TS(ptec_method_output(&m, 0, &out), PTEC_OK);
    /* The mock passes input 0 through: 0.5 quantizes (scale 1/255, zero point
     * -128; float32 1/scale * 0.5 = 127.49999, rounded to 127) to -1, which the
     * output's parameters (scale 2/255, zero point -128) read back as 127 * 2/255. */
    T(out->dtype == PTEC_DTYPE_FLOAT && ((const float *)out->data)[0] == (float)(-1 + 128) * (float)0.00784313772);
    const char *name;
    size_t name_len;
    int delegate_instr = -1;
    for (size_t i = 0; i < ptec_method_instruction_count(&m); ++i) {
        ptec_method_instruction_name(&m, i, &name, &name_len);
        if (name_len == 13 && memcmp(name, "EthosUBackend", 13) == 0) {
            delegate_instr = (int)i;
        }
    }
    T(delegate_instr >= 0);

    mock.execute_result = PTEC_DELEGATE_INVALID_HANDLE;
    set_inputs(&m, 0.5f);
    TS(ptec_method_execute(&m), PTEC_DELEGATE_INVALID_HANDLE);
    T(strstr(ptec_method_error(&m), "(EthosUBackend): failed while executing") != NULL);
    /* A backend that says why: its words, with the instruction and delegate. */
    mock.fail_message = "NPU timed out";
    set_inputs(&m, 0.5f);
    TS(ptec_method_execute(&m), PTEC_DELEGATE_INVALID_HANDLE);
    char want[80];
    snprintf(want, sizeof want, "instruction %d (EthosUBackend): delegate 0: NPU timed out", delegate_instr);
    T(strstr(ptec_method_error(&m), want) != NULL);
    mock.execute_result = PTEC_OK;
    mock.fail_message = NULL;
    ptec_method_unload(&m);
    T(mock.destroys == 1);

    mock.init_result = PTEC_DELEGATE_INVALID_COMPATIBILITY;
    TS(load(p, &m, buf, 1 << 16), PTEC_DELEGATE_INVALID_COMPATIBILITY);
    T(strstr(ptec_method_error(&m), "backend EthosUBackend refused delegate 0") != NULL);
    T(mock.destroys == 1); /* nothing else was started */
    mock.init_result = PTEC_OK;

    mock.prepare_result = PTEC_DELEGATE_INVALID_COMPATIBILITY;
    mock.fail_message = "wants an ethos-u65";
    ptec_requirements req;
    TS(ptec_method_requirements(&m, p, NULL, &req), PTEC_DELEGATE_INVALID_COMPATIBILITY);
    T(strstr(ptec_method_error(&m), "backend EthosUBackend delegate 0: wants an ethos-u65") != NULL);
    mock.prepare_result = PTEC_OK;
    mock.fail_message = NULL;
    free(buf);
}

/* A load with one region a byte short fails before any init, naming it. */
static void check_short(const ptec_program *p, const ptec_memory *mem, const char *region)
{
    ptec_method m;
    int inits = mock.inits;
    TS(ptec_method_load(&m, p, NULL, mem), PTEC_MEMORY_ALLOCATION_FAILED);
    T(strstr(ptec_method_error(&m), region) != NULL && strstr(ptec_method_error(&m), "short by 1") != NULL);
    T(mock.inits == inits);
}

/* Reads the writer's planned sizes (the .sizes sidecar). */
static size_t read_sizes(const char *path, size_t *sizes)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    while (n < PTEC_MAX_PLANNED_BUFFERS && fscanf(f, "%zu", &sizes[n]) == 1) {
        ++n;
    }
    fclose(f);
    return n;
}

static void check_contract(const ptec_program *p, const char *sizes_path)
{
    size_t file_sizes[PTEC_MAX_PLANNED_BUFFERS];
    size_t file_count = read_sizes(sizes_path, file_sizes);
    ptec_method m;
    ptec_requirements base, req;

    memset(&mock.needs, 0, sizeof mock.needs);
    TS(ptec_method_requirements(&m, p, NULL, &base), PTEC_OK);
    T(base.fast_scratch_bytes == 0);
    /* Chosen above whatever the kernels need, and not multiples of 16. */
    mock.needs.persistent_bytes = 100;
    mock.needs.scratch_bytes = base.scratch_bytes + 333;
    mock.needs.fast_scratch_bytes = 77;
    int prepares = mock.prepares;
    TS(ptec_method_requirements(&m, p, NULL, &req), PTEC_OK);
    T(mock.prepares == prepares + 1);
    /* In prepare the backend already knows the planned sizes, not the places. */
    T(mock.prepare_planned_count == file_count && file_count == 2);
    for (size_t i = 0; i < file_count; ++i) {
        T(mock.prepare_planned[i].size == file_sizes[i] && mock.prepare_planned[i].base == NULL);
    }
    /* The delegate's persistent bytes join the metadata (16-byte aligned),
     * its scratch and fast scratch set those regions. */
    T(req.metadata_bytes - base.metadata_bytes >= 100 - MOCK_STATE_BYTES &&
      req.metadata_bytes - base.metadata_bytes < 100 - MOCK_STATE_BYTES + 16);
    T(req.scratch_bytes == base.scratch_bytes + 333);
    T(req.fast_scratch_bytes == 77);
    T(req.planned_count == file_count);
    for (size_t i = 0; i < file_count; ++i) {
        T(req.planned_bytes[i] == file_sizes[i]);
    }

    ptec_memory mem;
    test_regions_alloc(&mem, &req);
    prepares = mock.prepares;
    TS(ptec_method_load(&m, p, NULL, &mem), PTEC_OK);
    T(mock.prepares == prepares + 1); /* the load reused the measurement: one walk, not two */
    T(mock.persistent.size == 100 && mock.persistent_zeroed);
    T(mock.persistent.base >= (uint8_t *)mem.metadata &&
      mock.persistent.base + 100 <= (uint8_t *)mem.metadata + req.metadata_bytes &&
      (uintptr_t)mock.persistent.base % 16 == 0);
    T(mock.scratch.base == mem.scratch && mock.scratch.size == base.scratch_bytes + 333);
    T(mock.fast_scratch.base == mem.fast_scratch && mock.fast_scratch.size == 77);
    T(mock.planned_count == file_count);
    for (size_t i = 0; i < file_count; ++i) {
        T(mock.planned[i].base == mem.planned[i] && mock.planned[i].size == file_sizes[i]);
    }
    set_inputs(&m, 0.25f);
    TS(ptec_method_execute(&m), PTEC_OK);
    T(mock.persistent_kept);
    ptec_method_unload(&m);

    /* A method never measured measures for itself. */
    ptec_method fresh;
    memset(&fresh, 0x5A, sizeof fresh);
    prepares = mock.prepares;
    TS(ptec_method_load(&fresh, p, NULL, &mem), PTEC_OK);
    T(mock.prepares == prepares + 2);
    ptec_method_unload(&fresh);

    ptec_memory short_mem;
    const char *region;
    for (size_t k = 0; (region = test_regions_short(&mem, k, &short_mem)) != NULL; ++k) {
        check_short(p, &short_mem, region);
    }
    T(mem.fast_scratch_size > 0); /* so the loop above also shortened fast scratch */
    test_regions_free(&mem);

    uint8_t *single = test_exact_alloc(req.total_bytes);
    TS(ptec_method_load_single(&m, p, NULL, single, req.total_bytes), PTEC_OK);
    T((uint8_t *)mock.fast_scratch.base >= single && mock.fast_scratch.base + 77 <= single + req.total_bytes);
    T((uint8_t *)mock.scratch.base >= single && mock.scratch.base + mock.scratch.size <= single + req.total_bytes);
    set_inputs(&m, 0.25f);
    TS(ptec_method_execute(&m), PTEC_OK);
    ptec_method_unload(&m);
    int inits = mock.inits;
    TS(ptec_method_load_single(&m, p, NULL, single, req.total_bytes - 1), PTEC_MEMORY_ALLOCATION_FAILED);
    T(strstr(ptec_method_error(&m), "single buffer") != NULL && mock.inits == inits);

    /* A prepare that asks for more at load than it was measured with is
     * refused cleanly, never handed memory it was not given. */
    mock.grow_at_load = 1;
    mock.prepares = 0;
    TS(ptec_method_requirements(&m, p, NULL, &req), PTEC_OK);
    TS(ptec_method_load_single(&m, p, NULL, single, req.total_bytes), PTEC_INTERNAL);
    T(strstr(ptec_method_error(&m), "more scratch at load") != NULL && mock.inits == inits);
    mock.grow_at_load = 0;
    free(single);
    memset(&mock.needs, 0, sizeof mock.needs);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_mock_backend ethos_two_buffers.pte ethos_two_buffers.sizes\n");
        return 2;
    }
    size_t size;
    uint8_t *bytes = test_read_file(PTEC_SHARED_DIR "/models/upstream/ethos_u_minimal_example.pte", &size);
    ptec_program p;
    /* This test's registry holds only the stand-in (referencing it here is
     * also what links the mock table ahead of the normal one). */
    T(ptec_backend_count() == 1 && ptec_backend_find("EthosUBackend", 13) == &ptec_test_mock_ethos_u);
    TS(ptec_program_init(&p, bytes, size), PTEC_OK);
    check_sample(&p);
    free(bytes);

    bytes = test_read_file(argv[1], &size);
    TS(ptec_program_init(&p, bytes, size), PTEC_OK);
    check_contract(&p, argv[2]);
    free(bytes);
    return test_summary("mock backend", checks);
}
