/* libFuzzer's custom mutator for .pte files. Random bytes rarely make a
 * flatbuffer the loader accepts far enough to reach its later checks, so most
 * mutations parse the file, list its meaningful fields (sizes, dims, indices,
 * offsets, counts, vector lengths, segment and header fields) and give one
 * of them a value chosen to sit on a boundary: 0, 1, one past a count, the
 * distance to the end of the file, the largest values of its width, a value
 * copied from another field. The rest are libFuzzer's own byte mutations.
 *
 * The walk uses the runtime's bounds-checked accessors only to find fields;
 * what the mutator writes is never checked by them. */
#include <stdint.h>
#include <string.h>

#include "runtime/flatbuffer.h"
#include "runtime/pte_schema.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* KernelTypes union tags (program.fbs order, from 1). */
enum { KT_INT = 2, KT_TENSOR = 5, KT_INT_LIST = 7, KT_TENSOR_LIST = 10, KT_OPTIONAL_TENSOR_LIST = 11 };
enum { FIELDS_MAX = 4096, ELEMENTS_MAX = 64 };

typedef struct field_ref {
    uint32_t pos;
    uint8_t width;
} field_ref;

typedef struct field_list {
    fb_view fb;
    field_ref items[FIELDS_MAX];
    uint32_t count;
} field_list;

static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 33);
}

static void add_at(field_list *l, uint32_t pos, uint8_t width)
{
    if (l->count < FIELDS_MAX && pos != 0 && (uint64_t)pos + width <= l->fb.size) {
        l->items[l->count].pos = pos;
        l->items[l->count].width = width;
        ++l->count;
    }
}

static void add_field(field_list *l, const fb_table *t, unsigned id, uint8_t width)
{
    const uint8_t *p = ptec_fb_field_bytes(&l->fb, t, id, width);
    if (p != NULL) {
        add_at(l, (uint32_t)(p - l->fb.base), width);
    }
}

/* A vector: its length word, and its first elements when they are numbers. */
static fb_vector add_vec(field_list *l, const fb_table *t, unsigned id, uint32_t elem_size, int elements)
{
    fb_vector v = ptec_fb_vec(&l->fb, t, id, elem_size);
    if (v.present) {
        add_at(l, v.data - 4u, 4);
        for (uint32_t i = 0; elements && i < v.count && i < ELEMENTS_MAX; ++i) {
            add_at(l, v.data + i * elem_size, (uint8_t)elem_size);
        }
    }
    return v;
}

static void walk_tensor(field_list *l, const fb_table *t)
{
    add_field(l, t, TENSOR_SCALAR_TYPE, 1);
    add_field(l, t, TENSOR_STORAGE_OFFSET, 4);
    add_vec(l, t, TENSOR_SIZES, 4, 1);
    add_vec(l, t, TENSOR_DIM_ORDER, 1, 1);
    add_field(l, t, TENSOR_DATA_BUFFER_IDX, 4);
    add_field(l, t, TENSOR_SHAPE_DYNAMISM, 1);
    fb_table extra = ptec_fb_sub(&l->fb, t, TENSOR_EXTRA_INFO);
    add_field(l, &extra, EXTRA_MUTABLE_IDX, 8);
    fb_table alloc = ptec_fb_sub(&l->fb, t, TENSOR_ALLOCATION_INFO);
    add_field(l, &alloc, ALLOC_MEMORY_ID, 4);
    add_field(l, &alloc, ALLOC_OFFSET_LOW, 4);
    add_field(l, &alloc, ALLOC_OFFSET_HIGH, 4);
}

static void walk_values(field_list *l, const fb_table *plan)
{
    fb_vector values = add_vec(l, plan, PLAN_VALUES, 4, 0);
    for (uint32_t i = 0; i < values.count && !l->fb.bad && l->count < FIELDS_MAX; ++i) {
        fb_table ev = ptec_fb_at(&l->fb, &values, i);
        const uint8_t type = ptec_fb_u8(&l->fb, &ev, EVALUE_TYPE, 0);
        add_field(l, &ev, EVALUE_TYPE, 1);
        fb_table val = ptec_fb_sub(&l->fb, &ev, EVALUE_VAL);
        if (type == KT_TENSOR) {
            walk_tensor(l, &val);
        } else if (type == KT_INT) {
            add_field(l, &val, 0, 8);
        } else if (type == KT_INT_LIST) {
            add_vec(l, &val, 0, 8, 1);
        } else if (type == KT_TENSOR_LIST || type == KT_OPTIONAL_TENSOR_LIST) {
            add_vec(l, &val, 0, 4, 1);
        }
    }
}

