/* COP1, the driver's input (spec §2): the FourCC, OPTIMIZER_CONFIG records
 * checked against the NPU as ethosu_dev_verify_optimizer_config does, NOPs,
 * and exactly one COMMAND_STREAM. Also the NPU configurations Vela names. */
#include <string.h>

#include "npu_internal.h"

#define COP_FOURCC 0x31504F43u /* "COP1" */
#define COP_ACTION_OPTIMIZER_CONFIG 1u
#define COP_ACTION_COMMAND_STREAM 2u
#define COP_ACTION_NOP 5u

/* The ID every configuration reports: arch 1.0.6, what Vela 3.x streams
 * carry (X: both Vela oracles; the minimal example's 0x10066001 is 1.0.6 too). */
#define NPU_MODEL_ID 0x10060000u

static const struct {
    const char *name;
    ptec_npu_hw hw;
} hw_configs[] = {
    /* config words: Vela's (spec §2); shram_kib: one core's SHRAM (§4.1) */
    {"ethos-u55-32", {PTEC_NPU_PRODUCT_U55, 5u, 16u, 0x00001005u, NPU_MODEL_ID}},
    {"ethos-u55-64", {PTEC_NPU_PRODUCT_U55, 6u, 16u, 0x00001006u, NPU_MODEL_ID}},
    {"ethos-u55-128", {PTEC_NPU_PRODUCT_U55, 7u, 24u, 0x00001807u, NPU_MODEL_ID}},
    {"ethos-u55-256", {PTEC_NPU_PRODUCT_U55, 8u, 48u, 0x00003008u, NPU_MODEL_ID}},
    {"ethos-u65-256", {PTEC_NPU_PRODUCT_U65, 8u, 48u, 0x10003008u, NPU_MODEL_ID}},
    {"ethos-u65-512", {PTEC_NPU_PRODUCT_U65, 9u, 48u, 0x10006009u, NPU_MODEL_ID}},
};

int ptec_npu_hw_from_name(const char *name, ptec_npu_hw *out)
{
    if (name == NULL || out == NULL) {
        return -1;
    }
    for (size_t i = 0; i < sizeof(hw_configs) / sizeof(hw_configs[0]); i++) {
        if (strcmp(name, hw_configs[i].name) == 0) {
            *out = hw_configs[i].hw;
            return 0;
        }
    }
    return -1;
}

int npu_cop_config_ok(const ptec_npu_hw *hw, uint32_t config, uint32_t id)
{
    uint32_t hw_config = hw->config;
    int ok = 1;
    if (config != hw_config) {
        /* product [31:28], macs_per_cc [3:0], cmd_stream_version [7:4] must
         * match; custom_dma [27] may be absent from the stream only. */
        ok &= (config >> 28) == (hw_config >> 28);
        ok &= (config & 0xFu) == (hw_config & 0xFu);
        ok &= ((config >> 4) & 0xFu) == ((hw_config >> 4) & 0xFu);
        ok &= !(((config >> 27) & 1u) && !((hw_config >> 27) & 1u));
    }
    /* arch_major [31:28] equal, hardware arch_minor [27:20] >= the stream's */
    ok &= (id >> 28) == (hw->id >> 28);
    ok &= ((hw->id >> 20) & 0xFFu) >= ((id >> 20) & 0xFFu);
    return ok ? 0 : -1;
}

static uint32_t load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Walks the records once; hw NULL skips the config check. */
static int cop_parse(const ptec_npu_hw *hw, const void *cop, size_t cop_size, const uint32_t **stream,
                     size_t *stream_words, const char **detail)
{
    const uint8_t *bytes = (const uint8_t *)cop;
    if (cop == NULL || cop_size < 4u || cop_size % 4u != 0u) {
        *detail = "COP data missing, shorter than 4 bytes or not a multiple of 4";
        return -1;
    }
    if (load_u32(bytes) != COP_FOURCC) {
        *detail = "COP data does not start with COP1";
        return -1;
    }
    size_t words = cop_size / 4u;
    size_t pos = 1;
    int streams = 0;
    while (pos < words) {
        uint32_t header = load_u32(bytes + pos * 4u);
        uint32_t action = header & 0xFFu;
        if (action == COP_ACTION_OPTIMIZER_CONFIG) {
            if (words - pos < 3u) {
                *detail = "COP OPTIMIZER_CONFIG record is truncated";
                return -1;
            }
            if (hw != NULL && npu_cop_config_ok(hw, load_u32(bytes + (pos + 1u) * 4u),
                                                load_u32(bytes + (pos + 2u) * 4u)) != 0) {
                *detail = "the stream was compiled for another NPU configuration";
                return -1;
            }
            pos += 3u;
        } else if (action == COP_ACTION_COMMAND_STREAM) {
            /* length in words: [15:8] << 16 | [31:16] */
            size_t length = (size_t)((header >> 8) & 0xFFu) << 16 | (header >> 16);
            if (length > words - pos - 1u) {
                *detail = "COP COMMAND_STREAM record is longer than the COP data";
                return -1;
            }
            streams++;
            *stream = (const uint32_t *)(const void *)(bytes + (pos + 1u) * 4u);
            *stream_words = length;
            pos += 1u + length;
        } else if (action == COP_ACTION_NOP) {
            pos += 1u;
        } else {
            *detail = "COP record with an unknown driver action";
            return -1;
        }
    }
    if (streams != 1) {
        *detail = streams == 0 ? "COP data has no COMMAND_STREAM" : "COP data has several COMMAND_STREAMs";
        return -1;
    }
    return 0;
}

int ptec_npu_cop_check(const ptec_npu_hw *hw, const void *cop, size_t cop_size, const uint32_t **stream,
                       size_t *stream_words, const char **detail)
{
    const char *why = NULL;
    const uint32_t *found = NULL;
    size_t words = 0;
    if (cop_parse(hw, cop, cop_size, &found, &words, &why) != 0) {
        if (detail != NULL) {
            *detail = why;
        }
        return -1;
    }
    *stream = found;
    *stream_words = words;
    return 0;
}

int ptec_npu_model_run_cop(ptec_npu_model *m, const void *cop, size_t cop_size, const uint64_t *base,
                           const size_t *base_size, int base_count)
{
    const char *detail = NULL;
    const uint32_t *stream = NULL;
    size_t words = 0;
    if (cop_parse(&m->hw, cop, cop_size, &stream, &words, &detail) != 0) {
        memset(&m->stats, 0, sizeof(m->stats));
        memset(&m->fault, 0, sizeof(m->fault));
        return npu_fault_parse(m, detail);
    }
    if (((uintptr_t)stream & 3u) != 0u) {
        memset(&m->fault, 0, sizeof(m->fault));
        return npu_fault_parse(m, "command stream is not word aligned");
    }
    return ptec_npu_model_run(m, stream, words, base, base_size, base_count);
}
