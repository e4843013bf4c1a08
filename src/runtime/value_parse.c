/* Decoding EValues and tensors from the program, with every count, index
 * and byte range checked against the file and the planned buffers. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

static ptec_status value_fail(ptec_exec_ctx *ctx, ptec_status status, uint32_t index, const char *what)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, ctx->error, status, ctx->instruction, ctx->op_name, ctx->op_name_len);
    ptec_detail_str(&f, PTEC_MSG("value "));
    ptec_detail_u64(&f, index);
    ptec_detail_str(&f, PTEC_MSG(": "));
    ptec_detail_str(&f, what);
    return ptec_detail_end(&f);
}

/* A field read through its position from ptec_fb_fields (0: absent). */
static inline uint8_t u8_at(const fb_view *fb, uint32_t pos, uint8_t dflt)
{
    return pos ? fb->base[pos] : dflt;
}

static inline uint32_t u32_at(const fb_view *fb, uint32_t pos, uint32_t dflt)
{
    return pos ? fb_le32(fb->base + pos) : dflt;
}

/* The member table of EValue table `ev` (value `index`) and its kind tag. */
static ptec_status value_member(ptec_exec_ctx *ctx, uint32_t index, const fb_table *ev, uint8_t *tag,
                                fb_table *member)
{
    /* Every decode starts here: ptec_fb_field's checks for the two fields
     * and ptec_fb_sub_at's for the member table, written out in one piece
     * (as calls they were a tenth of a load): field id is in the vtable when
     * 6 + 2 * id <= vt_len; a table that is not "none" lies in the buffer
     * with 4 bytes of room; the member's uoffset, soffset and vtable land in
     * the buffer. */
    fb_view *fb = &ctx->fb;
    const uint8_t *base = fb->base;
    const uint32_t size = fb->size;
    fb_table m = {0, 0, 0};
    *tag = 0;
    if (ev->pos != 0) {
        const uint8_t *vt = base + ev->vtable;
        const uint32_t room = size - ev->pos;
        const uint32_t type_off = ev->vt_len >= 6u ? fb_le16(vt + 4) : 0u;
        const uint32_t val_off = ev->vt_len >= 8u ? fb_le16(vt + 6) : 0u;
        if (type_off + 1u > room || val_off + 4u > room) {
            fb->bad = true;
        } else {
            if (type_off != 0) {
                *tag = base[ev->pos + type_off];
            }
            if (val_off != 0) {
                /* pos + val_off + 4 <= size < 2^32: no overflow in 64 bits;
                 * size >= 4 since room >= 4. */
                const uint32_t at = ev->pos + val_off;
                const uint64_t pos = (uint64_t)at + fb_le32(base + at);
                bool ok = false;
                if (pos <= size - 4u) {
                    const int64_t vtable = (int64_t)pos - (int32_t)fb_le32(base + pos);
                    if (vtable >= 0 && (uint64_t)vtable <= size - 4u) {
                        const uint32_t vt_len = fb_le16(base + vtable);
                        if (vt_len >= 4u && vt_len <= size - (uint32_t)vtable) {
                            m.pos = (uint32_t)pos;
                            m.vtable = (uint32_t)vtable;
                            m.vt_len = vt_len;
                            ok = true;
                        }
                    }
                }
                if (!ok) {
                    fb->bad = true;
                }
            }
        }
    }
    *member = m;
    return fb->bad ? value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed EValue")) : PTEC_OK;
}

/* Where member table `m` keeps its field 0 of `width` bytes (0: absent):
 * ptec_fb_field(fb, m, 0, width) with its checks written out. Every member
 * kind keeps its payload (a scalar, a list's vector) in field 0, and an
 * Int's read is most of an int list's. */
static inline __attribute__((always_inline)) uint32_t payload_at(fb_view *fb, const fb_table *m, uint32_t width)
{
    const uint32_t off = m->pos != 0 && m->vt_len >= 6u ? fb_le16(fb->base + m->vtable + 4u) : 0u;
    if (off == 0) {
        return 0;
    }
    if (off + width > fb->size - m->pos) {
        fb->bad = true;
        return 0;
    }
    return m->pos + off;
}

