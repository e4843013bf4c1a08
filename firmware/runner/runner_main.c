/* ptec firmware runner: loads one program with static pools, runs its
 * method once, then again after ptec_method_reset_state with
 * per-instruction profiling, and prints a report: where
 * the program lives, memory used against provided, instruction counts per
 * operator and in total, and the outputs (values and hex bytes).
 *
 * Batch mode: when the input slot holds k blocks of the method's input
 * bytes, it runs k inferences and prints one line per inference (index,
 * argmax of output 0, instructions) with the outputs' bytes as
 * "@b<k>.out<i>" hex lines, then the per-operator profile of the first
 * block and a summary. The method stays loaded from one block to the next,
 * so state tensors (--stateful) carry over: the batch is a stream. The
 * profiled run follows ptec_method_reset_state, and its outputs are printed
 * as "@reset.out<i>" (they equal block 0's).
 *
 * Everything goes through the board's host link (ptec_host_link.h): the
 * program and inputs come from it, the report goes to it, and the run ends
 * with its status: 0 ok, 2 no program / invalid program, 3 requirements or
 * load failed (including pools too small), 4 inputs, 5 execute, 6 outputs.
 * A fault ends with 100 + exception number (the arch's fault handler).
 * Counts are in the board's tick unit (instructions on the QEMU boards). */
#include <stdint.h>
#include <stdio.h>

#include "method_io.h"
#include "model_source.h"
#include "output_dump.h"
#include "pools.h"
#include "ptec/ptec.h"
#include "ptec_board.h"
#include "ptec_host_link.h"
#include "ptec_runner_lib.h"
#include "report.h"

#ifndef PTEC_RUNNER_MAX_INSTRUCTIONS
#define PTEC_RUNNER_MAX_INSTRUCTIONS 1024u
#endif

enum {
    EXIT_NO_PROGRAM = 2,
    EXIT_LOAD = 3,
    EXIT_INPUTS = 4,
    EXIT_EXECUTE = 5,
    EXIT_OUTPUTS = 6
};

static ptec_program program;
static ptec_method method;
static uint64_t profile[PTEC_RUNNER_MAX_INSTRUCTIONS];

/* What a tick is on this board, for the report's words. */
static const char *tick_unit(void)
{
    return ptec_runner_tick_unit_name(ptec_platform_tick_unit());
}

/* Whether a step failed, reporting it when it did. The detail comes
 * from the program only while it is not initialised; after that, from
 * the method. */
static bool failed(const char *what, ptec_status status)
{
    if (status == PTEC_OK) {
        return false;
    }
    report("error: %s failed: %s (0x%02x)\n  %s\n", what, ptec_status_str(status), (unsigned)status,
           ptec_program_error(&program)[0] != '\0' ? ptec_program_error(&program) : ptec_method_error(&method));
    return true;
}

static void print_region(const char *name, size_t required, size_t provided, size_t capacity)
{
    report("  %-12s required %8lu B  provided %8lu B  (pool %lu B)%s\n", name,
           (unsigned long)required, (unsigned long)provided, (unsigned long)capacity,
           provided < required ? "  TOO SMALL" : "");
}

static void print_memory(const ptec_requirements *req, const ptec_memory *mem)
{
    const pool_capacity capacity = pools_capacity();
    size_t planned_required = 0;
    size_t planned_provided = 0;
    report("memory (from ptec_method_requirements):\n");
    print_region("metadata", req->metadata_bytes, mem->metadata_size, capacity.metadata);
    for (size_t i = 0; i < req->planned_count && i < PTEC_MAX_PLANNED_BUFFERS; ++i) {
        char name[16];
        snprintf(name, sizeof(name), "planned[%lu]", (unsigned long)(i + 1u));
        print_region(name, req->planned_bytes[i], mem->planned_size[i], capacity.planned);
        planned_required += req->planned_bytes[i];
        planned_provided += mem->planned_size[i];
    }
    print_region("scratch", req->scratch_bytes, mem->scratch_size, capacity.scratch);
    report("  %-12s required %8lu B  provided %8lu B\n", "total",
           (unsigned long)(req->metadata_bytes + planned_required + req->scratch_bytes),
           (unsigned long)(mem->metadata_size + planned_provided + mem->scratch_size));
}

/* What an empty measured region costs: two back-to-back counter reads. */
static uint64_t measurement_overhead(void)
{
    const uint64_t start = ptec_platform_ticks();
    return ptec_platform_ticks() - start;
}

