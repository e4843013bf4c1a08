/* Program: the file header, the segment table and where constants live.
 * Only ptec_program_init writes a ptec_program; everything else reads it. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

#define HEADER_MAGIC_POS 8u
#define HEADER_MIN_LEN 24u

static ptec_status read_extended_header(ptec_program *p)
{
    const uint8_t *d = p->data;
    p->program_size = p->size;
    p->segment_base = 0;
    p->segment_data_size = 0;
    if (p->size < HEADER_MAGIC_POS + 8u || memcmp(d + HEADER_MAGIC_POS, "eh00", 4) != 0) {
        return PTEC_OK;
    }
    uint32_t len = fb_le32(d + 12);
    if (len < HEADER_MIN_LEN || (uint64_t)p->size < HEADER_MAGIC_POS + (uint64_t)len) {
        return ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, PTEC_MSG("extended header is shorter than 24 bytes or truncated"));
    }
    uint64_t program_size = fb_le64(d + 16);
    p->segment_base = fb_le64(d + 24);
    p->segment_data_size = len >= 32u ? fb_le64(d + 32) : 0u;
    uint64_t needed = program_size;
    if (p->segment_base != 0 || p->segment_data_size != 0) {
        if (p->segment_base < program_size || p->segment_data_size > UINT64_MAX - p->segment_base) {
            return ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, PTEC_MSG("extended header: segments overlap the program"));
        }
        needed = p->segment_base + p->segment_data_size;
    }
    if (program_size < HEADER_MAGIC_POS + (uint64_t)len || program_size > UINT32_MAX) {
        return ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, PTEC_MSG("extended header: bad program_size"));
    }
    if (needed > p->size) {
        ptec_detail_fmt f;
        ptec_detail_begin(&f, &p->error, PTEC_INVALID_PROGRAM, -1, NULL, 0);
        ptec_detail_str(&f, PTEC_MSG("file truncated: header says "));
        ptec_detail_u64(&f, needed);
        ptec_detail_str(&f, PTEC_MSG(" bytes, got "));
        ptec_detail_u64(&f, p->size);
        return ptec_detail_end(&f);
    }
    p->program_size = (size_t)program_size;
    return PTEC_OK;
}

static ptec_status locate_constants(ptec_program *p, fb_view *fb, const fb_table *root)
{
    p->constants = NULL;
    p->constants_size = 0;
    p->constant_offsets = 0;
    p->constant_count = 0;
    fb_table cseg = ptec_fb_sub(fb, root, PROGRAM_CONSTANT_SEGMENT);
    fb_vector offsets = ptec_fb_vec(fb, &cseg, SUBSEGMENT_OFFSETS, 8);
    uint32_t seg_index = ptec_fb_u32(fb, &cseg, SUBSEGMENT_INDEX, 0);
    fb_vector legacy = ptec_fb_vec(fb, root, PROGRAM_CONSTANT_BUFFER, 4);
    if (fb->bad) {
        return ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed constant_segment or constant_buffer"));
    }
    /* One entry is only the placeholder: no constants. None at all means
     * the legacy constant_buffer holds them. */
    if (offsets.count > 1u) {
        ptec_status st = ptec_segment_find(p, seg_index, &p->constants, &p->constants_size, &p->error);
        p->constant_offsets = offsets.data;
        p->constant_count = offsets.count;
        return st;
    }
    if (offsets.count == 0) {
        p->legacy_buffers = legacy.data;
        p->legacy_count = legacy.count;
    }
    return PTEC_OK;
}

/* Initial values of planned tensors (upstream's mutable buffers): entry 0 of
 * mutable_data_segments, the only one upstream's runtime reads. As with
 * constants, offsets[0] is a placeholder, so one entry means none. Each
 * tensor's offset and length are checked against the segment when its value
 * is decoded (value_parse.c). */
static ptec_status locate_mutables(ptec_program *p, fb_view *fb, const fb_table *root)
{
    fb_vector segments = ptec_fb_vec(fb, root, PROGRAM_MUTABLE_DATA_SEGMENTS, 4);
    if (fb->bad || segments.count == 0) {
        return fb->bad ? ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed mutable_data_segments"))
                       : PTEC_OK;
    }
    fb_table first = ptec_fb_at(fb, &segments, 0);
    fb_vector offsets = ptec_fb_vec(fb, &first, SUBSEGMENT_OFFSETS, 8);
    uint32_t seg_index = ptec_fb_u32(fb, &first, SUBSEGMENT_INDEX, 0);
    if (fb->bad) {
        return ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed mutable_data_segments"));
    }
    if (offsets.count <= 1u) {
        return PTEC_OK;
    }
    ptec_status st = ptec_segment_find(p, seg_index, &p->mutables, &p->mutables_size, &p->error);
    if (st == PTEC_OK) {
        p->mutable_offsets = offsets.data;
        p->mutable_count = offsets.count;
    }
    return st;
}

