/* Every public call of ptec.h with NULL and out-of-range arguments, in every
 * state a caller can reach: structures never initialised, after a failed
 * init, after a failed load, loaded before execute, after execute, after
 * unload. Each must return its documented status, never crash (the
 * host-asan preset turns any stray access into a failure).
 *
 *   test_api_misuse DIR   (DIR from make_hostile_programs.py: valid.pte is
 *                          z = x + c, float32 [4]; loop_budget.pte loops) */
#include <stdint.h>

#include "ptec/kernel.h"
#include "ptec/ptec.h"
#include "../c/test_util.h"

static int checks;
#define EXPECT(expr, want) \
    do {                   \
        ++checks;          \
        CHECK_STATUS(expr, want); \
    } while (0)
#define EXPECT_TRUE(cond) \
    do {                  \
        ++checks;         \
        CHECK(cond);      \
    } while (0)

static const float ones[4] = {1, 1, 1, 1};
static const int32_t shape[1] = {4};
/* What the calls below write through their output pointers. */
static ptec_tensor_info info;
static const ptec_tensor *t;
static const char *name;
static size_t len;
static uint64_t ticks[4];
static float out[4];

/* Every method call on a method that is not loaded (never loaded, failed to
 * load, unloaded) or NULL. */
static void method_calls_refused(ptec_method *m)
{
    EXPECT_TRUE(ptec_method_input_count(m) == 0 && ptec_method_output_count(m) == 0);
    EXPECT_TRUE(ptec_method_instruction_count(m) == 0 && ptec_method_pass_cost(m) == 0);
    EXPECT(ptec_method_input_info(m, 0, &info), PTEC_INVALID_STATE);
    EXPECT(ptec_method_output_info(m, 0, &info), PTEC_INVALID_STATE);
    EXPECT(ptec_method_input_info(m, 0, NULL), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_input(m, 0, PTEC_DTYPE_FLOAT, shape, 1, ones, sizeof ones), PTEC_INVALID_STATE);
    EXPECT(ptec_method_bind_input(m, 0, PTEC_DTYPE_FLOAT, shape, 1, (void *)ones, sizeof ones), PTEC_INVALID_STATE);
    EXPECT(ptec_method_bind_output(m, 0, out, sizeof out), PTEC_INVALID_STATE);
    EXPECT(ptec_method_set_profile(m, ticks, 4), PTEC_INVALID_STATE);
    EXPECT(ptec_method_instruction_name(m, 0, &name, &len), PTEC_INVALID_STATE);
    EXPECT(ptec_method_set_budget(m, 1000), PTEC_INVALID_STATE);
    EXPECT(ptec_method_execute(m), PTEC_INVALID_STATE);
    EXPECT(ptec_method_output(m, 0, &t), PTEC_INVALID_STATE);
    EXPECT(ptec_method_output(m, 0, NULL), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_reset_state(m), PTEC_INVALID_STATE);
    ptec_method_unload(m);
    ptec_method_unload(m);
}

/* Loading calls that must fail before touching `m`'s memory. */
static void load_calls_refused(ptec_method *m, ptec_program *p, ptec_status want)
{
    ptec_requirements req;
    uint8_t *buffer = test_alloc(4096);
    ptec_memory mem = {.metadata = buffer, .metadata_size = 4096};
    EXPECT(ptec_method_requirements(m, p, NULL, &req), want);
    EXPECT(ptec_method_load(m, p, NULL, &mem), want);
    EXPECT(ptec_method_load_single(m, p, NULL, buffer, 4096), want);
    method_calls_refused(m);
    free(buffer);
}

