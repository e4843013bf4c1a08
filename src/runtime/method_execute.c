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

static ptec_status check_ready(ptec_method *m)
{
    for (uint32_t i = 0; i < m->input_count; ++i) {
        const ptec_value *v = m->io[i];
        if (v->kind == PTEC_VALUE_TENSOR && !(m->input_set[i] & INPUT_SET)) {
            return not_ready(m, PTEC_MSG("input"), i,
                             (m->input_set[i] & INPUT_REUSED)
                                 ? PTEC_MSG(" was not set again: the last execute reused its memory (the plan "
                                            "shares it with other tensors), so set it before every execute")
                                 : PTEC_MSG(" was not set"));
        }
    }
    for (uint32_t i = 0; i < m->output_count; ++i) {
        const ptec_value *v = m->io[m->input_count + i];
        if (v->kind == PTEC_VALUE_TENSOR && v->u.tensor->data == NULL && v->u.tensor->nbytes > 0) {
            return not_ready(m, PTEC_MSG("output"), i, PTEC_MSG(" has no memory: bind it with ptec_method_bind_output"));
        }
    }
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
    ptec_detail_begin(&f, &m->error, status, (int32_t)pc, instr->name, instr->name_len);
    ptec_detail_str(&f, PTEC_MSG("failed while executing"));
    return ptec_detail_end(&f);
}

/* Names the instruction that no longer fits the budget and the backward
 * jump that made the program loop (ptec_method_set_budget raises it). */
static ptec_status budget_exhausted(ptec_method *m, uint32_t pc, uint64_t spent, uint32_t jumped_back_at)
{
    const ptec_instr *instr = &m->instrs[pc];
    ptec_detail_fmt f;
    ptec_detail_begin(&f, &m->error, PTEC_OUT_OF_RESOURCES, (int32_t)pc, instr->name, instr->name_len);
    ptec_detail_str(&f, PTEC_MSG("execution budget spent ("));
    ptec_detail_u64(&f, spent);
    ptec_detail_str(&f, PTEC_MSG("; one pass costs "));
    ptec_detail_u64(&f, m->pass_cost);
    ptec_detail_str(&f, PTEC_MSG("), last jumped back at instruction "));
    ptec_detail_u64(&f, jumped_back_at);
    return ptec_detail_end(&f);
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
    ptec_exec_ctx *ctx = m->ctx;
    uint64_t *profile = m->profile;
    uint32_t pc = 0;
    uint64_t spent = 0;
    uint32_t jumped_back_at = 0;
    m->executed = false;
    while (pc < m->instruction_count) {
        ptec_instr *instr = &m->instrs[pc];
        uint64_t start = profile != NULL ? ptec_platform_ticks() : 0;
        uint32_t next = pc + 1u;
        /* Every instruction costs at least 1, so this also bounds the steps. */
        if (instr->cost > m->budget - spent) {
            return budget_exhausted(m, pc, spent, jumped_back_at);
        }
        spent += instr->cost;
        ctx->instruction = (int32_t)pc;
        switch (instr->kind) {
        case INSTR_KERNEL_CALL:
            ctx->op_name = instr->name;
            ctx->op_name_len = instr->name_len;
            st = instr->op.kernel->run(&instr->op);
            break;
        case INSTR_DELEGATE_CALL:
            st = instr->delegate->backend->execute(instr->delegate, instr->op.argv, instr->op.argc);
            break;
        case INSTR_MOVE_CALL:
            m->values[instr->b] = m->values[instr->a];
            break;
        case INSTR_JUMP_FALSE_CALL:
            if (!condition_true(&m->values[instr->a])) {
                next = (uint32_t)instr->b;
                jumped_back_at = next <= pc ? pc : jumped_back_at;
            }
            break;
        default: /* FreeCall: static memory, nothing to release */
            break;
        }
        if (st != PTEC_OK) {
            return run_fail(m, st, pc);
        }
        if (profile != NULL) {
            profile[pc] = ptec_platform_ticks() - start;
        }
        pc = next;
    }
    ctx->instruction = -1;
    for (uint32_t i = 0; i < m->input_count; ++i) {
        if (m->input_set[i] & INPUT_REUSED) {
            m->input_set[i] &= (uint8_t)~INPUT_SET;
        }
    }
    m->executed = true;
    return PTEC_OK;
}