static void print_profile(uint64_t total)
{
    const char *unit = tick_unit();
    char text[21];
    char text2[21];
    const size_t count = ptec_method_instruction_count(&method);
    uint64_t in_instructions = 0;
    report("%s per operator:\n", unit);
    for (size_t i = 0; i < count && i < PTEC_RUNNER_MAX_INSTRUCTIONS; ++i) {
        const char *name = "?";
        size_t name_len = 1;
        (void)ptec_method_instruction_name(&method, i, &name, &name_len);
        in_instructions += profile[i];
        const unsigned permille = total ? (unsigned)(profile[i] * 1000u / total) : 0u;
        report("  [%3lu] %-44.*s %12s %4u.%u%%\n", (unsigned long)i, (int)name_len, name,
               ptec_runner_u64_text(profile[i], text), permille / 10u, permille % 10u);
    }
    const uint64_t overhead = measurement_overhead();
    report("  operators total %s; each figure includes ~%s %s of counter reads\n",
           ptec_runner_u64_text(in_instructions, text), ptec_runner_u64_text(overhead, text2), unit);
    const uint64_t in_ops_net = in_instructions - (overhead < in_instructions ? count * overhead : 0u);
    if (total >= in_ops_net) {
        report("  runtime dispatch (inference minus operators net of counter reads): %s\n",
               ptec_runner_u64_text(total - in_ops_net, text));
    }
}

/* A second run of input block `block`, from its inputs again (an output may
 * share planned memory with an input), with per-instruction profiling;
 * prints the per-operator table against `total`, the un-profiled figure.
 * Returns 0 or the exit status. */
static int run_profiled(size_t block, uint64_t total)
{
    const size_t instruction_count = ptec_method_instruction_count(&method);
    if (instruction_count > PTEC_RUNNER_MAX_INSTRUCTIONS) {
        report("warning: no per-operator profile: %lu instructions, the runner keeps %u\n",
               (unsigned long)instruction_count, (unsigned)PTEC_RUNNER_MAX_INSTRUCTIONS);
        return 0;
    }
    ptec_status status = ptec_method_set_profile(&method, profile, PTEC_RUNNER_MAX_INSTRUCTIONS);
    if (status != PTEC_OK) {
        report("warning: no per-operator profile: %s\n", ptec_status_str(status));
        return 0;
    }
    if (inputs_set(&method, block, 0) != 0) {
        return EXIT_INPUTS;
    }
    status = ptec_method_execute(&method);
    (void)ptec_method_set_profile(&method, NULL, 0);
    if (failed("ptec_method_execute (profiled)", status)) {
        return EXIT_EXECUTE;
    }
    print_profile(total);
    return 0;
}

static int run_batch(size_t count)
{
    char text[21];
    char text2[21];
    char text3[21];
    uint64_t sum = 0;
    uint64_t least = UINT64_MAX;
    uint64_t most = 0;
    uint64_t first = 0;
    report("batch: %lu inferences, one block of the input slot each\n", (unsigned long)count);
    for (size_t k = 0; k < count; ++k) {
        if (inputs_set(&method, k, k == 0u) != 0) {
            report("error: inference %lu\n", (unsigned long)k);
            return EXIT_INPUTS;
        }
        const uint64_t start = ptec_platform_ticks();
        const ptec_status status = ptec_method_execute(&method);
        const uint64_t instructions = ptec_platform_ticks() - start;
        if (status != PTEC_OK) {
            report("inference %lu:\n", (unsigned long)k);
        }
        if (failed("ptec_method_execute", status)) {
            return EXIT_EXECUTE;
        }
        long predicted = -1;
        for (size_t i = 0; i < ptec_method_output_count(&method); ++i) {
            const ptec_tensor *tensor;
            const ptec_status got = ptec_method_output(&method, i, &tensor);
            if (failed("ptec_method_output", got)) {
                return EXIT_OUTPUTS;
            }
            if (i == 0u) {
                predicted = ptec_runner_argmax(tensor);
                report("infer %4lu: class %2ld  %12s %s\n", (unsigned long)k, predicted,
                       ptec_runner_u64_text(instructions, text), tick_unit());
            }
            char label[32];
            snprintf(label, sizeof(label), "b%lu.out%lu", (unsigned long)k, (unsigned long)i);
            output_hex(label, tensor);
        }
        first = k == 0u ? instructions : first;
        sum += instructions;
        least = instructions < least ? instructions : least;
        most = instructions > most ? instructions : most;
    }
    /* State tensors (--stateful) carried over from each inference to the
     * next: the batch was a stream. Reset them, so that the profiled run of
     * block 0 starts where inference 0 did; its outputs ("@reset.out<i>")
     * must then be inference 0's. */
    if (failed("ptec_method_reset_state", ptec_method_reset_state(&method))) {
        return EXIT_EXECUTE;
    }
    const int profiled = run_profiled(0, first);
    if (profiled != 0) {
        return profiled;
    }
    for (size_t i = 0; i < ptec_method_output_count(&method); ++i) {
        const ptec_tensor *tensor;
        if (failed("ptec_method_output", ptec_method_output(&method, i, &tensor))) {
            return EXIT_OUTPUTS;
        }
        char label[32];
        snprintf(label, sizeof(label), "reset.out%lu", (unsigned long)i);
        output_hex(label, tensor);
    }
    report("batch: %lu inferences; %s per inference min %s, mean %s, max %s\n",
           (unsigned long)count, tick_unit(), ptec_runner_u64_text(least, text), ptec_runner_u64_text(sum / count, text2),
           ptec_runner_u64_text(most, text3));
    report("inference: %s %s (mean of %lu, %lu method instructions, without profiling)\n",
           ptec_runner_u64_text(sum / count, text), tick_unit(), (unsigned long)count,
           (unsigned long)ptec_method_instruction_count(&method));
    ptec_method_unload(&method);
    report("done\n");
    return 0;
}