static void program_calls(ptec_program *p, size_t methods)
{
    const char *id;
    size_t id_len;
    ptec_delegate_blob blob;
    ptec_requirements req;
    EXPECT_TRUE(ptec_program_method_count(p) == methods);
    EXPECT(ptec_program_method_name(p, 0, NULL, &len), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_program_method_name(p, 0, &name, NULL), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_program_method_name(p, 99, &name, &len), methods ? PTEC_NOT_FOUND : PTEC_INVALID_STATE);
    EXPECT(ptec_program_delegate(p, NULL, 0, NULL, &id_len, &blob), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_program_delegate(p, NULL, 0, &id, &id_len, NULL), PTEC_INVALID_ARGUMENT);
    ptec_method q;
    memset(&q, 0, sizeof q);
    EXPECT(ptec_method_requirements(&q, p, NULL, NULL), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_requirements(NULL, p, NULL, &req), PTEC_INVALID_ARGUMENT);
    EXPECT_TRUE(ptec_program_error(p) != NULL);
    if (!methods) {
        EXPECT(ptec_program_delegate(p, NULL, 0, &id, &id_len, &blob), PTEC_INVALID_STATE);
        EXPECT(ptec_method_requirements(&q, p, NULL, &req), PTEC_INVALID_STATE);
    } else {
        EXPECT(ptec_program_delegate(p, NULL, 0, &id, &id_len, &blob), PTEC_NOT_FOUND);
        EXPECT(ptec_program_delegate(p, "no_such_method", 0, &id, &id_len, &blob), PTEC_NOT_FOUND);
        EXPECT(ptec_method_requirements(&q, p, "no_such_method", &req), PTEC_NOT_FOUND);
        EXPECT_TRUE(strstr(ptec_method_error(&q), "no_such_method") != NULL);
    }
}

/* Calls on the loaded add method, before any execute. */
static void loaded_calls(ptec_method *m, ptec_program *p)
{
    (void)p; /* every detail below is the method's */
    EXPECT_TRUE(ptec_method_input_count(m) == 1 && ptec_method_output_count(m) == 1);
    EXPECT(ptec_method_input_info(m, 1, &info), PTEC_NOT_FOUND);
    EXPECT(ptec_method_output_info(m, SIZE_MAX, &info), PTEC_NOT_FOUND);
    EXPECT(ptec_method_output_info(m, 0, NULL), PTEC_INVALID_ARGUMENT);
    /* No output exists before the first execute. */
    EXPECT(ptec_method_output(m, 0, &t), PTEC_INVALID_STATE);
    EXPECT_TRUE(strstr(ptec_method_error(m), "no output yet") != NULL);
    EXPECT(ptec_method_output(m, 1, &t), PTEC_NOT_FOUND);
    EXPECT(ptec_method_execute(m), PTEC_INVALID_STATE); /* input not set */
    EXPECT_TRUE(strstr(ptec_method_error(m), "input 0 was not set: give it with ptec_method_set_input") != NULL);
    EXPECT(ptec_method_set_input(m, 1, PTEC_DTYPE_FLOAT, shape, 1, ones, sizeof ones), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_input(m, SIZE_MAX, PTEC_DTYPE_FLOAT, shape, 1, ones, sizeof ones), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_input(m, 0, PTEC_DTYPE_CHAR, shape, 1, ones, sizeof ones), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_input(m, 0, (ptec_dtype)200, shape, 1, ones, sizeof ones), PTEC_INVALID_ARGUMENT);
    /* A huge rank with a one-entry sizes array: only the ranks may be read. */
    EXPECT(ptec_method_set_input(m, 0, PTEC_DTYPE_FLOAT, shape, SIZE_MAX, ones, sizeof ones), PTEC_INVALID_ARGUMENT);
    EXPECT_TRUE(strstr(ptec_method_error(m), "program expects rank 1") != NULL);
    const int32_t wrong[1] = {5};
    EXPECT(ptec_method_set_input(m, 0, PTEC_DTYPE_FLOAT, wrong, 1, ones, sizeof ones), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_input(m, 0, PTEC_DTYPE_FLOAT, NULL, 0, ones, SIZE_MAX), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_input(m, 0, PTEC_DTYPE_FLOAT, NULL, 0, NULL, sizeof ones), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_bind_input(m, 0, PTEC_DTYPE_FLOAT, shape, 1, (void *)ones, sizeof ones), PTEC_INVALID_STATE);
    EXPECT(ptec_method_bind_output(m, 0, out, sizeof out), PTEC_INVALID_STATE); /* planned */
    EXPECT(ptec_method_bind_output(m, 7, out, sizeof out), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_profile(m, ticks, 0), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_profile(m, NULL, 0), PTEC_OK);
    EXPECT(ptec_method_instruction_name(m, 1, &name, &len), PTEC_NOT_FOUND);
    EXPECT(ptec_method_instruction_name(m, 0, NULL, &len), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_instruction_name(m, 0, &name, NULL), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_instruction_name(m, 0, &name, &len), PTEC_OK);
    EXPECT_TRUE(len == strlen("aten::add.out") && memcmp(name, "aten::add.out", len) == 0);
    /* One add of four 16-byte tensor arguments (x, c, out, return slot). */
    EXPECT_TRUE(ptec_method_pass_cost(m) == 1 + 4 * 16);
    EXPECT(ptec_method_set_budget(m, ptec_method_pass_cost(m) - 1), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_set_budget(m, ptec_method_pass_cost(m)), PTEC_OK);
    EXPECT(ptec_method_set_budget(m, 0), PTEC_OK);
    EXPECT(ptec_method_reset_state(m), PTEC_OK); /* no state: nothing to do */
}