static void walk_instructions(field_list *l, const fb_table *plan)
{
    fb_vector chains = add_vec(l, plan, PLAN_CHAINS, 4, 0);
    for (uint32_t c = 0; c < chains.count && c < 4u && !l->fb.bad; ++c) {
        fb_table chain = ptec_fb_at(&l->fb, &chains, c);
        add_vec(l, &chain, CHAIN_INPUTS, 4, 1);
        add_vec(l, &chain, CHAIN_OUTPUTS, 4, 1);
        fb_vector instrs = add_vec(l, &chain, CHAIN_INSTRUCTIONS, 4, 0);
        for (uint32_t i = 0; i < instrs.count && !l->fb.bad && l->count < FIELDS_MAX; ++i) {
            fb_table ins = ptec_fb_at(&l->fb, &instrs, i);
            add_field(l, &ins, INSTRUCTION_TYPE, 1);
            fb_table args = ptec_fb_sub(&l->fb, &ins, INSTRUCTION_ARGS);
            add_field(l, &args, 0, 4); /* op index, delegate index, move from, jump cond, free value */
            add_field(l, &args, 1, 4); /* move to, jump destination */
            const uint8_t type = ptec_fb_u8(&l->fb, &ins, INSTRUCTION_TYPE, 0);
            if (type == INSTR_KERNEL_CALL || type == INSTR_DELEGATE_CALL) {
                add_vec(l, &args, 1, 4, 1);
            }
        }
    }
}

static void walk_delegates(field_list *l, const fb_table *plan)
{
    fb_vector delegates = add_vec(l, plan, PLAN_DELEGATES, 4, 0);
    for (uint32_t i = 0; i < delegates.count && i < 8u && !l->fb.bad; ++i) {
        fb_table d = ptec_fb_at(&l->fb, &delegates, i);
        add_vec(l, &d, DELEGATE_ID, 1, 0);
        fb_table processed = ptec_fb_sub(&l->fb, &d, DELEGATE_PROCESSED);
        add_field(l, &processed, DATAREF_LOCATION, 1);
        add_field(l, &processed, DATAREF_INDEX, 4);
        fb_vector specs = add_vec(l, &d, DELEGATE_COMPILE_SPECS, 4, 0);
        for (uint32_t s = 0; s < specs.count && s < 8u && !l->fb.bad; ++s) {
            fb_table spec = ptec_fb_at(&l->fb, &specs, s);
            add_vec(l, &spec, COMPILE_SPEC_KEY, 1, 0);
            add_vec(l, &spec, COMPILE_SPEC_VALUE, 1, 0);
        }
    }
}

