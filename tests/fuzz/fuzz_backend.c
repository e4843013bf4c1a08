/* A stand-in "EthosUBackend" for the fuzzer, so programs with delegates get
 * past load: init reads every compile spec and the whole blob, execute reads
 * every tensor argument and writes the writable ones, each by the size the
 * runtime gave it. An argument or blob the runtime bounded wrongly shows as
 * an ASan report here. */
#include <string.h>

#include "ptec/backend.h"
#include "ptec/types.h"

typedef struct fuzz_delegate {
    uint32_t blob_sum;
} fuzz_delegate;

static ptec_status fuzz_init(void *handle, const ptec_delegate_blob *blob)
{
    fuzz_delegate *d = handle;
    d->blob_sum = 0;
    for (size_t i = 0; i < blob->size; ++i) {
        d->blob_sum += blob->data[i];
    }
    for (size_t i = 0; i < blob->spec_count; ++i) {
        const char *key;
        size_t key_len, value_len;
        const uint8_t *value;
        if (ptec_delegate_compile_spec(blob, i, &key, &key_len, &value, &value_len) != PTEC_OK) {
            return PTEC_DELEGATE_INVALID_COMPATIBILITY;
        }
        for (size_t k = 0; k < key_len; ++k) {
            d->blob_sum += (uint8_t)key[k];
        }
        for (size_t v = 0; v < value_len; ++v) {
            d->blob_sum += value[v];
        }
    }
    return PTEC_OK;
}

static ptec_status fuzz_execute(void *handle, ptec_value *const *argv, size_t argc)
{
    fuzz_delegate *d = handle;
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
            d->blob_sum += bytes[b];
        }
        if (!(t->flags & PTEC_TENSOR_CONSTANT)) {
            memset(bytes, (int)(d->blob_sum & 0x7Fu), t->nbytes);
        }
    }
    return PTEC_OK;
}

static void fuzz_destroy(void *handle)
{
    (void)handle;
}

const ptec_backend ptec_fuzz_ethos_u = {"EthosUBackend", sizeof(fuzz_delegate), fuzz_init, fuzz_execute,
                                        fuzz_destroy};
