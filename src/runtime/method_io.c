/* Method inputs, outputs, profiling buffers and instruction names. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

/* Input `index`, or output `index` when `output`; the caller checked the index. */
static ptec_value *io_value(const ptec_method *m, bool output, size_t index)
{
    return m->io[(output ? m->input_count : 0u) + index];
}

static ptec_status io_info(const ptec_method *m, bool output, size_t index, ptec_tensor_info *info)
{
    if (info == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (m == NULL || !m->loaded) {
        return PTEC_INVALID_STATE;
    }
    if (index >= (output ? m->output_count : m->input_count)) {
        return PTEC_NOT_FOUND;
    }
    const ptec_value *v = io_value(m, output, index);
    memset(info, 0, sizeof *info);
    info->kind = (ptec_value_kind)v->kind;
    if (v->kind == PTEC_VALUE_TENSOR) {
        const ptec_tensor *t = v->u.tensor;
        info->dtype = t->dtype;
        info->rank = t->rank;
        info->sizes = t->sizes;
        info->dim_order = t->dim_order;
        info->nbytes = t->nbytes;
        info->planned = (t->flags & PTEC_TENSOR_PLANNED) != 0;
        info->data = t->data;
    }
    return PTEC_OK;
}

size_t ptec_method_input_count(const ptec_method *m)
{
    return m != NULL && m->loaded ? m->input_count : 0;
}

size_t ptec_method_output_count(const ptec_method *m)
{
    return m != NULL && m->loaded ? m->output_count : 0;
}

ptec_status ptec_method_input_info(const ptec_method *m, size_t index, ptec_tensor_info *info)
{
    return io_info(m, false, index, info);
}

ptec_status ptec_method_output_info(const ptec_method *m, size_t index, ptec_tensor_info *info)
{
    return io_info(m, true, index, info);
}

static ptec_status io_fail(ptec_method *m, ptec_status status, const char *what, size_t index,
                           const char *message)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, &m->error, status, -1, NULL, 0);
    ptec_detail_str(&f, what);
    ptec_detail_str(&f, PTEC_MSG(" "));
    ptec_detail_u64(&f, index);
    ptec_detail_str(&f, PTEC_MSG(": "));
    ptec_detail_str(&f, message);
    return ptec_detail_end(&f);
}

/* The tensor of input (or output) `index`, which a caller is about to
 * give data or memory: the method loaded, the index in range, the value
 * a tensor. */
static ptec_status io_tensor(ptec_method *m, bool output, size_t index, ptec_tensor **out)
{
    if (m == NULL || !m->loaded) {
        return PTEC_INVALID_STATE;
    }
    const char *what = output ? PTEC_MSG("output") : PTEC_MSG("input");
    if (index >= (output ? m->output_count : m->input_count)) {
        return io_fail(m, PTEC_INVALID_ARGUMENT, what, index,
                       output ? PTEC_MSG("no such output") : PTEC_MSG("no such input"));
    }
    const ptec_value *v = io_value(m, output, index);
    if (v->kind != PTEC_VALUE_TENSOR) {
        return io_fail(m, PTEC_INVALID_ARGUMENT, what, index,
                       output ? PTEC_MSG("not a tensor") : PTEC_MSG("not a tensor (its value is fixed by the program)"));
    }
    *out = v->u.tensor;
    return PTEC_OK;
}

/* "input <index>: <given_label><given><expected_label><expected>" */
static ptec_status input_mismatch(ptec_method *m, size_t index, const char *given_label, uint64_t given,
                                  const char *expected_label, uint64_t expected)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, &m->error, PTEC_INVALID_ARGUMENT, -1, NULL, 0);
    ptec_detail_str(&f, PTEC_MSG("input "));
    ptec_detail_u64(&f, index);
    ptec_detail_str(&f, PTEC_MSG(": "));
    ptec_detail_str(&f, given_label);
    ptec_detail_u64(&f, given);
    ptec_detail_str(&f, expected_label);
    ptec_detail_u64(&f, expected);
    return ptec_detail_end(&f);
}

