/* The core's side of delegate support: the load reaches the ptec_delegates
 * library (method_delegates.c) only through ptec_delegate_hook, which the
 * backend table sets when it lists a backend. Without it, a plan with no
 * delegate loads as before and one with delegates is refused, naming the
 * first delegate's backend. */
#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

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
    uint32_t id_len = 0;
    fb_table entry = ptec_fb_at(&ctx->fb, delegates, 0);
    const char *id = ptec_fb_str(&ctx->fb, &entry, DELEGATE_ID, &id_len);
    if (ctx->fb.bad) {
        return ptec_detail_fail(ctx->error, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed delegate entry"));
    }
    ptec_detail_fmt f;
    ptec_detail_begin(&f, ctx->error, PTEC_NOT_FOUND, -1, NULL, 0);
    ptec_detail_str(&f, PTEC_MSG("backend "));
    ptec_detail_strn(&f, id, id_len);
    ptec_detail_str(&f, PTEC_MSG(" not available in this build (delegate 0; built without delegate support)"));
    return ptec_detail_end(&f);
}

void ptec_delegates_destroy(ptec_delegate_ctx *delegates, uint32_t count)
{
    if (delegates != NULL && ptec_delegate_hook != NULL) {
        ptec_delegate_hook->destroy(delegates, count);
    }
}
