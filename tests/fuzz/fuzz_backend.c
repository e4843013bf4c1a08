/* A stand-in "EthosUBackend" for the fuzzer, so programs with delegates get
 * past load and exercise the backend contract (include/ptec/backend.h):
 * prepare asks for persistent, scratch and fast-scratch bytes derived from
 * the blob (so mutations vary them), init and execute write every byte of
 * each region, read the whole blob and every compile spec, read every tensor
 * argument and write the writable ones, each by the size the runtime gave
 * it. A region, blob or argument the runtime bounded wrongly shows as an
 * ASan report here. */
#include <string.h>

#include "ptec/backend.h"
#include "ptec/types.h"

static uint32_t blob_sum(const ptec_delegate_ctx *ctx)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < ctx->blob.size; ++i) {
        sum += ctx->blob.data[i];
    }
    return sum;
}

static ptec_status fuzz_prepare(ptec_delegate_ctx *ctx, ptec_delegate_needs *needs)
{
    const uint32_t sum = blob_sum(ctx);
    needs->persistent_bytes = 16u + sum % 256u;
    needs->scratch_bytes = ctx->blob.size % 512u;
    needs->fast_scratch_bytes = (sum >> 8) % 2u ? 64u : 0u;
    return PTEC_OK;
}

static void fill(const ptec_region *r, uint8_t value)
{
    if (r->size > 0) {
        memset(r->base, value, r->size);
    }
}

static ptec_status fuzz_init(ptec_delegate_ctx *ctx)
{
    uint32_t sum = blob_sum(ctx);
    for (size_t i = 0; i < ctx->blob.spec_count; ++i) {
        const char *key;
        size_t key_len, value_len;
        const uint8_t *value;
        if (ptec_delegate_compile_spec(&ctx->blob, i, &key, &key_len, &value, &value_len) != PTEC_OK) {
            return ptec_delegate_fail(ctx, PTEC_DELEGATE_INVALID_COMPATIBILITY, "compile spec out of bounds");
        }
        for (size_t k = 0; k < key_len; ++k) {
            sum += (uint8_t)key[k];
        }
        for (size_t v = 0; v < value_len; ++v) {
            sum += value[v];
        }
    }
    for (uint32_t i = 0; i < ctx->planned_count; ++i) {
        fill(&ctx->planned[i], (uint8_t)sum);
    }
    fill(&ctx->persistent, (uint8_t)sum);
    fill(&ctx->scratch, 0x5A);
    fill(&ctx->fast_scratch, 0xA5);
    return PTEC_OK;
}

static ptec_status fuzz_execute(ptec_delegate_ctx *ctx, ptec_value *const *argv, size_t argc)
{
    uint8_t sum = ctx->persistent.size > 0 ? ctx->persistent.base[ctx->persistent.size - 1u] : 0u;
    fill(&ctx->scratch, sum);
    fill(&ctx->fast_scratch, sum);
    for (size_t i = 0; i < argc; ++i) {
        if (argv[i]->kind != PTEC_VALUE_TENSOR) {
            continue;
        }
        ptec_tensor *t = argv[i]->u.tensor;
        uint8_t *bytes = t->data;
        if (bytes == NULL) {
            continue;
        }
        for (uint32_t b = 0; b < t->nbytes; ++b) {
            sum = (uint8_t)(sum + bytes[b]);
        }
        if (!(t->flags & PTEC_TENSOR_CONSTANT)) {
            memset(bytes, sum & 0x7Fu, t->nbytes);
        }
    }
    return PTEC_OK;
}

static void fuzz_destroy(ptec_delegate_ctx *ctx)
{
    fill(&ctx->persistent, 0);
}

const ptec_backend ptec_fuzz_ethos_u = {"EthosUBackend", fuzz_prepare, fuzz_init, fuzz_execute, fuzz_destroy};