/* Checks a caller's tensor against input `index`; returns the tensor. */
static ptec_status check_input(ptec_method *m, size_t index, ptec_dtype dtype, const int32_t *sizes,
                               size_t rank, const void *data, size_t nbytes, ptec_tensor **out)
{
    ptec_tensor *t = NULL;
    const ptec_status status = io_tensor(m, false, index, &t);
    if (status != PTEC_OK) {
        return status;
    }
    if ((int)dtype != t->dtype) {
        ptec_detail_fmt f;
        ptec_detail_begin(&f, &m->error, PTEC_INVALID_ARGUMENT, -1, NULL, 0);
        ptec_detail_str(&f, PTEC_MSG("input "));
        ptec_detail_u64(&f, index);
        ptec_detail_str(&f, PTEC_MSG(": dtype "));
        ptec_detail_str(&f, ptec_dtype_name(dtype));
        ptec_detail_str(&f, PTEC_MSG(" given, program expects "));
        ptec_detail_str(&f, ptec_dtype_name(t->dtype));
        return ptec_detail_end(&f);
    }
    if (sizes != NULL) {
        bool same = rank == t->rank;
        for (size_t d = 0; same && d < rank; ++d) {
            same = sizes[d] == t->sizes[d];
        }
        if (!same && rank != t->rank) {
            /* The caller's sizes are only known to hold `rank` entries, which
             * may be any number: name the ranks, read no sizes. */
            return input_mismatch(m, index, PTEC_MSG("rank "), rank, PTEC_MSG(" given, program expects rank "), t->rank);
        }
        if (!same) {
            ptec_detail_fmt f;
            ptec_detail_begin(&f, &m->error, PTEC_INVALID_ARGUMENT, -1, NULL, 0);
            ptec_detail_str(&f, PTEC_MSG("input "));
            ptec_detail_u64(&f, index);
            ptec_detail_str(&f, PTEC_MSG(": shape ["));
            for (size_t d = 0; d < rank; ++d) {
                ptec_detail_str(&f, d ? PTEC_MSG(",") : PTEC_MSG(""));
                ptec_detail_i64(&f, sizes[d]);
            }
            ptec_detail_str(&f, PTEC_MSG("] given, program expects ["));
            for (size_t d = 0; d < t->rank; ++d) {
                ptec_detail_str(&f, d ? PTEC_MSG(",") : PTEC_MSG(""));
                ptec_detail_i64(&f, t->sizes[d]);
            }
            ptec_detail_str(&f, PTEC_MSG("]"));
            return ptec_detail_end(&f);
        }
    }
    if (nbytes != t->nbytes) {
        return input_mismatch(m, index, "", nbytes, PTEC_MSG(" bytes given, program expects "), t->nbytes);
    }
    if (data == NULL && nbytes > 0) {
        return io_fail(m, PTEC_INVALID_ARGUMENT, PTEC_MSG("input"), index, PTEC_MSG("data is NULL"));
    }
    *out = t;
    return PTEC_OK;
}

ptec_status ptec_method_set_input(ptec_method *m, size_t index, ptec_dtype dtype, const int32_t *sizes,
                                  size_t rank, const void *data, size_t nbytes)
{
    ptec_tensor *t = NULL;
    ptec_status st = check_input(m, index, dtype, sizes, rank, data, nbytes, &t);
    if (st != PTEC_OK) {
        return st;
    }
    if (!(t->flags & PTEC_TENSOR_PLANNED)) {
        return io_fail(m, PTEC_INVALID_STATE, PTEC_MSG("input"), index,
                       PTEC_MSG("not memory-planned: give it memory with ptec_method_bind_input"));
    }
    if (nbytes > 0) {
        memmove(t->data, data, nbytes);
    }
    if (!(m->input_set[index] & INPUT_SET)) {
        m->inputs_ready++;
    }
    m->input_set[index] |= INPUT_SET;
    return PTEC_OK;
}

