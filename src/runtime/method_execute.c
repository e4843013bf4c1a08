/* The instruction loop. Everything that can be checked was checked at
 * load, so the loop only dispatches. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

static ptec_status not_ready(ptec_method *m, const char *what, size_t index, const char *message)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, &m->error, PTEC_INVALID_STATE, -1, NULL, 0);
    ptec_detail_str(&f, what);
    ptec_detail_str(&f, PTEC_MSG(" "));
    ptec_detail_u64(&f, index);
    ptec_detail_str(&f, message);
    return ptec_detail_end(&f);
}

/* Whether every input is set and every output has memory. The counts kept
 * by the I/O calls answer it in two comparisons; the loops below run only
 * when something is missing (to name it) or the outputs' memory changed. */
static ptec_status check_ready(ptec_method *m)
{
    if (m->inputs_ready == m->input_count && m->outputs_ready) {
        return PTEC_OK;
    }
    for (uint32_t i = 0; i < m->input_count; ++i) {
        const ptec_value *v = m->io[i];
        if (v->kind == PTEC_VALUE_TENSOR && !(m->input_set[i] & INPUT_SET)) {
            return not_ready(m, PTEC_MSG("input"), i,
                             (m->input_set[i] & INPUT_REUSED)
                                 ? PTEC_MSG(" was not set again: the last execute reused its memory (the plan "
                                            "shares it with other tensors), so set it before every execute")
                                 : PTEC_MSG(" was not set: give it with ptec_method_set_input (or "
                                            "ptec_method_bind_input) before execute"));
        }
    }
    for (uint32_t i = 0; i < m->output_count; ++i) {
        const ptec_value *v = m->io[m->input_count + i];
        if (v->kind == PTEC_VALUE_TENSOR && v->u.tensor->data == NULL && ptec_tensor_capacity(v->u.tensor) > 0) {
            return not_ready(m, PTEC_MSG("output"), i, PTEC_MSG(" has no memory: bind it with ptec_method_bind_output"));
        }
    }
    m->outputs_ready = true;
    return PTEC_OK;
}

static bool condition_true(const ptec_value *v)
{
    if (v->kind == PTEC_VALUE_BOOL) {
        return ptec_value_bool(v);
    }
    const ptec_tensor *t = v->u.tensor;
    const uint8_t *bytes = t->data;
    for (uint32_t i = 0; i < t->numel; ++i) {
        if (bytes[i] == 0) {
            return false;
        }
    }
    return true;
}

static ptec_status run_fail(ptec_method *m, ptec_status status, uint32_t pc)
{
    if (m->error.status == status && m->error.instruction == (int32_t)pc) {
        return status; /* the kernel already said why */
    }
    const ptec_instr *instr = &m->instrs[pc];
    ptec_detail_fmt f;
    uint32_t name_len;
    const char *name = ptec_instr_name(instr, &name_len);
    ptec_detail_begin(&f, &m->error, status, (int32_t)pc, name, name_len);
    ptec_detail_str(&f, PTEC_MSG("failed while executing"));
    return ptec_detail_end(&f);
}

/* Names the backward jump whose repeat no longer fits the budget
 * (ptec_method_set_budget raises it). */
static ptec_status budget_exhausted(ptec_method *m, uint32_t pc, uint64_t spent)
{
    const ptec_instr *instr = &m->instrs[pc];
    ptec_detail_fmt f;
    uint32_t name_len;
    const char *name = ptec_instr_name(instr, &name_len);
    ptec_detail_begin(&f, &m->error, PTEC_OUT_OF_RESOURCES, (int32_t)pc, name, name_len);
    ptec_detail_str(&f, PTEC_MSG("execution budget spent ("));
    ptec_detail_u64(&f, spent);
    ptec_detail_str(&f, PTEC_MSG("; one pass costs "));
    ptec_detail_u64(&f, m->pass_cost);
    ptec_detail_str(&f, PTEC_MSG("), last jumped back at instruction "));
    ptec_detail_u64(&f, pc);
    return ptec_detail_end(&f);
}

/* What running instructions first..last once more costs. */
static uint64_t span_cost(const ptec_method *m, uint32_t first, uint32_t last)
{
    uint64_t cost = 0;
    for (uint32_t i = first; i <= last; ++i) {
        cost += m->instrs[i].cost;
    }
    return cost;
}

