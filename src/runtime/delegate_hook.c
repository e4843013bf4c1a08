/* The core's side of delegate support: the load reaches the ptec_delegates
 * library (method_delegates.c) only through ptec_delegate_hook, which the
 * backend table sets when it lists a backend. Without it, a plan with no
 * delegate loads as before, and one with delegates fails at its first
 * delegate exactly as it did when the build had delegate support but not
 * that backend: a malformed entry or blob as InvalidProgram, otherwise
 * NotFound naming the backend. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

/* Delegate blobs: found inline in the flatbuffer or in a segment. */
ptec_status ptec_delegate_locate(const ptec_program *p, const fb_table *delegate, const char **id, uint32_t *id_len,
                                 ptec_delegate_blob *blob, ptec_error_detail *sink)
{
    fb_view fb = ptec_program_fb(p);
    memset(blob, 0, sizeof *blob);
    *id = ptec_fb_str(&fb, delegate, DELEGATE_ID, id_len);
    fb_vector specs = ptec_fb_vec(&fb, delegate, DELEGATE_COMPILE_SPECS, 4);
    fb_table ref = ptec_fb_sub(&fb, delegate, DELEGATE_PROCESSED);
    uint8_t location = ptec_fb_u8(&fb, &ref, DATAREF_LOCATION, DATA_INLINE);
    uint32_t index = ptec_fb_u32(&fb, &ref, DATAREF_INDEX, 0);
    if (fb.bad || ref.pos == 0 || location > DATA_SEGMENT) {
        return ptec_detail_fail(sink, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed delegate entry"));
    }
    blob->specs = specs.count ? fb.base + specs.data : NULL;
    blob->spec_count = specs.count;
    blob->program = fb.base;
    blob->program_size = fb.size;
    if (location == DATA_SEGMENT) {
        return ptec_segment_find(p, index, &blob->data, &blob->size, sink);
    }
    fb_table root = ptec_fb_table(&fb, p->root);
    fb_vector inline_data = ptec_fb_vec(&fb, &root, PROGRAM_DELEGATE_DATA, 4);
    fb_table entry = ptec_fb_at(&fb, &inline_data, index);
    fb_vector bytes = ptec_fb_vec(&fb, &entry, INLINE_DATA_DATA, 1);
    if (fb.bad) {
        return ptec_detail_fail(sink, PTEC_INVALID_PROGRAM, PTEC_MSG("inline delegate data missing or malformed"));
    }
    blob->data = fb.base + bytes.data;
    blob->size = bytes.count;
    return PTEC_OK;
}

ptec_status ptec_delegate_missing(ptec_exec_ctx *ctx, const char *id, uint32_t id_len, uint32_t index,
                                  size_t blob_size)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, ctx->error, PTEC_NOT_FOUND, -1, NULL, 0);
    ptec_detail_str(&f, PTEC_MSG("backend "));
    ptec_detail_strn(&f, id, id_len);
    ptec_detail_str(&f, PTEC_MSG(" not available in this build (delegate "));
    ptec_detail_u64(&f, index);
    ptec_detail_str(&f, PTEC_MSG(", "));
    ptec_detail_u64(&f, blob_size);
    ptec_detail_str(&f, PTEC_MSG("-byte blob)"));
    return ptec_detail_end(&f);
}

ptec_status ptec_delegates_load(ptec_exec_ctx *ctx, ptec_meta_arena *meta, fb_vector *delegates,
                                ptec_delegate_ctx **out, size_t *scratch)
{
    if (ptec_delegate_hook != NULL) {
        return ptec_delegate_hook->load(ctx, meta, delegates, out, scratch);
    }
    *out = NULL;
    *delegates = ptec_fb_vec(&ctx->fb, &ctx->plan, PLAN_DELEGATES, 4);
    if (delegates->count == 0) {
        return PTEC_OK;
    }
    const char *id;
    uint32_t id_len;
    ptec_delegate_blob blob;
    fb_table entry = ptec_fb_at(&ctx->fb, delegates, 0);
    if (ctx->fb.bad) {
        return ptec_detail_fail(ctx->error, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed delegate entry"));
    }
    ptec_status st = ptec_delegate_locate(ctx->program, &entry, &id, &id_len, &blob, ctx->error);
    return st != PTEC_OK ? st : ptec_delegate_missing(ctx, id, id_len, 0, blob.size);
}

void ptec_delegates_destroy(ptec_delegate_ctx *delegates, uint32_t count)
{
    if (delegates != NULL && ptec_delegate_hook != NULL) {
        ptec_delegate_hook->destroy(delegates, count);
    }
}
