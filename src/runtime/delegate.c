/* Delegate queries for backends and tools (the ptec_delegates library):
 * ptec_delegate_locate, which the load also uses, is the core's
 * (delegate_hook.c). */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

ptec_status ptec_program_delegate(const ptec_program *p, const char *method_name, size_t index,
                                  const char **backend_id, size_t *backend_id_len, ptec_delegate_blob *blob)
{
    fb_table plan;
    uint32_t id_len = 0;
    if (p == NULL || backend_id == NULL || backend_id_len == NULL || blob == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (p->data == NULL) {
        return PTEC_INVALID_STATE; /* init failed or never ran; its detail stays */
    }
    ptec_status st = ptec_plan_find(p, method_name, &plan, NULL, NULL);
    if (st != PTEC_OK) {
        return st;
    }
    fb_view fb = ptec_program_fb(p);
    fb_vector delegates = ptec_fb_vec(&fb, &plan, PLAN_DELEGATES, 4);
    if (!fb.bad && index >= delegates.count) {
        return PTEC_NOT_FOUND;
    }
    fb_table delegate = ptec_fb_at(&fb, &delegates, (uint32_t)index);
    if (fb.bad) {
        return PTEC_INVALID_PROGRAM;
    }
    st = ptec_delegate_locate(p, &delegate, backend_id, &id_len, blob, NULL);
    *backend_id_len = id_len;
    return st;
}

ptec_status ptec_delegate_compile_spec(const ptec_delegate_blob *blob, size_t i, const char **key,
                                       size_t *key_len, const uint8_t **value, size_t *value_len)
{
    if (blob == NULL || i >= blob->spec_count) {
        return PTEC_NOT_FOUND;
    }
    fb_view fb = {blob->program, (uint32_t)blob->program_size, false};
    fb_vector specs = {(uint32_t)(blob->specs - blob->program), blob->spec_count, true};
    fb_table spec = ptec_fb_at(&fb, &specs, (uint32_t)i);
    uint32_t klen;
    *key = ptec_fb_str(&fb, &spec, COMPILE_SPEC_KEY, &klen);
    fb_vector bytes = ptec_fb_vec(&fb, &spec, COMPILE_SPEC_VALUE, 1);
    *key_len = klen;
    *value = bytes.count ? fb.base + bytes.data : NULL;
    *value_len = bytes.count;
    return fb.bad ? PTEC_INVALID_PROGRAM : PTEC_OK;
}