/* Every instruction but a kernel call (delegate, move, jump, free): out of
 * line, so that the kernel-call loop keeps few registers live. A jump back
 * pays its span's cost from *spent first (see ptec_method_execute). */
static ptec_status __attribute__((noinline)) run_other(ptec_method *m, uint32_t pc, uint32_t *next, uint64_t *spent)
{
    ptec_instr *instr = &m->instrs[pc];
    switch (instr->kind) {
    case INSTR_DELEGATE_CALL:
        return instr->delegate->backend->execute(instr->delegate, instr->op.argv, instr->op.argc);
    case INSTR_MOVE_CALL: /* a and b are slots of the kept values; -1: values no run reads */
        if (instr->a >= 0) {
            m->values[instr->b] = m->values[instr->a];
        }
        return PTEC_OK;
    case INSTR_JUMP_FALSE_CALL: /* a: the condition's slot */
        if (!condition_true(&m->values[instr->a])) {
            *next = (uint32_t)instr->b;
            if (*next <= pc) {
                /* Every instruction costs at least 1: this also bounds the steps. */
                uint64_t span = span_cost(m, *next, pc);
                if (span > m->budget - *spent) {
                    return budget_exhausted(m, pc, *spent);
                }
                *spent += span;
            }
        }
        return PTEC_OK;
    default: /* FreeCall: static memory, nothing to release */
        return PTEC_OK;
    }
}

/* Runs instruction pc and sets *next to the one after it. */
static inline ptec_status step(ptec_method *m, uint32_t pc, uint32_t *next, uint64_t *spent)
{
    ptec_instr *instr = &m->instrs[pc];
    *next = pc + 1u;
    m->ctx->instruction = (int32_t)pc;
    /* A failing kernel's detail takes its name from the kernel (op_args.c). */
    ptec_status st = instr->kind == INSTR_KERNEL_CALL ? instr->op.kernel->run(&instr->op)
                                                      : run_other(m, pc, next, spent);
    return st == PTEC_OK ? st : run_fail(m, st, pc); /* keeps detail already written */
}

/* The loop with a clock reading around each instruction. Out of line, so
 * that an unprofiled run keeps fewer registers live. */
static ptec_status __attribute__((noinline)) run_profiled(ptec_method *m, uint64_t *profile, uint64_t *spent)
{
    for (uint32_t pc = 0, next; pc < m->instruction_count; pc = next) {
        uint64_t start = ptec_platform_ticks();
        ptec_status st = step(m, pc, &next, spent);
        if (st != PTEC_OK) {
            return st;
        }
        profile[pc] = ptec_platform_ticks() - start;
    }
    return PTEC_OK;
}

ptec_status ptec_method_execute(ptec_method *m)
{
    if (m == NULL || !m->loaded) {
        return PTEC_INVALID_STATE;
    }
    ptec_status st = check_ready(m);
    if (st != PTEC_OK) {
        return st;
    }
    /* Until a backward jump is taken, each instruction runs at most once, so
     * a straight pass costs at most pass_cost, which the budget always
     * covers. Only a taken backward jump can make instructions run again: it
     * pays for its whole span [target, jump] before it jumps. Every re-run
     * of an instruction follows a jump whose span holds it, so `spent`
     * bounds the real cost from above, and straight-line programs pay no
     * per-instruction check. */
    uint64_t spent = m->pass_cost;
    uint64_t *profile = m->profile;
    m->executed = false;
    if (profile == NULL) {
        for (uint32_t pc = 0, next; pc < m->instruction_count; pc = next) {
            if ((st = step(m, pc, &next, &spent)) != PTEC_OK) {
                return st;
            }
        }
    } else if ((st = run_profiled(m, profile, &spent)) != PTEC_OK) {
        return st;
    }
    ptec_exec_ctx *ctx = m->ctx;
    ctx->instruction = -1;
    for (uint32_t i = 0; m->inputs_reused && i < m->input_count; ++i) {
        if ((m->input_set[i] & (INPUT_REUSED | INPUT_SET)) == (INPUT_REUSED | INPUT_SET)) {
            m->input_set[i] &= (uint8_t)~INPUT_SET;
            m->inputs_ready--;
        }
    }
    m->executed = true;
    return PTEC_OK;
}