/* The member table of value `index` and its kind tag. */
static ptec_status value_table(ptec_exec_ctx *ctx, uint32_t index, uint8_t *tag, fb_table *member)
{
    if (index >= ctx->values.count) {
        /* The status spelled here, not value_fail()'s result: then GCC sees
         * that no caller reads *member after this path (at -O3 it reported
         * the callers' tables as maybe uninitialized). */
        (void)value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("index out of range"));
        return PTEC_INVALID_PROGRAM;
    }
    fb_table ev = ptec_fb_at_inline(&ctx->fb, &ctx->values, index);
    return value_member(ctx, index, &ev, tag, member);
}

ptec_status ptec_value_read_int(ptec_exec_ctx *ctx, uint32_t index, int64_t *out)
{
    uint8_t tag = 0;
    fb_table member;
    ptec_status st = value_table(ctx, index, &tag, &member);
    if (st != PTEC_OK) {
        return st;
    }
    const uint32_t at = payload_at(&ctx->fb, &member, 8);
    *out = at != 0 ? (int64_t)fb_le64(ctx->fb.base + at) : 0;
    if (tag != PTEC_VALUE_INT || ctx->fb.bad) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("int list item is not an Int"));
    }
    return PTEC_OK;
}

/* A planned tensor's place in its buffer. */
static ptec_status planned_data(ptec_exec_ctx *ctx, uint32_t index, const fb_table *alloc, ptec_tensor *tensor)
{
    fb_view *fb = &ctx->fb;
    static const uint8_t widths[] = {[ALLOC_MEMORY_ID] = 4, [ALLOC_OFFSET_LOW] = 4, [ALLOC_OFFSET_HIGH] = 4};
    uint32_t f[3];
    ptec_fb_fields(fb, alloc, 3, widths, f);
    uint32_t memory_id = u32_at(fb, f[ALLOC_MEMORY_ID], 0);
    uint64_t offset = ((uint64_t)u32_at(fb, f[ALLOC_OFFSET_HIGH], 0) << 32) | u32_at(fb, f[ALLOC_OFFSET_LOW], 0);
    if (memory_id == 0 || memory_id > ctx->planned_count) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("memory_id names no planned buffer"));
    }
    uint64_t arena = ctx->planned[memory_id - 1u].size;
    if (offset > arena || tensor->nbytes > arena - offset) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("tensor lies outside its planned buffer"));
    }
    /* Element sizes are 1, 2, 4 or 8 (tensor_parse refused 0): a mask, where
     * a 64-bit `%` was a library call on a 32-bit core. */
    if ((offset & (ptec_dtype_size(tensor->dtype) - 1u)) != 0) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("planned tensor offset is misaligned for its dtype"));
    }
    if (ctx->planned[memory_id - 1u].base != NULL) {
        tensor->data = ctx->planned[memory_id - 1u].base + offset;
    }
    tensor->flags |= PTEC_TENSOR_PLANNED;
    return PTEC_OK;
}

/* A constant's bytes, from the constant segment or the legacy buffers. */
static ptec_status constant_data(ptec_exec_ctx *ctx, uint32_t index, uint32_t buffer_idx, ptec_tensor *tensor)
{
    const ptec_program *p = ctx->program;
    const uint8_t *data;
    if (p->constant_offsets != 0) {
        if (buffer_idx >= p->constant_count) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant index out of range"));
        }
        uint64_t offset = fb_le64(p->data + p->constant_offsets + 8u * buffer_idx);
        if (offset > p->constants_size || tensor->nbytes > p->constants_size - offset) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant lies outside the constant segment"));
        }
        data = p->constants + offset;
    } else {
        fb_vector legacy = {p->legacy_buffers, p->legacy_count, p->legacy_buffers != 0};
        fb_table buffer = ptec_fb_at(&ctx->fb, &legacy, buffer_idx);
        fb_vector storage = ptec_fb_vec(&ctx->fb, &buffer, BUFFER_STORAGE, 1);
        if (ctx->fb.bad || tensor->nbytes > storage.count) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant buffer missing or too short"));
        }
        data = p->data + storage.data;
    }
    if (((uintptr_t)data & (ptec_dtype_size(tensor->dtype) - 1u)) != 0) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("constant data is misaligned for its dtype"));
    }
    tensor->data = (void *)(uintptr_t)data;
    tensor->flags |= PTEC_TENSOR_CONSTANT;
    return PTEC_OK;
}