static void walk_program(field_list *l)
{
    const fb_view *fb = &l->fb;
    if (fb->size >= 40u && memcmp(fb->base + 8, "eh00", 4) == 0) {
        add_at(l, 12, 4); /* header length, program size, segment base, segment data size */
        add_at(l, 16, 8);
        add_at(l, 24, 8);
        add_at(l, 32, 8);
    }
    if (fb->size < 8u) {
        return;
    }
    add_at(l, 0, 4);
    fb_table root = ptec_fb_table(&l->fb, fb_le32(fb->base));
    fb_vector plans = add_vec(l, &root, PROGRAM_EXECUTION_PLAN, 4, 0);
    for (uint32_t p = 0; p < plans.count && p < 2u && !l->fb.bad; ++p) {
        fb_table plan = ptec_fb_at(&l->fb, &plans, p);
        add_vec(l, &plan, PLAN_INPUTS, 4, 1);
        add_vec(l, &plan, PLAN_OUTPUTS, 4, 1);
        add_vec(l, &plan, PLAN_NON_CONST_BUFFER_SIZES, 8, 1);
        fb_vector ops = add_vec(l, &plan, PLAN_OPERATORS, 4, 0);
        for (uint32_t i = 0; i < ops.count && i < 16u && !l->fb.bad; ++i) {
            fb_table op = ptec_fb_at(&l->fb, &ops, i);
            add_vec(l, &op, OPERATOR_NAME, 1, 0);
        }
        walk_delegates(l, &plan);
        walk_instructions(l, &plan);
        walk_values(l, &plan);
    }
    l->fb.bad = false;
    fb_vector buffers = add_vec(l, &root, PROGRAM_CONSTANT_BUFFER, 4, 0);
    for (uint32_t i = 0; i < buffers.count && i < 32u && !l->fb.bad; ++i) {
        fb_table b = ptec_fb_at(&l->fb, &buffers, i);
        add_vec(l, &b, BUFFER_STORAGE, 1, 0);
    }
    fb_vector inline_data = add_vec(l, &root, PROGRAM_DELEGATE_DATA, 4, 0);
    for (uint32_t i = 0; i < inline_data.count && i < 8u && !l->fb.bad; ++i) {
        fb_table d = ptec_fb_at(&l->fb, &inline_data, i);
        add_vec(l, &d, INLINE_DATA_DATA, 1, 0);
    }
    fb_vector segments = add_vec(l, &root, PROGRAM_SEGMENTS, 4, 0);
    for (uint32_t i = 0; i < segments.count && i < 8u && !l->fb.bad; ++i) {
        fb_table s = ptec_fb_at(&l->fb, &segments, i);
        add_field(l, &s, SEGMENT_OFFSET, 8);
        add_field(l, &s, SEGMENT_SIZE, 8);
    }
    fb_table constants = ptec_fb_sub(&l->fb, &root, PROGRAM_CONSTANT_SEGMENT);
    add_field(l, &constants, SUBSEGMENT_INDEX, 4);
    add_vec(l, &constants, SUBSEGMENT_OFFSETS, 8, 1);
    /* Initial values of state tensors: upstream reads entry 0 only. */
    fb_vector mutables = add_vec(l, &root, PROGRAM_MUTABLE_DATA_SEGMENTS, 4, 0);
    for (uint32_t i = 0; i < mutables.count && i < 2u && !l->fb.bad; ++i) {
        fb_table m = ptec_fb_at(&l->fb, &mutables, i);
        add_field(l, &m, SUBSEGMENT_INDEX, 4);
        add_vec(l, &m, SUBSEGMENT_OFFSETS, 8, 1);
    }
}

static uint64_t load_width(const uint8_t *p, uint8_t width)
{
    uint64_t v = 0;
    memcpy(&v, p, width); /* little-endian host, as the runtime */
    return v;
}

static void store_width(uint8_t *p, uint8_t width, uint64_t v)
{
    memcpy(p, &v, width);
}

/* A boundary value for a field of `width` bytes at `pos` holding `v`. */
static uint64_t boundary_value(const field_list *l, const field_ref *f, uint64_t v)
{
    const unsigned bits = 8u * f->width;
    const uint64_t max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1u;
    const uint64_t sign = UINT64_C(1) << (bits - 1u);
    switch (rng() % 14u) {
    case 0: return 0;
    case 1: return 1;
    case 2: return v + 1u;
    case 3: return v - 1u;
    case 4: return v + (rng() % 33u) - 16u;
    case 5: return max;                    /* -1 */
    case 6: return sign - 1u;              /* the largest signed value */
    case 7: return sign;                   /* the smallest signed value */
    case 8: return v * 2u;
    case 9: return (uint64_t)l->fb.size - f->pos; /* as an offset: exactly to the end */
    case 10: return (uint64_t)l->fb.size - f->pos + 1u;
    case 11: return UINT64_C(1) << (rng() % bits);
    case 12: return (uint64_t)0x7FFFFFFFu / ((rng() % 8u) + 1u) + 1u; /* products that reach 2^31 */
    default: {                             /* another field's value: a valid index elsewhere */
        const field_ref *other = &l->items[rng() % l->count];
        return load_width(l->fb.base + other->pos, other->width);
    }
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    static field_list list;
    rng_state = seed;
    if (rng() % 4u == 0u || size < 8u || size > UINT32_MAX) {
        return LLVMFuzzerMutate(data, size, max_size);
    }
    list.fb.base = data;
    list.fb.size = (uint32_t)size;
    list.fb.bad = false;
    list.count = 0;
    walk_program(&list);
    if (list.count == 0) {
        return LLVMFuzzerMutate(data, size, max_size);
    }
    /* One to three field changes, now and then followed by a byte mutation. */
    const uint32_t changes = 1u + rng() % 3u;
    for (uint32_t i = 0; i < changes; ++i) {
        const field_ref *f = &list.items[rng() % list.count];
        uint8_t *p = data + f->pos;
        store_width(p, f->width, boundary_value(&list, f, load_width(p, f->width)));
    }
    if (rng() % 8u == 0u) {
        return LLVMFuzzerMutate(data, size, max_size);
    }
    return size;
}