static ptec_status init_checked(ptec_program *p, const void *data, size_t size)
{
    p->data = data;
    p->size = size;
    if (data == NULL || ((uintptr_t)data % PTEC_BUFFER_ALIGN) != 0) {
        return ptec_detail_fail(&p->error, PTEC_INVALID_ARGUMENT, PTEC_MSG("program data must be non-NULL and 16-byte aligned"));
    }
    if (size < 8u || size > UINT32_MAX) {
        return ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, PTEC_MSG("file too small to be a .pte"));
    }
    const uint8_t *d = data;
    if (memcmp(d + 4, "ET12", 4) != 0) {
        return ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, d[4] == 'E' && d[5] == 'T'
                                    ? PTEC_MSG("unsupported .pte schema version (identifier is not ET12)")
                                    : PTEC_MSG("not a .pte file (no ET12 identifier)"));
    }
    ptec_status st = read_extended_header(p);
    if (st != PTEC_OK) {
        return st;
    }
    fb_view fb = ptec_program_fb(p);
    p->root = fb_le32(d);
    fb_table root = ptec_fb_table(&fb, p->root);
    fb_vector plans = ptec_fb_vec(&fb, &root, PROGRAM_EXECUTION_PLAN, 4);
    if (fb.bad || plans.count == 0) {
        return ptec_detail_fail(&p->error, PTEC_INVALID_PROGRAM, PTEC_MSG("no readable method table (truncated or corrupt file)"));
    }
    st = locate_constants(p, &fb, &root);
    return st != PTEC_OK ? st : locate_mutables(p, &fb, &root);
}

ptec_status ptec_program_init(ptec_program *p, const void *data, size_t size)
{
    if (p == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    memset(p, 0, sizeof *p);
    ptec_detail_clear(&p->error);
    ptec_status st = init_checked(p, data, size);
    if (st != PTEC_OK) {
        /* A program that failed init is unusable: every later call sees no
         * data and answers PTEC_INVALID_STATE, keeping this error's detail. */
        p->data = NULL;
    }
    return st;
}

static ptec_status segment_fail(ptec_error_detail *sink, uint32_t index, const char *what)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, sink, PTEC_INVALID_PROGRAM, -1, NULL, 0);
    ptec_detail_str(&f, PTEC_MSG("segment "));
    ptec_detail_u64(&f, index);
    ptec_detail_str(&f, what);
    return ptec_detail_end(&f);
}

ptec_status ptec_segment_find(const ptec_program *p, uint32_t index, const uint8_t **data, size_t *size,
                              ptec_error_detail *sink)
{
    fb_view fb = ptec_program_fb(p);
    fb_table root = ptec_fb_table(&fb, p->root);
    fb_vector segments = ptec_fb_vec(&fb, &root, PROGRAM_SEGMENTS, 4);
    if (!fb.bad && index >= segments.count) {
        return segment_fail(sink, index, PTEC_MSG(" does not exist"));
    }
    fb_table seg = ptec_fb_at(&fb, &segments, index);
    uint64_t offset = ptec_fb_u64(&fb, &seg, SEGMENT_OFFSET, 0);
    uint64_t length = ptec_fb_u64(&fb, &seg, SEGMENT_SIZE, 0);
    uint64_t start = p->segment_base + offset;
    if (fb.bad || p->segment_base == 0 || offset > p->size || start > p->size || length > p->size - start) {
        return segment_fail(sink, index, PTEC_MSG(" lies outside the file"));
    }
    *data = p->data + start;
    *size = (size_t)length;
    return PTEC_OK;
}

/* The execution plans, or a bad view. */
static fb_vector plans_of(const ptec_program *p, fb_view *fb)
{
    *fb = ptec_program_fb(p);
    fb_table root = ptec_fb_table(fb, p->data != NULL ? p->root : 0u);
    return ptec_fb_vec(fb, &root, PROGRAM_EXECUTION_PLAN, 4);
}

size_t ptec_program_method_count(const ptec_program *p)
{
    if (p == NULL) {
        return 0;
    }
    fb_view fb;
    fb_vector plans = plans_of(p, &fb);
    return fb.bad ? 0 : plans.count;
}

ptec_status ptec_program_method_name(const ptec_program *p, size_t index, const char **name, size_t *name_len)
{
    if (p == NULL || name == NULL || name_len == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (p->data == NULL) {
        return PTEC_INVALID_STATE;
    }
    fb_view fb;
    fb_vector plans = plans_of(p, &fb);
    if (!fb.bad && index >= plans.count) {
        return PTEC_NOT_FOUND;
    }
    fb_table plan = ptec_fb_at(&fb, &plans, (uint32_t)index);
    uint32_t len;
    *name = ptec_fb_str(&fb, &plan, PLAN_NAME, &len);
    *name_len = len;
    return fb.bad ? PTEC_INVALID_PROGRAM : PTEC_OK;
}

ptec_status ptec_plan_find(const ptec_program *p, const char *name, fb_table *plan, uint32_t *index,
                           ptec_error_detail *sink)
{
    fb_view fb;
    fb_vector plans = plans_of(p, &fb);
    const char *wanted = name != NULL ? name : "forward";
    size_t wanted_len = strlen(wanted);
    for (uint32_t i = 0; i < plans.count && !fb.bad; ++i) {
        uint32_t len;
        *plan = ptec_fb_at(&fb, &plans, i);
        const char *s = ptec_fb_str(&fb, plan, PLAN_NAME, &len);
        if (!fb.bad && len == wanted_len && memcmp(s, wanted, len) == 0) {
            if (index != NULL) {
                *index = i;
            }
            return PTEC_OK;
        }
    }
    if (fb.bad) {
        return ptec_detail_fail(sink, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed execution plan"));
    }
    if (name == NULL && plans.count > 0) {
        *plan = ptec_fb_at(&fb, &plans, 0);
        if (index != NULL) {
            *index = 0;
        }
        return PTEC_OK;
    }
    ptec_detail_fmt f;
    ptec_detail_begin(&f, sink, PTEC_NOT_FOUND, -1, NULL, 0);
    ptec_detail_str(&f, PTEC_MSG("no method named '"));
    ptec_detail_str(&f, wanted);
    ptec_detail_str(&f, PTEC_MSG("'"));
    return ptec_detail_end(&f);
}