static int run(void)
{
    char text[21];
    report("ptec runner on %s\n", ptec_board_name());

    model_source source;
    if (model_source_get(&source) != 0) {
        return EXIT_NO_PROGRAM;
    }
    report("program: %s%s%lu bytes at %p, %s\n", source.name ? source.name : "",
           source.name ? ", " : "", (unsigned long)source.size, (const void *)source.data,
           source.placement);

    uint64_t start = ptec_platform_ticks();
    ptec_status status = ptec_program_init(&program, source.data, source.size);
    const uint64_t init_instructions = ptec_platform_ticks() - start;
    if (failed("ptec_program_init", status)) {
        return EXIT_NO_PROGRAM;
    }
    for (size_t i = 0; i < ptec_program_method_count(&program); ++i) {
        const char *name;
        size_t len;
        if (ptec_program_method_name(&program, i, &name, &len) == PTEC_OK) {
            report("  method %lu: %.*s\n", (unsigned long)i, (int)len, name);
        }
    }

    ptec_requirements req;
    start = ptec_platform_ticks();
    status = ptec_method_requirements(&method, &program, NULL, &req);
    const uint64_t requirements_instructions = ptec_platform_ticks() - start;
    if (failed("ptec_method_requirements", status)) {
        return EXIT_LOAD;
    }
    ptec_memory mem;
    if (pools_carve(&req, &mem) != 0) {
        report("warning: the pools are smaller than the method needs; the load will fail\n");
    }
    print_memory(&req, &mem);

    start = ptec_platform_ticks();
    status = ptec_method_load(&method, &program, NULL, &mem);
    const uint64_t load_instructions = ptec_platform_ticks() - start;
    if (failed("ptec_method_load", status)) {
        return EXIT_LOAD;
    }
    report("program init: %s %s\n", ptec_runner_u64_text(init_instructions, text), tick_unit());
    report("method requirements: %s %s\n", ptec_runner_u64_text(requirements_instructions, text),
           tick_unit());
    report("method load: %s %s\n", ptec_runner_u64_text(load_instructions, text), tick_unit());

    if (outputs_bind(&method) != 0) {
        return EXIT_OUTPUTS;
    }
    size_t batch = 1;
    if (inputs_batch_count(&method, &batch) != 0) {
        return EXIT_INPUTS;
    }
    if (batch > 1u) {
        return run_batch(batch);
    }

    /* First run: no profiling, so the total is the inference alone. */
    if (inputs_set(&method, 0, 1) != 0) {
        return EXIT_INPUTS;
    }
    start = ptec_platform_ticks();
    status = ptec_method_execute(&method);
    const uint64_t execute_instructions = ptec_platform_ticks() - start;
    if (failed("ptec_method_execute", status)) {
        return EXIT_EXECUTE;
    }
    /* The profiled rerun starts from the state after load too (--stateful:
     * state tensors would otherwise carry the first run's state into it),
     * so the printed outputs are one inference's after load. */
    if (failed("ptec_method_reset_state", ptec_method_reset_state(&method))) {
        return EXIT_EXECUTE;
    }
    const int profiled = run_profiled(0, execute_instructions);
    if (profiled != 0) {
        return profiled;
    }
    report("inference: %s %s (%lu method instructions, without profiling)\n",
           ptec_runner_u64_text(execute_instructions, text), tick_unit(), (unsigned long)ptec_method_instruction_count(&method));

    for (size_t i = 0; i < ptec_method_output_count(&method); ++i) {
        const ptec_tensor *tensor;
        status = ptec_method_output(&method, i, &tensor);
        if (failed("ptec_method_output", status)) {
            return EXIT_OUTPUTS;
        }
        output_dump(i, tensor);
    }
    ptec_method_unload(&method);
    report("done\n");
    return 0;
}

int main(void)
{
    ptec_host_link_end(run());
}
