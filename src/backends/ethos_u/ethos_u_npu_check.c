/* The compile-spec check: the NPU a blob was compiled for against the one
 * this build drives. Upstream's runtime checks nothing here and leaves it to
 * the driver, which on a mismatch fails the invoke with -1; ptec refuses the
 * load instead, naming both NPUs (docs/ethos-u.md, "The delegate").
 *
 * The `target` compile spec names the NPU; the COP1 OPTIMIZER_CONFIG word is
 * what the driver checks. Both are read when both are there, and must agree. */
#include <string.h>

#include "backends/ethos_u/ethos_u_npu.h"
#include "ptec/config.h"
#include "ptec/ethos_u.h"

#define BUILD_NPU PTEC_ETHOSU_TARGET

typedef struct known_npu {
    const char *name;
    uint32_t config;      /* the CONFIG word Vela writes for it (ethos-u-npu.md §2) */
    const char *mismatch; /* the load error for a blob compiled for it */
} known_npu;

/* The messages are literals (a failure detail must outlive the call), made
 * by the preprocessor for each pair of this build's NPU and another. */
#define NPU(name, config) {name, config, "blob is for " name ", this build drives " BUILD_NPU}
static const known_npu known[] = {
    NPU("ethos-u55-32", 0x00001005u),  NPU("ethos-u55-64", 0x00001006u),  NPU("ethos-u55-128", 0x00001807u),
    NPU("ethos-u55-256", 0x00003008u), NPU("ethos-u65-256", 0x10003008u), NPU("ethos-u65-512", 0x10006009u),
};
#undef NPU
#define KNOWN_COUNT (sizeof known / sizeof known[0])

static const known_npu *find_by_name(const char *name, size_t len)
{
    for (size_t i = 0; i < KNOWN_COUNT; ++i) {
        if (strlen(known[i].name) == len && memcmp(known[i].name, name, len) == 0) {
            return &known[i];
        }
    }
    return NULL;
}

static const known_npu *build_npu(void)
{
    return find_by_name(BUILD_NPU, strlen(BUILD_NPU));
}

const char *ptec_ethos_u_target_name(void)
{
    const known_npu *npu = build_npu();
    return npu != NULL ? npu->name : NULL;
}

uint32_t ptec_ethos_u_target_config(void)
{
    const known_npu *npu = build_npu();
    return npu != NULL ? npu->config : 0u;
}

/* product and MACs/cycle: the variant a stream is for. */
static int same_variant(uint32_t a, uint32_t b)
{
    return PTEC_NPU_CONFIG_PRODUCT(a) == PTEC_NPU_CONFIG_PRODUCT(b) && PTEC_NPU_CONFIG_MACS(a) == PTEC_NPU_CONFIG_MACS(b);
}

static const known_npu *find_by_variant(uint32_t config)
{
    for (size_t i = 0; i < KNOWN_COUNT; ++i) {
        if (same_variant(known[i].config, config)) {
            return &known[i];
        }
    }
    return NULL;
}

/* The `target` compile spec, or NULL/0 when the blob has none. */
static ptec_status target_spec(const ptec_delegate_blob *blob, const char **value, size_t *len)
{
    *value = NULL;
    *len = 0;
    for (size_t i = 0; i < blob->spec_count; ++i) {
        const char *key;
        size_t key_len, value_len;
        const uint8_t *bytes;
        ptec_status st = ptec_delegate_compile_spec(blob, i, &key, &key_len, &bytes, &value_len);
        if (st != PTEC_OK) {
            return st;
        }
        if (key_len == 6 && memcmp(key, "target", 6) == 0) {
            *value = (const char *)bytes;
            *len = value_len;
        }
    }
    return PTEC_OK;
}

ptec_status ptec_ethos_u_check_npu(const ptec_delegate_blob *blob, uint32_t config, const char **detail)
{
    const known_npu *mine = build_npu();
    if (mine == NULL) {
        *detail = "this build's PTEC_ETHOSU_TARGET (" BUILD_NPU ") is not an NPU the backend knows";
        return PTEC_DELEGATE_INVALID_COMPATIBILITY;
    }
    const char *target;
    size_t target_len;
    if (target_spec(blob, &target, &target_len) != PTEC_OK) {
        *detail = "a compile spec lies outside the program";
        return PTEC_INVALID_PROGRAM;
    }
    if (target != NULL) {
        const known_npu *theirs = find_by_name(target, target_len);
        if (theirs == NULL) {
            *detail = "blob's target spec is no U55/U65 NPU, this build drives " BUILD_NPU;
            return PTEC_DELEGATE_INVALID_COMPATIBILITY;
        }
        if (theirs != mine) {
            *detail = theirs->mismatch;
            return PTEC_DELEGATE_INVALID_COMPATIBILITY;
        }
        if (!same_variant(config, theirs->config)) {
            *detail = "the target compile spec and the COP1 config word name different NPUs";
            return PTEC_INVALID_PROGRAM;
        }
    }
    /* The driver's own rule (ethos-u-npu.md §2): product, MACs and command
     * stream version must equal the hardware's, custom DMA must exist. */
    if (!same_variant(config, mine->config)) {
        const known_npu *theirs = find_by_variant(config);
        *detail = theirs != NULL ? theirs->mismatch
                                 : "blob is for an unknown NPU (COP1 config word), this build drives " BUILD_NPU;
        return PTEC_DELEGATE_INVALID_COMPATIBILITY;
    }
    if (PTEC_NPU_CONFIG_STREAM_VERSION(config) != PTEC_NPU_CONFIG_STREAM_VERSION(mine->config)) {
        *detail = "blob's command stream version (COP1 config word) is not the one " BUILD_NPU " runs";
        return PTEC_DELEGATE_INVALID_COMPATIBILITY;
    }
    if (PTEC_NPU_CONFIG_CUSTOM_DMA(config) && !PTEC_NPU_CONFIG_CUSTOM_DMA(mine->config)) {
        *detail = "blob needs custom DMA (COP1 config word), which " BUILD_NPU " lacks";
        return PTEC_DELEGATE_INVALID_COMPATIBILITY;
    }
    /* Stricter than the driver, which lets any SHRAM size pass: Vela sizes
     * its blocks and places the LUT by the SHRAM it was told of, so a stream
     * planned for more SHRAM than the NPU has would overrun it. Less is safe. */
    if (PTEC_NPU_CONFIG_SHRAM_KIB(config) > PTEC_NPU_CONFIG_SHRAM_KIB(mine->config)) {
        *detail = "blob was planned for more SHRAM (COP1 config word) than " BUILD_NPU " has";
        return PTEC_DELEGATE_INVALID_COMPATIBILITY;
    }
    return PTEC_OK;
}
