/* Checked argument access for kernels' prepare(), with error detail that
 * names the instruction, the operator and the argument. */
#include <string.h>

#include "runtime/runtime_internal.h"

static const char *const kind_names[] = {"None", "None", "Int", "Bool", "Double", "Tensor",
                                         "String", "IntList", "DoubleList", "BoolList",
                                         "TensorList", "OptionalTensorList"};

/* The failing operator's detail begins with its name: the one the load
 * names while it prepares, else (while the method runs, which keeps the
 * dispatch loop free of bookkeeping) the kernel's own. */
static void begin(ptec_detail_fmt *f, const ptec_op *op, ptec_status status)
{
    const ptec_exec_ctx *ctx = op->ctx;
    if (ctx->op_name == NULL && op->kernel != NULL) {
        ptec_detail_begin(f, ctx->error, status, ctx->instruction, op->kernel->name,
                          (uint32_t)strlen(op->kernel->name));
    } else {
        ptec_detail_begin(f, ctx->error, status, ctx->instruction, ctx->op_name, ctx->op_name_len);
    }
}

ptec_status ptec_op_fail(ptec_op *op, ptec_status status, int arg, const char *message)
{
    ptec_detail_fmt f;
    begin(&f, op, status);
    if (arg >= 0) {
        ptec_detail_str(&f, PTEC_MSG("arg "));
        ptec_detail_i64(&f, arg);
        ptec_detail_str(&f, PTEC_MSG(": "));
    }
    ptec_detail_str(&f, message);
    return ptec_detail_end(&f);
}

static ptec_status kind_fail(ptec_op *op, size_t i, const char *wanted)
{
    ptec_detail_fmt f;
    begin(&f, op, PTEC_INVALID_ARGUMENT);
    ptec_detail_str(&f, PTEC_MSG("arg "));
    ptec_detail_u64(&f, i);
    if (i >= op->argc) {
        ptec_detail_str(&f, PTEC_MSG(": missing (the call has "));
        ptec_detail_u64(&f, op->argc);
        ptec_detail_str(&f, PTEC_MSG(" arguments)"));
    } else {
        uint8_t kind = op->argv[i]->kind;
        ptec_detail_str(&f, PTEC_MSG(": expected "));
        ptec_detail_str(&f, wanted);
        ptec_detail_str(&f, PTEC_MSG(", got "));
        ptec_detail_str(&f, kind <= PTEC_VALUE_OPTIONAL_TENSOR_LIST ? kind_names[kind] : PTEC_MSG("?"));
    }
    return ptec_detail_end(&f);
}

static const ptec_value *arg_of_kind(ptec_op *op, size_t i, uint8_t kind)
{
    return i < op->argc && op->argv[i]->kind == kind ? op->argv[i] : NULL;
}

ptec_status ptec_op_expect_argc(ptec_op *op, size_t argc)
{
    if (op->argc != argc) {
        ptec_detail_fmt f;
        begin(&f, op, PTEC_INVALID_PROGRAM);
        ptec_detail_str(&f, PTEC_MSG("expected "));
        ptec_detail_u64(&f, argc);
        ptec_detail_str(&f, PTEC_MSG(" arguments, got "));
        ptec_detail_u64(&f, op->argc);
        return ptec_detail_end(&f);
    }
    return PTEC_OK;
}

ptec_status ptec_op_get_tensor(ptec_op *op, size_t i, ptec_tensor **out)
{
    const ptec_value *v = arg_of_kind(op, i, PTEC_VALUE_TENSOR);
    if (v == NULL) {
        return kind_fail(op, i, PTEC_MSG("Tensor"));
    }
    *out = v->u.tensor;
    return PTEC_OK;
}

ptec_status ptec_op_get_optional_tensor(ptec_op *op, size_t i, ptec_tensor **out)
{
    if (ptec_op_arg_is_null(op, i)) {
        *out = NULL;
        return PTEC_OK;
    }
    return ptec_op_get_tensor(op, i, out);
}

