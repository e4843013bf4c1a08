/* Decoding EValues and tensors from the program, with every count, index
 * and byte range checked against the file and the planned buffers. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

static ptec_status value_fail(ptec_exec_ctx *ctx, ptec_status status, uint32_t index, const char *what)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, ctx->program, status, ctx->instruction, ctx->op_name, ctx->op_name_len);
    ptec_detail_str(&f, PTEC_MSG("value "));
    ptec_detail_u64(&f, index);
    ptec_detail_str(&f, PTEC_MSG(": "));
    ptec_detail_str(&f, what);
    return ptec_detail_end(&f);
}

static ptec_status value_table(ptec_exec_ctx *ctx, uint32_t index, uint8_t *tag, fb_table *member,
                               bool *has_member)
{
    fb_table ev;
    if (index >= ctx->values.count) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("index out of range"));
    }
    if (!ptec_fb_vec_table(&ctx->fb, &ctx->values, index, &ev) || !ptec_fb_u8(&ctx->fb, &ev, EVALUE_TYPE, 0, tag) ||
        !ptec_fb_subtable(&ctx->fb, &ev, EVALUE_VAL, member, has_member)) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed EValue"));
    }
    return PTEC_OK;
}

ptec_status ptec_value_read_int(ptec_exec_ctx *ctx, uint32_t index, int64_t *out)
{
    uint8_t tag;
    fb_table member;
    bool has_member;
    uint64_t raw = 0;
    ptec_status st = value_table(ctx, index, &tag, &member, &has_member);
    if (st != PTEC_OK) {
        return st;
    }
    if (tag != PTEC_VALUE_INT) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("int list item is not an Int"));
    }
    if (has_member && !ptec_fb_u64(&ctx->fb, &member, 0, 0, &raw)) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed Int"));
    }
    *out = (int64_t)raw;
    return PTEC_OK;
}

static bool mul_overflows(uint64_t a, uint64_t b, uint64_t limit, uint64_t *out)
{
    if (a != 0 && b > limit / a) {
        return true;
    }
    *out = a * b;
    return false;
}

static ptec_status tensor_data(ptec_exec_ctx *ctx, uint32_t index, const fb_table *t, ptec_tensor *tensor)
{
    ptec_program *p = ctx->program;
    const fb_view *fb = &ctx->fb;
    uint32_t buffer_idx;
    fb_table alloc, extra;
    bool has_alloc, has_extra;
    if (!ptec_fb_u32(fb, t, TENSOR_DATA_BUFFER_IDX, 0, &buffer_idx) ||
        !ptec_fb_subtable(fb, t, TENSOR_ALLOCATION_INFO, &alloc, &has_alloc) ||
        !ptec_fb_subtable(fb, t, TENSOR_EXTRA_INFO, &extra, &has_extra)) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed tensor"));
    }
    if (has_extra) {
        uint8_t location;
        if (!ptec_fb_u8(fb, &extra, EXTRA_LOCATION, LOCATION_SEGMENT, &location)) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed extra_tensor_info"));
        }
        if (location == LOCATION_EXTERNAL) {
            return value_fail(ctx, PTEC_NOT_SUPPORTED, index, PTEC_MSG("tensor data in an external .ptd file"));
        }
    }
    tensor->data = NULL;
    if (has_alloc) {
        uint32_t memory_id, low, high;
        if (!ptec_fb_u32(fb, &alloc, ALLOC_MEMORY_ID, 0, &memory_id) ||
            !ptec_fb_u32(fb, &alloc, ALLOC_OFFSET_LOW, 0, &low) || !ptec_fb_u32(fb, &alloc, ALLOC_OFFSET_HIGH, 0, &high)) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed allocation_info"));
        }
        if (buffer_idx != 0) {
            return value_fail(ctx, PTEC_NOT_SUPPORTED, index, PTEC_MSG("mutable tensor with an initial value"));
        }
        if (memory_id == 0 || memory_id > ctx->planned_count) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("memory_id names no planned buffer"));
        }
        uint64_t offset = ((uint64_t)high << 32) | low;
        uint64_t arena = ctx->planned_size[memory_id - 1u];
        if (offset > arena || tensor->nbytes > arena - offset) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("tensor lies outside its planned buffer"));
        }
        if (offset % ptec_dtype_size(tensor->dtype) != 0) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("planned tensor offset is misaligned for its dtype"));
        }
        if (ctx->planned_base[memory_id - 1u] != NULL) {
            tensor->data = ctx->planned_base[memory_id - 1u] + offset;
        }
        tensor->flags |= PTEC_TENSOR_PLANNED;
        return PTEC_OK;
    }
    if (buffer_idx == 0) {
        return PTEC_OK; /* memory arrives at run time (inputs, outputs, placeholders) */
    }
    if (p->constant_offsets != 0) {
        if (buffer_idx >= p->constant_count) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant index out of range"));
        }
        uint64_t offset = fb_le64(p->data + p->constant_offsets + 8u * buffer_idx);
        if (offset > p->constants_size || tensor->nbytes > p->constants_size - offset) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant lies outside the constant segment"));
        }
        tensor->data = (void *)(uintptr_t)(p->constants + offset);
    } else {
        fb_vector legacy = {p->legacy_buffers, p->legacy_count, p->legacy_buffers != 0};
        fb_table buffer;
        fb_vector storage;
        if (buffer_idx >= legacy.count || !ptec_fb_vec_table(fb, &legacy, buffer_idx, &buffer) ||
            !ptec_fb_vec(fb, &buffer, BUFFER_STORAGE, 1, &storage)) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant buffer missing or malformed"));
        }
        if (tensor->nbytes > storage.count) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant buffer shorter than the tensor"));
        }
        tensor->data = (void *)(uintptr_t)(p->data + storage.data);
    }
    if ((uintptr_t)tensor->data % ptec_dtype_size(tensor->dtype) != 0) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant data is misaligned for its dtype"));
    }
    tensor->flags |= PTEC_TENSOR_CONSTANT;
    return PTEC_OK;
}

