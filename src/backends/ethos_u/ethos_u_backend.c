/* EthosUBackend: runs upstream ExecuTorch's Ethos-U delegate blobs through
 * Arm's NPU driver API (spec ethos-u-delegate.md §3, §4.3), the way
 * upstream's Cortex-M backend does, on the backend contract of
 * include/ptec/backend.h:
 *   prepare  parse and check the blob, check the NPU it was compiled for;
 *            ask for the handle (persistent), the NPU work area (scratch,
 *            region 1) and the build's fast scratch (region 2);
 *   init     keep the parsed view of the blob (pointers into it);
 *   execute  copy inputs into the work area, invoke the NPU on
 *            {weights, work area, fast scratch}, copy outputs back. */
#include <string.h>

#include "backends/ethos_u/ethos_u_backend.h"
#include "backends/ethos_u/ethos_u_driver_api.h"
#include "backends/ethos_u/ethos_u_io.h"
#include "backends/ethos_u/ethos_u_npu.h"
#include "backends/ethos_u/vela_blob.h"
#include "ptec/backend.h"
#include "ptec/config.h"
#include "ptec/ethos_u.h"

#define REGION_ALIGN 16u /* the driver refuses base addresses off 16 bytes */
#define BASE_COUNT 3      /* region 0 weights, 1 work area, 2 fast scratch */

typedef struct ethos_u_handle {
    ptec_vela_blob blob;
    char message[PTEC_DETAIL_LEN]; /* a failure's detail when it carries numbers */
} ethos_u_handle;

const size_t ptec_ethos_u_persistent_bytes = sizeof(ethos_u_handle);

__attribute__((weak)) void ptec_ethos_u_call_done(const ptec_ethos_u_call *call)
{
    (void)call;
}

static ptec_status parse(ptec_delegate_ctx *ctx, ptec_vela_blob *blob)
{
    const char *detail;
    ptec_status st = ptec_vela_blob_parse(ctx->blob.data, ctx->blob.size, blob, &detail);
    if (st == PTEC_OK) {
        st = ptec_ethos_u_check_npu(&ctx->blob, blob->cop.config, &detail);
    }
    return st == PTEC_OK ? PTEC_OK : ptec_delegate_fail(ctx, st, detail);
}

static ptec_status ethos_u_prepare(ptec_delegate_ctx *ctx, ptec_delegate_needs *needs)
{
    ptec_vela_blob blob;
    ptec_status st = parse(ctx, &blob);
    if (st != PTEC_OK) {
        return st;
    }
    uint32_t fast;
    const char *detail;
    st = ptec_ethos_u_fast_scratch_spec(&ctx->blob, &fast, &detail);
    if (st != PTEC_OK) {
        return ptec_delegate_fail(ctx, st, detail);
    }
    /* The build's fast scratch (a Vela blob's region 2 is sized by hand) or
     * what ptec's compiler wrote, whichever is more. scratch_size and the
     * spec are u32 and the build constant a u32 literal: no rounding can
     * wrap a size_t of 32 bits or more. */
    const uint32_t build_fast = PTEC_ETHOSU_FAST_SCRATCH_BYTES;
    if (build_fast > fast) {
        fast = build_fast;
    }
    needs->persistent_bytes = ptec_ethos_u_persistent_bytes;
    needs->scratch_bytes = ((size_t)blob.scratch_size + (REGION_ALIGN - 1u)) & ~(size_t)(REGION_ALIGN - 1u);
    needs->fast_scratch_bytes = ((size_t)fast + (REGION_ALIGN - 1u)) & ~(size_t)(REGION_ALIGN - 1u);
    return PTEC_OK;
}

static int aligned(const void *p)
{
    return ((uintptr_t)p & (REGION_ALIGN - 1u)) == 0;
}

static ptec_status ethos_u_init(ptec_delegate_ctx *ctx)
{
    ethos_u_handle *h = (ethos_u_handle *)(void *)ctx->persistent.base;
    if (h == NULL || ctx->persistent.size < sizeof *h) {
        return ptec_delegate_fail(ctx, PTEC_INTERNAL, "handle memory missing");
    }
    ptec_status st = parse(ctx, &h->blob);
    if (st != PTEC_OK) {
        return st;
    }
    if (ctx->scratch.size < h->blob.scratch_size || !aligned(ctx->scratch.base) || !aligned(ctx->fast_scratch.base)) {
        return ptec_delegate_fail(ctx, PTEC_MEMORY_ALLOCATION_FAILED,
                                  "NPU work area smaller than scratch_size or not 16-byte aligned");
    }
    uint32_t fast;
    const char *detail;
    st = ptec_ethos_u_fast_scratch_spec(&ctx->blob, &fast, &detail);
    if (st != PTEC_OK) {
        return ptec_delegate_fail(ctx, st, detail);
    }
    if (ctx->fast_scratch.size < fast) {
        return ptec_delegate_fail(ctx, PTEC_MEMORY_ALLOCATION_FAILED,
                                  "fast scratch smaller than the blob's ptec_fast_scratch_bytes");
    }
    return PTEC_OK;
}

/* A tiny formatter for the one message with numbers (no stdio here). */
static size_t put(char *buf, size_t len, const char *s)
{
    while (*s != '\0' && len + 1u < PTEC_DETAIL_LEN) {
        buf[len++] = *s++;
    }
    buf[len] = '\0';
    return len;
}