static void executed_calls(ptec_method *m)
{
    EXPECT(ptec_method_set_input(m, 0, PTEC_DTYPE_FLOAT, shape, 1, ones, sizeof ones), PTEC_OK);
    EXPECT(ptec_method_execute(m), PTEC_OK);
    EXPECT(ptec_method_output(m, 0, &t), PTEC_OK);
    /* z = x + [0, 1, 2, 3] */
    const float want[4] = {1, 2, 3, 4};
    EXPECT_TRUE(t != NULL && t->nbytes == sizeof want && memcmp(t->data, want, sizeof want) == 0);
    EXPECT(ptec_method_output(m, 1, &t), PTEC_NOT_FOUND);
    EXPECT(ptec_method_output(m, 0, NULL), PTEC_INVALID_ARGUMENT);
}

/* The program grows its planned buffer between the (cached) requirements and
 * the load, against the contract: the load must refuse rather than place
 * tensors past the region it was given. The test finds the size field by
 * patching each 8-byte candidate and asking a fresh program. */
static void program_changed_before_load(uint8_t *bytes, size_t size)
{
    ptec_program p, probe;
    ptec_method probe_m;
    ptec_requirements req, seen;
    ptec_method m;
    EXPECT(ptec_program_init(&p, bytes, size), PTEC_OK);
    memset(&m, 0, sizeof m);
    EXPECT(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OK);
    uint64_t want = req.planned_bytes[0], grown = want + 4096;
    size_t found = 0;
    for (size_t at = 0; at + 8 <= size && found == 0; at += 8) {
        uint64_t v;
        memcpy(&v, bytes + at, 8);
        if (v != want) {
            continue;
        }
        memcpy(bytes + at, &grown, 8);
        if (ptec_program_init(&probe, bytes, size) == PTEC_OK && ptec_method_requirements(&probe_m, &probe, NULL, &seen) == PTEC_OK &&
            seen.planned_bytes[0] == grown) {
            found = at;
        } else {
            memcpy(bytes + at, &want, 8);
        }
    }
    EXPECT_TRUE(found != 0);
    uint8_t *arena = test_alloc(req.total_bytes);
    EXPECT(ptec_method_load_single(&m, &p, NULL, arena, req.total_bytes), PTEC_INVALID_STATE);
    EXPECT_TRUE(strstr(ptec_method_error(&m), "planned buffers differ from the requirements") != NULL);
    method_calls_refused(&m);
    memcpy(bytes + found, &want, 8);
    free(arena);
}

/* An Int value becomes a Bool between the (cached) requirements and the
 * load, against the contract: the load keeps Bools, not Ints, so it finds
 * one kept value more than it counted, and must refuse rather than place it
 * past the array it sized. The test finds the kind byte by patching each
 * candidate and asking a fresh program for one header more. */
static void kept_value_count_changed_before_load(uint8_t *bytes, size_t size)
{
    ptec_program p, probe;
    ptec_method probe_m;
    ptec_requirements req, seen;
    ptec_method m;
    EXPECT(ptec_program_init(&p, bytes, size), PTEC_OK);
    memset(&m, 0, sizeof m);
    EXPECT(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OK);
    size_t found = 0;
    for (size_t at = 1; at < size && found == 0; ++at) {
        if (bytes[at] != PTEC_VALUE_INT) {
            continue;
        }
        bytes[at] = PTEC_VALUE_BOOL;
        if (ptec_program_init(&probe, bytes, size) == PTEC_OK &&
            ptec_method_requirements(&probe_m, &probe, NULL, &seen) == PTEC_OK &&
            seen.metadata_bytes == req.metadata_bytes + sizeof(ptec_value)) {
            found = at;
        } else {
            bytes[at] = PTEC_VALUE_INT;
        }
    }
    EXPECT_TRUE(found != 0);
    uint8_t *arena = test_alloc(req.total_bytes);
    EXPECT(ptec_method_load_single(&m, &p, NULL, arena, req.total_bytes), PTEC_INVALID_STATE);
    EXPECT_TRUE(strstr(ptec_method_error(&m), "differs from the one its requirements were computed for") != NULL);
    method_calls_refused(&m);
    bytes[found] = PTEC_VALUE_INT;
    free(arena);
}