/* A planned tensor's initial value, in mutable_data_segments[0]'s segment
 * (located and checked against the file by ptec_program_init). Upstream does
 * not pad these offsets, so the bytes may sit at any address: they are only
 * ever copied with memcpy. */
static ptec_status initial_data(ptec_exec_ctx *ctx, uint32_t index, uint32_t buffer_idx, ptec_tensor *tensor,
                                const uint8_t **initial)
{
    const ptec_program *p = ctx->program;
    if (buffer_idx >= p->mutable_count) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index,
                          PTEC_MSG("initial value index out of range (mutable_data_segments)"));
    }
    uint64_t offset = fb_le64(p->data + p->mutable_offsets + 8u * buffer_idx);
    if (offset > p->mutables_size || tensor->nbytes > p->mutables_size - offset) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("initial value lies outside the mutable data segment"));
    }
    *initial = p->mutables + offset;
    tensor->flags |= PTEC_TENSOR_INITIAL;
    return PTEC_OK;
}

static ptec_status tensor_parse(ptec_exec_ctx *ctx, uint32_t index, const fb_table *t, ptec_tensor *tensor,
                                const uint8_t **initial)
{
    fb_view *fb = &ctx->fb;
    /* The fields read (requires_grad and layout are not: width 0). */
    static const uint8_t widths[] = {[TENSOR_SCALAR_TYPE] = 1,     [TENSOR_STORAGE_OFFSET] = 4,
                                     [TENSOR_SIZES] = 4,           [TENSOR_DIM_ORDER] = 4,
                                     [TENSOR_DATA_BUFFER_IDX] = 4, [TENSOR_ALLOCATION_INFO] = 4,
                                     [TENSOR_SHAPE_DYNAMISM] = 1,  [TENSOR_EXTRA_INFO] = 4};
    static const uint8_t extra_widths[] = {[EXTRA_MUTABLE_IDX] = 8, [EXTRA_LOCATION] = 1};
    uint32_t f[TENSOR_EXTRA_INFO + 1], e[EXTRA_LOCATION + 1];
    ptec_fb_fields(fb, t, TENSOR_EXTRA_INFO + 1, widths, f);
    uint8_t scalar_type = u8_at(fb, f[TENSOR_SCALAR_TYPE], 0);
    uint32_t storage_offset = u32_at(fb, f[TENSOR_STORAGE_OFFSET], 0);
    fb_vector sizes = ptec_fb_vec_at(fb, f[TENSOR_SIZES], 4);
    fb_vector dim_order = ptec_fb_vec_at(fb, f[TENSOR_DIM_ORDER], 1);
    uint8_t dynamism = u8_at(fb, f[TENSOR_SHAPE_DYNAMISM], DYNAMISM_STATIC);
    uint32_t buffer_idx = u32_at(fb, f[TENSOR_DATA_BUFFER_IDX], 0);
    fb_table alloc = ptec_fb_sub_at(fb, f[TENSOR_ALLOCATION_INFO]);
    fb_table extra = ptec_fb_sub_at(fb, f[TENSOR_EXTRA_INFO]);
    ptec_fb_fields(fb, &extra, EXTRA_LOCATION + 1, extra_widths, e);
    uint8_t location = u8_at(fb, e[EXTRA_LOCATION], LOCATION_SEGMENT);
    uint64_t mutable_idx = e[EXTRA_MUTABLE_IDX] ? fb_le64(fb->base + e[EXTRA_MUTABLE_IDX]) : 0u;
    const uint8_t *size_bytes = fb->base + sizes.data;
    size_t elem = ptec_dtype_size(scalar_type);
    const char *why = NULL;
    ptec_status status = PTEC_INVALID_PROGRAM;
    memset(tensor, 0, sizeof *tensor);
    if (fb->bad) {
        why = PTEC_MSG("malformed tensor");
    } else if (elem == 0) {
        why = PTEC_MSG("unknown scalar type");
    } else if (!sizes.present || !dim_order.present || sizes.count != dim_order.count) {
        why = PTEC_MSG("tensor sizes and dim_order missing or unequal");
    } else if (((uintptr_t)size_bytes % 4u) != 0) {
        why = PTEC_MSG("tensor sizes are misaligned");
    } else {
        status = PTEC_NOT_SUPPORTED;
        why = storage_offset != 0            ? PTEC_MSG("storage_offset must be 0")
              : dynamism == DYNAMISM_UNBOUND ? PTEC_MSG("dynamic unbound tensor")
              : sizes.count > PTEC_MAX_RANK  ? PTEC_MSG("tensor rank above 16")
              : location == LOCATION_EXTERNAL ? PTEC_MSG("tensor data in an external .ptd file")
              : mutable_idx != 0 ? PTEC_MSG("initial value in a mutable_data_segments entry other than 0")
                                 : NULL;
    }
    if (why != NULL) {
        return value_fail(ctx, status, index, why);
    }
    /* Kernels address elements with int32 strides (kernels/portable/strides.h):
     * the product of the extents with a 0 counted as 1 (the strides' largest,
     * and never below the element count) stays below 2^31. A tensor that
     * large cannot be in a Cortex-M's memory anyway (2 GB of int8). Every
     * factor is below 2^31 and every partial product checked below 2^31, so
     * the products fit 64 bits without a division (a library call on a
     * 32-bit core, once per dim of every tensor). */
    uint64_t numel = 1, span = 1;
    uint32_t seen = 0;
    for (uint32_t d = 0; d < sizes.count; ++d) {
        int32_t extent = (int32_t)fb_le32(size_bytes + 4u * d);
        uint8_t axis = fb->base[dim_order.data + d];
        if (extent >= 0) {
            numel *= (uint64_t)extent;
            span *= extent > 1 ? (uint64_t)extent : 1u;
        }
        if (extent < 0 || axis >= sizes.count || (seen & (1u << axis)) || span > (uint64_t)INT32_MAX) {
            return value_fail(ctx, PTEC_INVALID_PROGRAM, index,
                              PTEC_MSG("bad shape: negative size, 2^31 elements or more, or dim_order not a "
                                       "permutation"));
        }
        seen |= 1u << axis;
    }
    /* numel <= span < 2^31 and elem <= 8: nbytes < 2^34 */
    const uint64_t nbytes = numel * elem;
    if (nbytes > UINT32_MAX) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("tensor too large"));
    }
    tensor->sizes = (const int32_t *)(const void *)size_bytes;
    tensor->dim_order = fb->base + dim_order.data;
    tensor->numel = (uint32_t)numel;
    tensor->nbytes = (uint32_t)nbytes;
    tensor->dtype = scalar_type;
    tensor->rank = (uint8_t)sizes.count;
    tensor->flags = dynamism == DYNAMISM_BOUND ? PTEC_TENSOR_DYNAMIC : 0u;
    if (alloc.pos != 0) {
        ptec_status st = planned_data(ctx, index, &alloc, tensor);
        return st != PTEC_OK || buffer_idx == 0 ? st : initial_data(ctx, index, buffer_idx, tensor, initial);
    }
    /* Neither planned nor constant: memory arrives at run time (inputs,
     * outputs, empty placeholders). */
    return buffer_idx != 0 ? constant_data(ctx, index, buffer_idx, tensor) : PTEC_OK;
}