static ptec_status tensor_parse(ptec_exec_ctx *ctx, uint32_t index, const fb_table *t, ptec_tensor *tensor)
{
    const fb_view *fb = &ctx->fb;
    uint8_t scalar_type, dynamism;
    uint32_t storage_offset;
    fb_vector sizes, dim_order;
    memset(tensor, 0, sizeof *tensor);
    if (!ptec_fb_u8(fb, t, TENSOR_SCALAR_TYPE, 0, &scalar_type) ||
        !ptec_fb_u32(fb, t, TENSOR_STORAGE_OFFSET, 0, &storage_offset) || !ptec_fb_vec(fb, t, TENSOR_SIZES, 4, &sizes) ||
        !ptec_fb_vec(fb, t, TENSOR_DIM_ORDER, 1, &dim_order) ||
        !ptec_fb_u8(fb, t, TENSOR_SHAPE_DYNAMISM, DYNAMISM_STATIC, &dynamism)) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed tensor"));
    }
    size_t elem = ptec_dtype_size(scalar_type);
    if (elem == 0) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("unknown scalar type"));
    }
    if (storage_offset != 0) {
        return value_fail(ctx, PTEC_NOT_SUPPORTED, index, PTEC_MSG("storage_offset must be 0"));
    }
    if (dynamism == DYNAMISM_UNBOUND) {
        return value_fail(ctx, PTEC_NOT_SUPPORTED, index, PTEC_MSG("dynamic unbound tensor"));
    }
    if (!sizes.present || !dim_order.present || sizes.count != dim_order.count) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("tensor sizes and dim_order missing or unequal"));
    }
    if (sizes.count > PTEC_MAX_RANK) {
        return value_fail(ctx, PTEC_NOT_SUPPORTED, index, PTEC_MSG("tensor rank above 16"));
    }
    const uint8_t *size_bytes = fb->base + sizes.data;
    if (((uintptr_t)size_bytes % 4u) != 0) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("tensor sizes are misaligned"));
    }
    uint64_t numel = 1;
    uint32_t seen = 0;
    for (uint32_t d = 0; d < sizes.count; ++d) {
        int32_t extent = (int32_t)fb_le32(size_bytes + 4u * d);
        uint8_t axis = fb->base[dim_order.data + d];
        if (extent < 0) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("negative tensor size"));
        }
        if (axis >= sizes.count || (seen & (1u << axis))) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("dim_order is not a permutation"));
        }
        seen |= 1u << axis;
        if (mul_overflows(numel, (uint64_t)extent, UINT32_MAX, &numel)) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("tensor too large"));
        }
    }
    uint64_t nbytes;
    if (mul_overflows(numel, elem, UINT32_MAX, &nbytes)) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("tensor too large"));
    }
    tensor->sizes = (const int32_t *)(const void *)size_bytes;
    tensor->dim_order = fb->base + dim_order.data;
    tensor->numel = (uint32_t)numel;
    tensor->nbytes = (uint32_t)nbytes;
    tensor->dtype = scalar_type;
    tensor->rank = (uint8_t)sizes.count;
    tensor->flags = dynamism == DYNAMISM_BOUND ? PTEC_TENSOR_DYNAMIC : 0u;
    return tensor_data(ctx, index, t, tensor);
}