ptec_status ptec_op_get_out(ptec_op *op, ptec_tensor **out)
{
    if (op->argc < 2) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, -1, PTEC_MSG("an out-variant call needs out and return slots"));
    }
    ptec_status st = ptec_op_get_tensor(op, op->argc - 2u, out);
    if (st != PTEC_OK) {
        return st;
    }
    /* Compare value indices, not data pointers: the requirements pass has no
     * data pointers yet, and it must judge a program exactly as load does. */
    const uint8_t *args = op->ctx->fb.base + op->ctx->args_pos;
    if (fb_le32(args + 4u * (op->argc - 1u)) != fb_le32(args + 4u * (op->argc - 2u))) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, (int)op->argc - 1, PTEC_MSG("return slot does not repeat out"));
    }
    if ((*out)->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, (int)op->argc - 2, PTEC_MSG("out is a constant tensor"));
    }
    return PTEC_OK;
}

/* The scalar accessors: argument i when it holds the one kind, read by
 * that kind's value reader; otherwise a failure naming the kind wanted. */
#define PTEC_SCALAR_ACCESSOR(function, type, kind, reader, wanted) \
    ptec_status function(ptec_op *op, size_t i, type *out)         \
    {                                                               \
        const ptec_value *v = arg_of_kind(op, i, kind);             \
        if (v == NULL) {                                            \
            return kind_fail(op, i, PTEC_MSG(wanted));              \
        }                                                           \
        *out = reader(v);                                           \
        return PTEC_OK;                                             \
    }

PTEC_SCALAR_ACCESSOR(ptec_op_get_int, int64_t, PTEC_VALUE_INT, ptec_value_int, "Int")
PTEC_SCALAR_ACCESSOR(ptec_op_get_double, double, PTEC_VALUE_DOUBLE, ptec_value_double, "Double")
PTEC_SCALAR_ACCESSOR(ptec_op_get_bool, bool, PTEC_VALUE_BOOL, ptec_value_bool, "Bool")

ptec_status ptec_op_get_int32(ptec_op *op, size_t i, int32_t *out)
{
    int64_t v = 0;
    ptec_status st = ptec_op_get_int(op, i, &v);
    if (st != PTEC_OK) {
        return st;
    }
    if (v < INT32_MIN || v > INT32_MAX) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("value does not fit in int32"));
    }
    *out = (int32_t)v;
    return PTEC_OK;
}

ptec_status ptec_op_get_scalar(ptec_op *op, size_t i, double *out)
{
    if (arg_of_kind(op, i, PTEC_VALUE_INT) != NULL) {
        *out = (double)ptec_value_int(op->argv[i]);
        return PTEC_OK;
    }
    if (arg_of_kind(op, i, PTEC_VALUE_BOOL) != NULL) {
        *out = ptec_value_bool(op->argv[i]) ? 1.0 : 0.0;
        return PTEC_OK;
    }
    if (arg_of_kind(op, i, PTEC_VALUE_DOUBLE) != NULL) {
        *out = ptec_value_double(op->argv[i]);
        return PTEC_OK;
    }
    return kind_fail(op, i, PTEC_MSG("Int or Double"));
}

ptec_status ptec_op_get_int_list(ptec_op *op, size_t i, int64_t *out, size_t max, size_t *count,
                                 bool allow_null)
{
    *count = 0;
    if (allow_null && ptec_op_arg_is_null(op, i)) {
        return PTEC_OK;
    }
    const ptec_value *v = arg_of_kind(op, i, PTEC_VALUE_INT_LIST);
    if (v == NULL) {
        return kind_fail(op, i, PTEC_MSG("IntList"));
    }
    if (v->count > max) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("int list longer than the operator allows"));
    }
    for (uint32_t j = 0; j < v->count; ++j) {
        /* Items are boxed: each names an Int value, which no instruction of a
         * static program rewrites, so the program's copy is the value. */
        uint32_t index = (uint32_t)fb_le64(v->u.items + 8u * j);
        ptec_status st = ptec_value_read_int(op->ctx, index, &out[j]);
        if (st != PTEC_OK) {
            return st;
        }
    }
    *count = v->count;
    return PTEC_OK;
}