/* Checks that every item of an index list names an existing value. */
static ptec_status check_index_list(ptec_exec_ctx *ctx, uint32_t index, const fb_vector *items, uint32_t width,
                                    bool allow_none)
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

/* `ev`: value `index`'s EValue table when the caller has read it already
 * (in range: a walk over the values), else NULL. */
static ptec_status value_parse(ptec_exec_ctx *ctx, uint32_t index, const fb_table *ev, ptec_value *out,
                               ptec_tensor *tensor, const uint8_t **initial)
{
    static const uint8_t list_widths[] = {[PTEC_VALUE_STRING] = 1,     [PTEC_VALUE_INT_LIST] = 8,
                                          [PTEC_VALUE_DOUBLE_LIST] = 8, [PTEC_VALUE_BOOL_LIST] = 1,
                                          [PTEC_VALUE_TENSOR_LIST] = 4, [PTEC_VALUE_OPTIONAL_TENSOR_LIST] = 4};
    uint8_t tag = 0;
    fb_table m;
    fb_view *fb = &ctx->fb;
    ptec_status st = ev != NULL ? value_member(ctx, index, ev, &tag, &m) : value_table(ctx, index, &tag, &m);
    if (st != PTEC_OK) {
        return st;
    }
    memset(out, 0, sizeof *out);
    out->kind = tag == PTEC_VALUE_NONE ? (uint8_t)PTEC_VALUE_NULL : tag;
    if (tag > PTEC_VALUE_OPTIONAL_TENSOR_LIST) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("unknown EValue kind"));
    }
    switch (tag) {
    case PTEC_VALUE_NONE:
    case PTEC_VALUE_NULL:
        return PTEC_OK;
    /* Scalars point at their bytes in the program. A field left at its
     * default (or a member table left out) reads as zero. */
    case PTEC_VALUE_INT:
    case PTEC_VALUE_DOUBLE:
    case PTEC_VALUE_BOOL: {
        static const uint8_t zero[8];
        const uint32_t at = payload_at(fb, &m, tag == PTEC_VALUE_BOOL ? 1u : 8u);
        out->u.scalar = at != 0 ? fb->base + at : zero;
        break;
    }
    case PTEC_VALUE_TENSOR:
        out->u.tensor = tensor;
        if (m.pos == 0) {
            break;
        }
        return tensor_parse(ctx, index, &m, tensor, initial);
    default: {
        fb_vector items = ptec_fb_vec_at(fb, payload_at(fb, &m, 4), list_widths[tag]);
        if (items.count > PTEC_MAX_LIST_COUNT) {
            return value_fail(ctx, PTEC_NOT_SUPPORTED, index, PTEC_MSG("list or string longer than 16 M items"));
        }
        out->count = items.count & PTEC_MAX_LIST_COUNT;
        out->u.items = fb->base + items.data;
        if (m.pos == 0 || fb->bad) {
            break;
        }
        if (tag == PTEC_VALUE_INT_LIST || tag == PTEC_VALUE_TENSOR_LIST || tag == PTEC_VALUE_OPTIONAL_TENSOR_LIST) {
            return check_index_list(ctx, index, &items, list_widths[tag], tag == PTEC_VALUE_OPTIONAL_TENSOR_LIST);
        }
        if (tag == PTEC_VALUE_STRING) {
            out->u.string = (const char *)out->u.items;
        }
        break;
    }
    }
    if (fb->bad || (m.pos == 0 && tag >= PTEC_VALUE_TENSOR)) {
        return value_fail(ctx, PTEC_INVALID_PROGRAM, index, PTEC_MSG("malformed or missing EValue payload"));
    }
    return PTEC_OK;
}

ptec_status ptec_value_parse(ptec_exec_ctx *ctx, uint32_t index, ptec_value *out, ptec_tensor *tensor)
{
    const uint8_t *initial = NULL;
    return value_parse(ctx, index, NULL, out, tensor, &initial);
}

ptec_status ptec_value_parse_ev(ptec_exec_ctx *ctx, uint32_t index, const fb_table *ev, ptec_value *out,
                                ptec_tensor *tensor)
{
    const uint8_t *initial = NULL;
    return value_parse(ctx, index, ev, out, tensor, &initial);
}

ptec_status ptec_value_initial(ptec_exec_ctx *ctx, uint32_t index, ptec_value *out, ptec_tensor *tensor,
                               const uint8_t **initial)
{
    *initial = NULL;
    ptec_status st = value_parse(ctx, index, NULL, out, tensor, initial);
    if (st != PTEC_OK) {
        *initial = NULL;
    }
    return st;
}
