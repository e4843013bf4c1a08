/* Mutation fuzzing of the runtime on the target itself: damaged copies of
 * the upstream samples go through init, requirements, load, input and
 * execute. Every call must return a status; a fault (unaligned wide load,
 * stray pointer) ends the run through the board's fault handler, which
 * prints the case below, and a hang ends it through run_qemu.sh's timeout.
 * The host fuzzing runs under ASan; this one runs on the real ISA, where
 * alignment rules and 32-bit size_t differ. Exits 0 when no case faulted. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_models.h"
#include "ptec/ptec.h"
#include "ptec_board.h"

#ifndef PTEC_FUZZ_CASES_PER_MODEL
#define PTEC_FUZZ_CASES_PER_MODEL 1000u
#endif

#define COPY_BYTES 2048u
#define POOL_BYTES (64u * 1024u)

static uint8_t copy[COPY_BYTES] __attribute__((aligned(16)));
static uint8_t pool[POOL_BYTES] __attribute__((section(".ptec_pool.fuzz"), aligned(16)));
static uint8_t io[4096] __attribute__((aligned(16)));
static ptec_program program;
static ptec_method method;

static uint32_t rng_state = 0x2545F491u;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* What the fault handler prints, so the case can be replayed. */
static volatile const char *current_model = "none";
static volatile uint32_t current_case;
static volatile uint32_t current_seed;

static void put_u32(uint32_t value)
{
    char text[11];
    int at = 10;
    text[at] = '\0';
    do {
        text[--at] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value != 0u);
    ptec_board_console_puts(text + at);
}

void ptec_board_on_fault(void)
{
    ptec_board_console_puts("  while fuzzing ");
    ptec_board_console_puts((const char *)current_model);
    ptec_board_console_puts(" case ");
    put_u32(current_case);
    ptec_board_console_puts(" seed ");
    put_u32(current_seed);
    ptec_board_console_puts("\n");
}

/* One random damage: a byte, a boundary word, a truncation, or a few bytes. */
static size_t mutate(uint8_t *data, size_t size)
{
    static const uint32_t words[] = {0u,          1u,     0x7FFFFFFFu, 0x80000000u,
                                     0xFFFFFFFFu, 0xFFFFu, 0x10000u,    0xFFFFFFF0u};
    const uint32_t kind = rng() % 4u;
    if (kind == 0u) {
        data[rng() % size] = (uint8_t)rng();
    } else if (kind == 1u) {
        const size_t at = (rng() % (size / 4u)) * 4u;
        const uint32_t w = words[rng() % (sizeof(words) / sizeof(words[0]))];
        memcpy(data + at, &w, sizeof(w));
    } else if (kind == 2u) {
        return 8u + rng() % (size - 8u);
    } else {
        for (int i = 0; i < 4; ++i) {
            data[rng() % size] ^= (uint8_t)(1u << (rng() % 8u));
        }
    }
    return size;
}

/* How far a damaged program got. */
enum {
    STAGE_INIT,
    STAGE_REQUIREMENTS,
    STAGE_POOL,
    STAGE_LOAD,
    STAGE_INPUTS,
    STAGE_EXECUTE,
    STAGE_OK,
    STAGES
};
static const char *const stage_names[STAGES] = {"init", "requirements", "too big for pool", "load",
                                                "inputs", "execute", "ran"};

static int run_case(const uint8_t *data, size_t size)
{
    if (ptec_program_init(&program, data, size) != PTEC_OK) {
        return STAGE_INIT;
    }
    ptec_requirements req;
    if (ptec_method_requirements(&method, &program, NULL, &req) != PTEC_OK) {
        return STAGE_REQUIREMENTS;
    }
    if (req.total_bytes > POOL_BYTES) {
        return STAGE_POOL;
    }
    if (ptec_method_load_single(&method, &program, NULL, pool, POOL_BYTES) != PTEC_OK) {
        return STAGE_LOAD;
    }
    for (size_t i = 0; i < ptec_method_input_count(&method); ++i) {
        ptec_tensor_info info;
        if (ptec_method_input_info(&method, i, &info) != PTEC_OK || info.nbytes > sizeof(io)) {
            ptec_method_unload(&method);
            return STAGE_INPUTS;
        }
        memset(io, 0x3F, info.nbytes);
        const ptec_status status = info.planned
            ? ptec_method_set_input(&method, i, (ptec_dtype)info.dtype, NULL, 0, io, info.nbytes)
            : ptec_method_bind_input(&method, i, (ptec_dtype)info.dtype, NULL, 0, io, info.nbytes);
        if (status != PTEC_OK) {
            ptec_method_unload(&method);
            return STAGE_INPUTS;
        }
    }
    const ptec_status status = ptec_method_execute(&method);
    ptec_method_unload(&method);
    return status == PTEC_OK ? STAGE_OK : STAGE_EXECUTE;
}

int main(void)
{
    static const struct {
        const char *name;
        const uint8_t *data;
        const size_t *size;
    } models[] = {
        {"add.pte", fuzz_add_data, &fuzz_add_size},
        {"add_arduino.pte", fuzz_add_arduino_data, &fuzz_add_arduino_size},
        {"ModuleLinear-no-constant-segment.pte", fuzz_linear_data, &fuzz_linear_size},
    };
    /* Thousands of expected load errors: the runtime's log would drown the
     * report. */
    ptec_board_set_log_threshold(PTEC_LOG_ERROR + 1);
    printf("mutation fuzz on %s: %u cases per program\n", ptec_board_name(),
           (unsigned)PTEC_FUZZ_CASES_PER_MODEL);
    int failures = 0;
    for (unsigned m = 0; m < sizeof(models) / sizeof(models[0]); ++m) {
        const size_t size = *models[m].size;
        unsigned counts[STAGES] = {0};
        current_model = models[m].name;
        /* The undamaged program must run. */
        memcpy(copy, models[m].data, size);
        if (size > COPY_BYTES || run_case(copy, size) != STAGE_OK) {
            printf("error: %s does not run undamaged\n", models[m].name);
            failures++;
            continue;
        }
        for (uint32_t c = 0; c < PTEC_FUZZ_CASES_PER_MODEL; ++c) {
            current_case = c;
            current_seed = rng_state;
            memcpy(copy, models[m].data, size);
            const size_t damaged = mutate(copy, size);
            counts[run_case(copy, damaged)]++;
        }
        printf("%s:", models[m].name);
        for (int s = 0; s < STAGES; ++s) {
            printf(" %s %u%s", stage_names[s], counts[s], s + 1 < STAGES ? "," : "\n");
        }
    }
    printf("fuzz %s\n", failures ? "FAILED" : "passed: no fault, no hang");
    return failures ? 1 : 0;
}