/* The execution budget on a program that loops for ever: exhausted at the
 * default, and at any larger budget the caller sets. */
static void budget_calls(const char *dir)
{
    char path[4096];
    size_t size;
    snprintf(path, sizeof path, "%s/loop_budget.pte", dir);
    uint8_t *bytes = test_read_file(path, &size);
    ptec_program p;
    ptec_requirements req;
    ptec_method m;
    EXPECT(ptec_program_init(&p, bytes, size), PTEC_OK);
    memset(&m, 0, sizeof m);
    EXPECT(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OK);
    uint8_t *arena = test_alloc(req.total_bytes);
    EXPECT(ptec_method_load_single(&m, &p, NULL, arena, req.total_bytes), PTEC_OK);
    uint64_t pass = ptec_method_pass_cost(&m);
    EXPECT_TRUE(pass > 0);
    for (uint64_t passes = 1; passes <= 1000; passes *= 10) {
        EXPECT(ptec_method_set_budget(&m, passes * pass), PTEC_OK);
        EXPECT(ptec_method_set_input(&m, 0, PTEC_DTYPE_FLOAT, shape, 1, ones, sizeof ones), PTEC_OK);
        EXPECT(ptec_method_execute(&m), PTEC_OUT_OF_RESOURCES);
        EXPECT_TRUE(strstr(ptec_method_error(&m), "last jumped back at instruction 2") != NULL);
        EXPECT(ptec_method_output(&m, 0, &t), PTEC_INVALID_STATE);
    }
    ptec_method_unload(&m);
    free(arena);
    free(bytes);
}

/* The state program (make_hostile_programs.py base_state): z = x + s, then
 * s = z, with s's initial value [0, 1, 2, 3] in the mutable segment. The
 * state persists across executes; reset copies the initial value back,
 * every time; a second load of the same memory starts from it too. */
static void expect_z(ptec_method *m, float first)
{
    EXPECT(ptec_method_set_input(m, 0, PTEC_DTYPE_FLOAT, shape, 1, ones, sizeof ones), PTEC_OK);
    EXPECT(ptec_method_execute(m), PTEC_OK);
    EXPECT(ptec_method_output(m, 0, &t), PTEC_OK);
    const float want[4] = {first, first + 1, first + 2, first + 3};
    EXPECT_TRUE(t != NULL && t->nbytes == sizeof want && memcmp(t->data, want, sizeof want) == 0);
}

static void state_calls(const char *dir)
{
    char path[4096];
    size_t size;
    snprintf(path, sizeof path, "%s/valid_state.pte", dir);
    uint8_t *bytes = test_read_file(path, &size);
    ptec_program p;
    ptec_requirements req;
    ptec_method m;
    EXPECT(ptec_program_init(&p, bytes, size), PTEC_OK);
    memset(&m, 0, sizeof m);
    EXPECT(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OK);
    EXPECT(ptec_method_reset_state(&m), PTEC_INVALID_STATE); /* measured, not loaded */
    uint8_t *arena = test_alloc(req.total_bytes);
    for (int round = 0; round < 2; ++round) {
        memset(arena, 0x5a, req.total_bytes); /* the load, not the memory, gives the initial value */
        EXPECT(ptec_method_load_single(&m, &p, NULL, arena, req.total_bytes), PTEC_OK);
        expect_z(&m, 1);
        expect_z(&m, 2);
        expect_z(&m, 3);
        EXPECT(ptec_method_reset_state(&m), PTEC_OK);
        EXPECT_TRUE(ptec_method_error(&m)[0] == '\0');
        expect_z(&m, 1);
        expect_z(&m, 2);
        EXPECT(ptec_method_reset_state(&m), PTEC_OK);
        EXPECT(ptec_method_reset_state(&m), PTEC_OK);
        expect_z(&m, 1);
        ptec_method_unload(&m);
        EXPECT(ptec_method_reset_state(&m), PTEC_INVALID_STATE);
    }
    free(arena);
    free(bytes);
}

