/* A method's delegates (include/ptec/backend.h has the contract). The
 * requirements pass finds each delegate's backend and adds what its prepare()
 * reports to the method's needs; the load repeats that walk, places each
 * delegate's persistent bytes in the metadata region, hands it its share of
 * scratch and fast scratch and the planned buffers, and calls init().
 * Library ptec_delegates, not the core: the core calls it through
 * ptec_delegate_hook, which a backend table listing any backend sets. */
#include <string.h>

#include "runtime/pte_schema.h"
#include "runtime/runtime_internal.h"

/* "backend X delegate i: " outside an instruction; detail_begin already
 * names the instruction and the backend inside one. */
static void delegate_prefix(ptec_detail_fmt *f, const ptec_exec_ctx *ctx, const char *backend, uint32_t index)
{
    if (ctx->instruction < 0) {
        ptec_detail_str(f, PTEC_MSG("backend "));
        ptec_detail_str(f, backend);
        ptec_detail_str(f, " ");
    }
    ptec_detail_str(f, PTEC_MSG("delegate "));
    ptec_detail_u64(f, index);
    ptec_detail_str(f, ": ");
}

ptec_status ptec_delegate_fail(ptec_delegate_ctx *d, ptec_status status, const char *message)
{
    if (d == NULL || d->exec == NULL || d->backend == NULL) {
        return status;
    }
    ptec_exec_ctx *ctx = d->exec;
    ptec_detail_fmt f;
    ptec_detail_begin(&f, ctx->error, status, ctx->instruction, d->backend->name,
                      (uint32_t)strlen(d->backend->name));
    delegate_prefix(&f, ctx, d->backend->name, d->index);
    ptec_detail_str(&f, message);
    return ptec_detail_end(&f);
}

/* A hook failed: keep the backend's own detail when it gave one. */
static ptec_status hook_fail(ptec_exec_ctx *ctx, const ptec_delegate_ctx *d, ptec_status status, const char *what)
{
    if (ctx->error->status == status && status != PTEC_OK) {
        return status;
    }
    ptec_detail_fmt f;
    ptec_detail_begin(&f, ctx->error, status, -1, NULL, 0);
    ptec_detail_str(&f, PTEC_MSG("backend "));
    ptec_detail_str(&f, d->backend->name);
    ptec_detail_str(&f, what);
    ptec_detail_u64(&f, d->index);
    return ptec_detail_end(&f);
}

static ptec_region share(const ptec_region *method_region, size_t bytes)
{
    ptec_region r = {bytes > 0 ? method_region->base : NULL, bytes};
    return r;
}

/* Load only: gives delegate d the memory prepare asked for, then init(). */
static ptec_status start(ptec_exec_ctx *ctx, ptec_delegate_ctx *d, const ptec_delegate_needs *needs,
                         uint8_t *persistent)
{
    /* The regions were checked against the measured needs; a prepare that
     * now asks for more broke its contract (it must be deterministic). */
    if (needs->scratch_bytes > ctx->scratch.size || needs->fast_scratch_bytes > ctx->fast_scratch.size) {
        return hook_fail(ctx, d, PTEC_INTERNAL, PTEC_MSG(" asked for more scratch at load than it was measured with, delegate "));
    }
    d->persistent.base = needs->persistent_bytes > 0 ? persistent : NULL;
    d->persistent.size = needs->persistent_bytes;
    if (d->persistent.base != NULL) {
        memset(d->persistent.base, 0, d->persistent.size);
    }
    d->scratch = share(&ctx->scratch, needs->scratch_bytes);
    d->fast_scratch = share(&ctx->fast_scratch, needs->fast_scratch_bytes);
    ptec_status st = d->backend->init != NULL ? d->backend->init(d) : PTEC_OK;
    return st != PTEC_OK ? hook_fail(ctx, d, st, PTEC_MSG(" refused delegate ")) : PTEC_OK;
}

static void delegates_destroy(ptec_delegate_ctx *delegates, uint32_t count);

static ptec_status delegates_load(ptec_exec_ctx *ctx, ptec_meta_arena *meta, fb_vector *delegates,
                                  ptec_delegate_ctx **out, size_t *scratch)
{
    *out = NULL;
    *delegates = ptec_fb_vec(&ctx->fb, &ctx->plan, PLAN_DELEGATES, 4);
    ptec_delegate_ctx *placed = ptec_meta_take(meta, delegates->count, sizeof(ptec_delegate_ctx));
    for (uint32_t i = 0; i < delegates->count; ++i) {
        const char *id;
        uint32_t id_len;
        ptec_delegate_ctx temp;
        ptec_delegate_ctx *d = placed != NULL ? &placed[i] : &temp;
        memset(d, 0, sizeof *d);
        fb_table entry = ptec_fb_at(&ctx->fb, delegates, i);
        if (ctx->fb.bad) {
            delegates_destroy(placed, i);
            return ptec_detail_fail(ctx->error, PTEC_INVALID_PROGRAM, PTEC_MSG("malformed delegate entry"));
        }
        ptec_status st = ptec_delegate_locate(ctx->program, &entry, &id, &id_len, &d->blob, ctx->error);
        d->backend = st == PTEC_OK ? ptec_backend_find(id, id_len) : NULL;
        if (st == PTEC_OK && d->backend == NULL) {
            st = ptec_delegate_missing(ctx, id, id_len, i, d->blob.size);
        }
        d->index = i;
        d->planned = ctx->planned;
        d->planned_count = ctx->planned_count;
        d->exec = ctx;
        ptec_delegate_needs needs = {0, 0, 0};
        if (st == PTEC_OK && d->backend->prepare != NULL && (st = d->backend->prepare(d, &needs)) != PTEC_OK) {
            st = hook_fail(ctx, d, st, PTEC_MSG(" could not prepare delegate "));
        }
        uint8_t *persistent = NULL;
        if (st == PTEC_OK && needs.persistent_bytes > 0) {
            persistent = ptec_meta_take_aligned(meta, needs.persistent_bytes, PTEC_BUFFER_ALIGN);
        }
        if (st == PTEC_OK && placed != NULL && meta->overflow) {
            /* The metadata region ran out (the program changed since it was
             * measured): no delegate starts without its memory. */
            st = ptec_detail_fail(ctx->error, PTEC_MEMORY_ALLOCATION_FAILED, PTEC_MSG("metadata buffer too small"));
        }
        if (st == PTEC_OK && placed != NULL) {
            st = start(ctx, d, &needs, persistent);
        }
        if (st != PTEC_OK) {
            /* The method never records a half-built delegate table: undo the
             * ones that did start. */
            delegates_destroy(placed, i);
            return st;
        }
        *scratch = needs.scratch_bytes > *scratch ? needs.scratch_bytes : *scratch;
        if (needs.fast_scratch_bytes > ctx->fast_scratch_bytes) {
            ctx->fast_scratch_bytes = needs.fast_scratch_bytes;
        }
    }
    *out = placed;
    return PTEC_OK;
}

static void delegates_destroy(ptec_delegate_ctx *delegates, uint32_t count)
{
    for (uint32_t k = count; delegates != NULL && k > 0; --k) {
        ptec_delegate_ctx *d = &delegates[k - 1u];
        if (d->backend != NULL && d->backend->destroy != NULL) {
            d->backend->destroy(d);
        }
    }
}

/* What the core calls through ptec_delegate_hook (runtime_internal.h). */
const struct ptec_delegate_support ptec_delegate_support = {delegates_load, delegates_destroy};