ptec_status ptec_op_get_int32_list(ptec_op *op, size_t i, int32_t *out, size_t max, size_t *count,
                                   bool allow_null)
{
    int64_t wide[PTEC_MAX_RANK];
    if (max > PTEC_MAX_RANK) {
        max = PTEC_MAX_RANK;
    }
    ptec_status st = ptec_op_get_int_list(op, i, wide, max, count, allow_null);
    if (st != PTEC_OK) {
        return st;
    }
    for (size_t j = 0; j < *count; ++j) {
        if (wide[j] < INT32_MIN || wide[j] > INT32_MAX) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("list item does not fit in int32"));
        }
        out[j] = (int32_t)wide[j];
    }
    return PTEC_OK;
}

bool ptec_op_arg_is_null(const ptec_op *op, size_t i)
{
    return i < op->argc && op->argv[i]->kind == PTEC_VALUE_NULL;
}

ptec_status ptec_op_get_tensor_list(ptec_op *op, size_t i, size_t *count)
{
    const ptec_value *v = arg_of_kind(op, i, PTEC_VALUE_TENSOR_LIST);
    if (v == NULL) {
        *count = 0;
        return kind_fail(op, i, PTEC_MSG("TensorList"));
    }
    *count = v->count;
    return PTEC_OK;
}

ptec_status ptec_op_get_optional_tensor_list(ptec_op *op, size_t i, size_t *count)
{
    const ptec_value *v = arg_of_kind(op, i, PTEC_VALUE_OPTIONAL_TENSOR_LIST);
    if (v == NULL) {
        *count = 0;
        return kind_fail(op, i, PTEC_MSG("OptionalTensorList"));
    }
    *count = v->count;
    return PTEC_OK;
}

/* Item j of list argument i (of `count` items): a Tensor, or NULL for a None
 * item when the list is an OptionalTensorList. */
static ptec_status list_item(ptec_op *op, size_t i, size_t j, size_t count, bool optional, ptec_tensor *temp,
                             ptec_tensor **out)
{
    *out = NULL;
    if (j >= count) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("tensor list item out of range"));
    }
    /* Items were checked at parse to name existing values (or be -1 in an
     * optional list). */
    int32_t index = (int32_t)fb_le32(op->argv[i]->u.items + 4u * j);
    if (index < 0) {
        return optional ? PTEC_OK
                        : ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("tensor list item is None"));
    }
    ptec_exec_ctx *ctx = op->ctx;
    if (ctx->method != NULL) {
        const ptec_value *item = ptec_kept_value(ctx->method, (uint32_t)index);
        if (item == NULL || item->kind != PTEC_VALUE_TENSOR) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("tensor list item is not a Tensor"));
        }
        *out = item->u.tensor;
        return PTEC_OK;
    }
    ptec_value decoded;
    ptec_status st = ptec_value_parse(ctx, (uint32_t)index, &decoded, temp);
    if (st != PTEC_OK) {
        return st;
    }
    if (decoded.kind != PTEC_VALUE_TENSOR) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, (int)i, PTEC_MSG("tensor list item is not a Tensor"));
    }
    *out = temp;
    return PTEC_OK;
}

ptec_status ptec_op_get_tensor_list_item(ptec_op *op, size_t i, size_t j, ptec_tensor *temp,
                                         ptec_tensor **out)
{
    size_t count;
    ptec_status st = ptec_op_get_tensor_list(op, i, &count);
    return st != PTEC_OK ? st : list_item(op, i, j, count, false, temp, out);
}

ptec_status ptec_op_get_optional_tensor_list_item(ptec_op *op, size_t i, size_t j, ptec_tensor *temp,
                                                  ptec_tensor **out)
{
    size_t count;
    ptec_status st = ptec_op_get_optional_tensor_list(op, i, &count);
    return st != PTEC_OK ? st : list_item(op, i, j, count, true, temp, out);
}

ptec_tensor *ptec_op_tensor_list_item(const ptec_op *op, size_t i, size_t j)
{
    uint32_t index = fb_le32(op->argv[i]->u.items + 4u * j);
    return ptec_kept_value(op->ctx->method, index)->u.tensor;
}