/* dynamic_bound_loads.pte (make_hostile_programs.py): z = x + c with z
 * bound-dynamic at [4]. A kernel may shrink its current sizes, never past
 * the bound, and never those of a static tensor; the output reports the
 * current sizes. */
static void dynamic_calls(const char *dir, ptec_method *static_method)
{
    char path[4096];
    size_t size;
    snprintf(path, sizeof path, "%s/dynamic_bound_loads.pte", dir);
    uint8_t *bytes = test_read_file(path, &size);
    ptec_program p;
    ptec_requirements req;
    ptec_method m;
    EXPECT(ptec_program_init(&p, bytes, size), PTEC_OK);
    memset(&m, 0, sizeof m);
    EXPECT(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OK);
    uint8_t *arena = test_alloc(req.total_bytes);
    EXPECT(ptec_method_load_single(&m, &p, NULL, arena, req.total_bytes), PTEC_OK);
    EXPECT(ptec_method_set_input(&m, 0, PTEC_DTYPE_FLOAT, shape, 1, ones, sizeof ones), PTEC_OK);
    EXPECT(ptec_method_execute(&m), PTEC_OK);
    EXPECT(ptec_method_output(&m, 0, &t), PTEC_OK);
    ptec_tensor *z = (ptec_tensor *)(uintptr_t)t; /* as a kernel holds its out */
    EXPECT_TRUE((z->flags & PTEC_TENSOR_RESIZABLE) && z->sizes[0] == 4 && z->nbytes == 16);
    const int32_t five[1] = {5}, minus[1] = {-1}, two[2] = {2, 1}, four[1] = {4};
    EXPECT(ptec_tensor_resize(z, five, 1), PTEC_INVALID_ARGUMENT);      /* past the bound */
    EXPECT(ptec_tensor_resize(z, minus, 1), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_tensor_resize(z, two, 2), PTEC_INVALID_ARGUMENT);       /* another rank */
    EXPECT(ptec_tensor_resize(z, NULL, 1), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_tensor_resize(NULL, four, 1), PTEC_INVALID_ARGUMENT);
    EXPECT_TRUE(z->sizes[0] == 4 && z->numel == 4 && z->nbytes == 16); /* unchanged by the refusals */
    EXPECT(ptec_tensor_resize(z, two, 1), PTEC_OK);
    EXPECT(ptec_method_output_info(&m, 0, &info), PTEC_OK);
    EXPECT_TRUE(info.rank == 1 && info.sizes[0] == 2 && info.nbytes == 8 && z->numel == 2);
    EXPECT_TRUE(ptec_tensor_capacity(z) == 16);                         /* the bound stays */
    EXPECT(ptec_tensor_resize(z, five, 1), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_tensor_resize(z, four, 1), PTEC_OK);
    EXPECT_TRUE(z->sizes[0] == 4 && z->nbytes == 16);
    EXPECT(ptec_method_output(static_method, 0, &t), PTEC_OK);          /* a static out: never resized */
    EXPECT(ptec_tensor_resize((ptec_tensor *)(uintptr_t)t, two, 1), PTEC_INVALID_ARGUMENT);
    EXPECT_TRUE(t->sizes[0] == 4 && t->nbytes == 16 && ptec_tensor_capacity(t) == 16);
    ptec_method_unload(&m);
    free(arena);
    free(bytes);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char path[4096];
    size_t size;
    snprintf(path, sizeof path, "%s/valid.pte", argv[1]);
    uint8_t *bytes = test_read_file(path, &size);
    ptec_program p;
    ptec_method m;
    ptec_requirements req;

    /* NULL structures, and structures never initialised. */
    memset(&p, 0, sizeof p);
    memset(&m, 0, sizeof m);
    method_calls_refused(NULL);
    method_calls_refused(&m);
    EXPECT(ptec_program_init(NULL, bytes, size), PTEC_INVALID_ARGUMENT);
    EXPECT_TRUE(ptec_program_method_count(NULL) == 0);
    EXPECT(ptec_program_method_name(NULL, 0, &(const char *){0}, &(size_t){0}), PTEC_INVALID_ARGUMENT);
    EXPECT_TRUE(ptec_program_error(NULL) != NULL);
    EXPECT(ptec_program_delegate(NULL, NULL, 0, &(const char *){0}, &(size_t){0}, &(ptec_delegate_blob){0}),
           PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_load(NULL, &p, NULL, &(ptec_memory){0}), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_load(&m, &p, NULL, NULL), PTEC_INVALID_STATE); /* no program yet */
    EXPECT(ptec_method_load_single(NULL, &p, NULL, bytes, size), PTEC_INVALID_ARGUMENT);
    load_calls_refused(&m, NULL, PTEC_INVALID_STATE);
    load_calls_refused(&m, &p, PTEC_INVALID_STATE);
    program_calls(&p, 0);

    /* After failed inits: NULL data, misaligned data, too short, not a .pte. */
    EXPECT(ptec_program_init(&p, NULL, size), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_program_init(&p, bytes + 1, size - 1), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_program_init(&p, bytes, 0), PTEC_INVALID_PROGRAM);
    EXPECT(ptec_program_init(&p, bytes, size / 2), PTEC_INVALID_PROGRAM);
    EXPECT_TRUE(strstr(ptec_program_error(&p), "truncated") != NULL);
    program_calls(&p, 0);
    load_calls_refused(&m, &p, PTEC_INVALID_STATE);
    EXPECT_TRUE(strstr(ptec_program_error(&p), "truncated") != NULL); /* the init's detail stays */

    /* A good program, then failed loads: too little memory of each kind. */
    EXPECT(ptec_program_init(&p, bytes, size), PTEC_OK);
    program_calls(&p, 1);
    memset(&m, 0, sizeof m);
    EXPECT(ptec_method_requirements(&m, &p, NULL, &req), PTEC_OK);
    uint8_t *arena = test_alloc(req.total_bytes + 16);
    EXPECT(ptec_method_load(&m, &p, NULL, NULL), PTEC_INVALID_ARGUMENT);
    method_calls_refused(&m);
    EXPECT(ptec_method_load_single(&m, &p, NULL, arena, req.total_bytes - 1), PTEC_MEMORY_ALLOCATION_FAILED);
    method_calls_refused(&m);
    EXPECT(ptec_method_load_single(&m, &p, NULL, NULL, req.total_bytes), PTEC_INVALID_ARGUMENT);
    EXPECT(ptec_method_load_single(&m, &p, NULL, arena + 1, req.total_bytes), PTEC_INVALID_ARGUMENT);
    method_calls_refused(&m);
    ptec_memory mem = {.metadata = arena, .metadata_size = req.metadata_bytes - 1};
    EXPECT(ptec_method_load(&m, &p, NULL, &mem), PTEC_MEMORY_ALLOCATION_FAILED);
    mem.metadata_size = req.metadata_bytes;
    EXPECT(ptec_method_load(&m, &p, NULL, &mem), PTEC_MEMORY_ALLOCATION_FAILED); /* no planned buffer */
    mem.planned_count = 1;
    mem.planned_size[0] = req.planned_bytes[0];
    EXPECT(ptec_method_load(&m, &p, NULL, &mem), PTEC_INVALID_ARGUMENT); /* planned buffer NULL */
    method_calls_refused(&m);

    /* Loaded: before execute, after it, after unload, and loaded again. */
    for (int round = 0; round < 2; ++round) {
        EXPECT(ptec_method_load_single(&m, &p, NULL, arena, req.total_bytes), PTEC_OK);
        loaded_calls(&m, &p);
        executed_calls(&m);
        /* The file's input and output index vectors are read at load only:
         * a program byte changed behind the runtime's back there (against
         * the contract) is never used as an index. */
        uint8_t *input_index = bytes + m.inputs_vec;
        uint32_t saved;
        memcpy(&saved, input_index, sizeof saved);
        memset(input_index, 0x7f, sizeof saved);
        executed_calls(&m);
        memcpy(input_index, &saved, sizeof saved);
        if (round == 0) {
            dynamic_calls(argv[1], &m);
        }
        ptec_method_unload(&m);
        method_calls_refused(&m);
    }
    program_changed_before_load(bytes, size);
    kept_value_count_changed_before_load(bytes, size);
    budget_calls(argv[1]);
    state_calls(argv[1]);
    free(arena);
    free(bytes);
    return test_summary("api misuse", checks);
}