/* Checks that every item of an index list names an existing value. */
static ptec_status check_index_list(ptec_exec_ctx *ctx, uint32_t index, const fb_vector *items,
                                    uint32_t width, bool allow_none)
{
    for (uint32_t j = 0; j < items->count; ++j) {
        const uint8_t *p = ctx->fb.base + items->data + (size_t)width * j;
        int64_t item = width == 8u ? (int64_t)fb_le64(p) : (int64_t)(int32_t)fb_le32(p);
        if ((item < 0 || item >= (int64_t)ctx->values.count) && !(allow_none && item == -1)) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("list item names no value"));
        }
    }
    return PTEC_OK;
}

ptec_status ptec_value_parse(ptec_exec_ctx *ctx, uint32_t index, ptec_value *out, ptec_tensor *tensor)
{
    uint8_t tag;
    fb_table m;
    bool has;
    fb_vector items;
    const fb_view *fb = &ctx->fb;
    ptec_status st = value_table(ctx, index, &tag, &m, &has);
    if (st != PTEC_OK) {
        return st;
    }
    memset(out, 0, sizeof *out);
    out->kind = tag;
    if (tag == PTEC_VALUE_NONE || tag == PTEC_VALUE_NULL) {
        out->kind = PTEC_VALUE_NULL;
        return PTEC_OK;
    }
    if (tag > PTEC_VALUE_OPTIONAL_TENSOR_LIST) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("unknown EValue kind"));
    }
    if (!has) {
        /* A member table with only default fields may be left out entirely. */
        if (tag == PTEC_VALUE_INT || tag == PTEC_VALUE_BOOL || tag == PTEC_VALUE_DOUBLE) {
            return PTEC_OK;
        }
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("EValue has no payload"));
    }
    bool ok = true;
    switch (tag) {
    case PTEC_VALUE_INT: {
        uint64_t raw;
        ok = ptec_fb_u64(fb, &m, 0, 0, &raw);
        out->u.i = (int64_t)raw;
        break;
    }
    case PTEC_VALUE_BOOL: {
        uint8_t b;
        ok = ptec_fb_u8(fb, &m, 0, 0, &b);
        out->u.b = b != 0;
        break;
    }
    case PTEC_VALUE_DOUBLE:
        ok = ptec_fb_f64(fb, &m, 0, 0.0, &out->u.d);
        break;
    case PTEC_VALUE_STRING: {
        uint32_t len;
        ok = ptec_fb_string(fb, &m, 0, &out->u.string, &len);
        out->count = len;
        break;
    }
    case PTEC_VALUE_TENSOR:
        out->u.tensor = tensor;
        return tensor_parse(ctx, index, &m, tensor);
    default: {
        static const uint8_t widths[] = {[PTEC_VALUE_INT_LIST] = 8, [PTEC_VALUE_DOUBLE_LIST] = 8,
                                         [PTEC_VALUE_BOOL_LIST] = 1, [PTEC_VALUE_TENSOR_LIST] = 4,
                                         [PTEC_VALUE_OPTIONAL_TENSOR_LIST] = 4};
        uint32_t width = widths[tag];
        ok = ptec_fb_vec(fb, &m, 0, width, &items);
        if (!ok) {
            break;
        }
        out->count = items.count;
        out->u.items = fb->base + items.data;
        if (tag == PTEC_VALUE_INT_LIST || tag == PTEC_VALUE_TENSOR_LIST ||
            tag == PTEC_VALUE_OPTIONAL_TENSOR_LIST) {
            return check_index_list(ctx, index, &items, width, tag == PTEC_VALUE_OPTIONAL_TENSOR_LIST);
        }
        break;
    }
    }
    return ok ? PTEC_OK : value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed EValue payload"));
}