ptec_status ptec_method_bind_input(ptec_method *m, size_t index, ptec_dtype dtype, const int32_t *sizes,
                                   size_t rank, void *data, size_t nbytes)
{
    ptec_tensor *t = NULL;
    ptec_status st = check_input(m, index, dtype, sizes, rank, data, nbytes, &t);
    if (st != PTEC_OK) {
        return st;
    }
    if (t->flags & PTEC_TENSOR_PLANNED) {
        /* Other values may alias the planned bytes (views), so they must hold the data. */
        return io_fail(m, PTEC_INVALID_STATE, PTEC_MSG("input"), index,
                       PTEC_MSG("memory-planned: copy into it with ptec_method_set_input"));
    }
    if (t->flags & PTEC_TENSOR_CONSTANT) { /* the load refuses such inputs; never re-point a checked constant */
        return io_fail(m, PTEC_INVALID_STATE, PTEC_MSG("input"), index, PTEC_MSG("a constant tensor"));
    }
    t->data = data;
    if (!(m->input_set[index] & INPUT_SET)) {
        m->inputs_ready++;
    }
    m->input_set[index] |= INPUT_SET;
    return PTEC_OK;
}

ptec_status ptec_method_bind_output(ptec_method *m, size_t index, void *data, size_t nbytes)
{
    ptec_tensor *t = NULL;
    const ptec_status status = io_tensor(m, true, index, &t);
    if (status != PTEC_OK) {
        return status;
    }
    if (t->flags & (PTEC_TENSOR_PLANNED | PTEC_TENSOR_CONSTANT)) {
        return io_fail(m, PTEC_INVALID_STATE, PTEC_MSG("output"), index, PTEC_MSG("already has memory (planned or constant)"));
    }
    /* A bound-dynamic output's run may fill it up to its bound. */
    uint32_t capacity = ptec_tensor_capacity(t);
    if (nbytes < capacity || (data == NULL && capacity > 0)) {
        return io_fail(m, PTEC_INVALID_ARGUMENT, PTEC_MSG("output"), index, PTEC_MSG("buffer smaller than the output"));
    }
    t->data = data;
    return PTEC_OK;
}

ptec_status ptec_method_output(const ptec_method *m, size_t index, const ptec_tensor **tensor)
{
    if (tensor == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (m == NULL || !m->loaded) {
        return PTEC_INVALID_STATE;
    }
    if (index >= m->output_count) {
        return PTEC_NOT_FOUND;
    }
    if (!m->executed) {
        /* The detail is the one field a const query may write: the method
         * is the caller's, and its error is there to be written. */
        return io_fail((ptec_method *)(uintptr_t)m, PTEC_INVALID_STATE, PTEC_MSG("output"), index,
                       PTEC_MSG("no output yet: ptec_method_execute has not succeeded since load"));
    }
    const ptec_value *v = io_value(m, true, index);
    if (v->kind != PTEC_VALUE_TENSOR) {
        return PTEC_INVALID_TYPE;
    }
    *tensor = v->u.tensor;
    return PTEC_OK;
}

ptec_status ptec_method_set_profile(ptec_method *m, uint64_t *ticks, size_t count)
{
    if (m == NULL || !m->loaded) {
        return PTEC_INVALID_STATE;
    }
    if (ticks != NULL && count < m->instruction_count) {
        return PTEC_INVALID_ARGUMENT;
    }
    m->profile = ticks;
    m->profile_count = ticks != NULL ? count : 0;
    return PTEC_OK;
}

size_t ptec_method_instruction_count(const ptec_method *m)
{
    return m != NULL && m->loaded ? m->instruction_count : 0;
}

ptec_status ptec_method_instruction_name(const ptec_method *m, size_t index, const char **name,
                                         size_t *name_len)
{
    if (m == NULL || !m->loaded) {
        return PTEC_INVALID_STATE;
    }
    if (name == NULL || name_len == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (index >= m->instruction_count) {
        return PTEC_NOT_FOUND;
    }
    uint32_t len;
    *name = ptec_instr_name(&m->instrs[index], &len);
    *name_len = len;
    return PTEC_OK;
}

const char *ptec_instr_name(const ptec_instr *instr, uint32_t *len)
{
    static const char *const names[] = {[INSTR_MOVE_CALL] = "move", [INSTR_JUMP_FALSE_CALL] = "jump_false",
                                        [INSTR_FREE_CALL] = "free"};
    const char *name = instr->kind == INSTR_KERNEL_CALL     ? instr->op.kernel->name
                       : instr->kind == INSTR_DELEGATE_CALL ? instr->delegate->backend->name
                       : instr->kind < sizeof names / sizeof names[0] && names[instr->kind] != NULL ? names[instr->kind]
                                                                                                 : "?";
    *len = (uint32_t)strlen(name);
    return name;
}
