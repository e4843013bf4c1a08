/* Delegate blobs: found inline in the flatbuffer or in a segment. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

ptec_status ptec_delegate_locate(ptec_program *p, const fb_table *delegate, const char **id, uint32_t *id_len,
                          ptec_delegate_blob *blob)
{
    fb_view fb = program_fb(p);
    fb_table ref, root;
    fb_vector specs;
    bool has_ref;
    uint8_t location;
    uint32_t index;
    memset(blob, 0, sizeof *blob);
    if (!ptec_fb_string(&fb, delegate, DELEGATE_ID, id, id_len) ||
        !ptec_fb_vec(&fb, delegate, DELEGATE_COMPILE_SPECS, 4, &specs) ||
        !ptec_fb_subtable(&fb, delegate, DELEGATE_PROCESSED, &ref, &has_ref) || !has_ref ||
        !ptec_fb_u8(&fb, &ref, DATAREF_LOCATION, DATA_INLINE, &location) ||
        !ptec_fb_u32(&fb, &ref, DATAREF_INDEX, 0, &index) || !ptec_fb_table_at(&fb, p->root, &root)) {
        return ptec_detail_fail(p, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed delegate entry"));
    }
    blob->specs = specs.count ? fb.base + specs.data : NULL;
    blob->spec_count = specs.count;
    blob->program = fb.base;
    blob->program_size = fb.size;
    if (location == DATA_SEGMENT) {
        return ptec_segment_find(p, index, &blob->data, &blob->size);
    }
    if (location != DATA_INLINE) {
        return ptec_detail_fail(p, PTEC_INVALID_PROGRAM, PTEC_MSG("delegate data location is neither inline nor segment"));
    }
    fb_vector inline_data, bytes;
    fb_table entry;
    if (!ptec_fb_vec(&fb, &root, PROGRAM_DELEGATE_DATA, 4, &inline_data) || index >= inline_data.count ||
        !ptec_fb_vec_table(&fb, &inline_data, index, &entry) || !ptec_fb_vec(&fb, &entry, INLINE_DATA_DATA, 1, &bytes)) {
        return ptec_detail_fail(p, PTEC_INVALID_PROGRAM, PTEC_MSG("inline delegate data missing or malformed"));
    }
    blob->data = fb.base + bytes.data;
    blob->size = bytes.count;
    return PTEC_OK;
}

ptec_status ptec_program_delegate(ptec_program *p, const char *method_name, size_t index,
                                  const char **backend_id, size_t *backend_id_len, ptec_delegate_blob *blob)
{
    fb_table plan, delegate;
    fb_vector delegates;
    uint32_t id_len;
    if (p == NULL || backend_id == NULL || backend_id_len == NULL || blob == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    fb_view fb = program_fb(p);
    ptec_status st = ptec_plan_find(p, method_name, &plan);
    if (st != PTEC_OK) {
        return st;
    }
    if (!ptec_fb_vec(&fb, &plan, PLAN_DELEGATES, 4, &delegates)) {
        return ptec_detail_fail(p, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed delegates table"));
    }
    if (index >= delegates.count) {
        return PTEC_NOT_FOUND;
    }
    if (!ptec_fb_vec_table(&fb, &delegates, (uint32_t)index, &delegate)) {
        return ptec_detail_fail(p, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed delegate entry"));
    }
    st = ptec_delegate_locate(p, &delegate, backend_id, &id_len, blob);
    *backend_id_len = id_len;
    return st;
}

ptec_status ptec_delegate_compile_spec(const ptec_delegate_blob *blob, size_t i, const char **key,
                                       size_t *key_len, const uint8_t **value, size_t *value_len)
{
    if (blob == NULL || i >= blob->spec_count) {
        return PTEC_NOT_FOUND;
    }
    fb_view fb = {blob->program, (uint32_t)blob->program_size};
    fb_vector specs = {(uint32_t)(blob->specs - blob->program), blob->spec_count, true};
    fb_table spec;
    fb_vector bytes;
    const char *k;
    uint32_t klen;
    if (!ptec_fb_vec_table(&fb, &specs, (uint32_t)i, &spec) || !ptec_fb_string(&fb, &spec, COMPILE_SPEC_KEY, &k, &klen) ||
        !ptec_fb_vec(&fb, &spec, COMPILE_SPEC_VALUE, 1, &bytes)) {
        return PTEC_INVALID_PROGRAM;
    }
    *key = k;
    *key_len = klen;
    *value = bytes.count ? fb.base + bytes.data : NULL;
    *value_len = bytes.count;
    return PTEC_OK;
}