static size_t put_number(char *buf, size_t len, uint64_t v, int hex)
{
    char digits[24];
    size_t n = 0;
    const unsigned base = hex ? 16u : 10u;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v != 0);
    if (hex) {
        len = put(buf, len, "0x");
    }
    while (n > 0 && len + 1u < PTEC_DETAIL_LEN) {
        buf[len++] = digits[--n];
    }
    buf[len] = '\0';
    return len;
}

/* "ethosu_invoke_v3 = -1", and what the model saw. */
static ptec_status driver_failed(ptec_delegate_ctx *ctx, ethos_u_handle *h, int rc, const ptec_ethos_u_npu_report *r,
                                 int have_report)
{
    size_t len = put(h->message, 0, "ethosu_invoke_v3 = ");
    if (rc < 0) {
        len = put(h->message, len, "-");
    }
    len = put_number(h->message, len, rc < 0 ? (uint64_t)0 - (uint64_t)(int64_t)rc : (uint64_t)rc, 0);
    if (have_report && r->fault != NULL) {
        /* The numbers first: a long fault text is what the detail cuts. */
        len = put(h->message, len, " at command ");
        len = put_number(h->message, len, r->command_index, 0);
        len = put(h->message, len, " (QREAD ");
        len = put_number(h->message, len, r->qread, 1);
        len = put(h->message, len, ", STATUS ");
        len = put_number(h->message, len, r->status, 1);
        len = put(h->message, len, "): ");
        (void)put(h->message, len, r->fault);
    }
    return ptec_delegate_fail(ctx, PTEC_INVALID_PROGRAM, h->message);
}

static ptec_status invoke(ptec_delegate_ctx *ctx, ethos_u_handle *h)
{
    const ptec_vela_blob *b = &h->blob;
    uint32_t product, log2_macs;
    if (ethosu_get_product_config_from_cop_data(b->cmd_data, (int)b->cmd_size, &product, &log2_macs) != 0) {
        return ptec_delegate_fail(ctx, PTEC_INVALID_PROGRAM,
                                  "ethosu_get_product_config_from_cop_data refused cmd_data");
    }
    /* A fresh array per call: the driver may write base_addr[2]. */
    uint64_t base[BASE_COUNT] = {(uint64_t)(uintptr_t)b->weight_data, (uint64_t)(uintptr_t)ctx->scratch.base,
                                 (uint64_t)(uintptr_t)ctx->fast_scratch.base};
    const size_t base_size[BASE_COUNT] = {b->weight_size, b->scratch_size, ctx->fast_scratch.size};
    struct ethosu_driver *drv = ethosu_reserve_driver_ex(product, log2_macs);
    const int rc = ethosu_invoke_v3(drv, b->cmd_data, (int)b->cmd_size, base, base_size, BASE_COUNT, NULL);
    ethosu_release_driver(drv);

    ptec_ethos_u_npu_report report;
    memset(&report, 0, sizeof report);
    const int have_report = ptec_ethos_u_npu_last_report(&report) == 0;
    ptec_ethos_u_call call = {ctx->index, rc, have_report, report.commands, report.dma_bytes, report.macs};
    ptec_ethos_u_call_done(&call);
    return rc == 0 ? PTEC_OK : driver_failed(ctx, h, rc, &report, have_report);
}

static ptec_status ethos_u_execute(ptec_delegate_ctx *ctx, ptec_value *const *argv, size_t argc)
{
    ethos_u_handle *h = (ethos_u_handle *)(void *)ctx->persistent.base;
    const ptec_vela_blob *b = &h->blob;
    const size_t nin = b->inputs.count;
    if (argc != nin + b->outputs.count) {
        return ptec_delegate_fail(ctx, PTEC_INVALID_ARGUMENT,
                                  "argument count differs from the blob's inputs plus outputs");
    }
    for (size_t i = 0; i < argc; ++i) {
        if (argv[i]->kind != PTEC_VALUE_TENSOR) {
            return ptec_delegate_fail(ctx, PTEC_INVALID_TYPE, "an argument is not a tensor");
        }
    }
    const char *detail;
    ptec_vela_io io;
    for (uint32_t i = 0; i < b->inputs.count; ++i) {
        ptec_vela_io_at(&b->inputs, i, &io);
        ptec_status st = ptec_ethos_u_copy_input(ctx->scratch.base, b->scratch_size, &io, argv[i]->u.tensor, &detail);
        if (st != PTEC_OK) {
            return ptec_delegate_fail(ctx, st, detail);
        }
    }
    ptec_status st = invoke(ctx, h);
    for (uint32_t i = 0; st == PTEC_OK && i < b->outputs.count; ++i) {
        ptec_vela_io_at(&b->outputs, i, &io);
        st = ptec_ethos_u_copy_output(ctx->scratch.base, b->scratch_size, &io, argv[nin + i]->u.tensor, &detail);
        if (st != PTEC_OK) {
            return ptec_delegate_fail(ctx, st, detail);
        }
    }
    return st;
}

const ptec_backend ptec_backend_ethos_u = {"EthosUBackend", ethos_u_prepare, ethos_u_init, ethos_u_execute, NULL};
