/* Oracle (spec §8.1): upstream's ethos_u_minimal_example.pte, an int8 Add
 * compiled by Vela for the ethos-u55-128, run through the driver API of the
 * direct model (ethosu_invoke_v3) for all 65,536 int8 input pairs against
 * out = ((in0 + in1 + 257) >> 1) - 128.
 *
 * The test finds the delegate blob in the .pte and walks its vela_bin_stream
 * blocks itself (spec ethos-u-delegate.md §2), sharing no code with the
 * delegate or the model. Also: the driver's refusals (wrong product or MACs,
 * bad COP data, misaligned bases, fast memory), its hook order, and
 * ethosu_get_hw_info / ethosu_get_product_config_from_cop_data. */
#include "driver_direct.h"
#include "npu_model.h"
#include "test_util.h"

/* ---- hooks: strong definitions replace the model's weak ones ---- */
static char hook_log[256];
static void log_hook(const char *s)
{
    if (strlen(hook_log) + strlen(s) + 1 < sizeof(hook_log)) {
        strcat(hook_log, s);
        strcat(hook_log, " ");
    }
}
void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr)
{
    (void)base_addr;
    (void)base_addr_size;
    (void)num_base_addr;
    log_hook("flush");
}
void ethosu_invalidate_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr)
{
    (void)base_addr;
    (void)base_addr_size;
    (void)num_base_addr;
    log_hook("invalidate");
}
static void *begin_arg;
void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    begin_arg = user_arg;
    log_hook("begin");
}
void ethosu_inference_end(struct ethosu_driver *drv, void *user_arg)
{
    (void)drv;
    (void)user_arg;
    log_hook("end");
}
uint64_t ethosu_address_remap(uint64_t address, int index)
{
    log_hook(index < 0 ? "remap-1" : index == 0 ? "remap0" : index == 1 ? "remap1" : "remapN");
    return address;
}

/* ---- the blob ---- */
typedef struct {
    const uint8_t *cmd;
    size_t cmd_size;
    const uint8_t *weights;
    size_t weight_size;
    uint32_t scratch_size;
    uint32_t input_offset[2];
    uint32_t output_offset;
} blob;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Walks the blocks from "vela_bin_stream" to "vela_end_stream". */
static int parse_blob(const uint8_t *start, size_t avail, blob *b)
{
    size_t pos = 0;
    memset(b, 0, sizeof(*b));
    while (pos + 32u <= avail) {
        const char *name = (const char *)start + pos;
        uint32_t size = le32(start + pos + 16u);
        const uint8_t *payload = start + pos + 32u;
        if (size > avail - pos - 32u) {
            return -1;
        }
        if (strncmp(name, "cmd_data", 16) == 0) {
            b->cmd = payload;
            b->cmd_size = size;
        } else if (strncmp(name, "weight_data", 16) == 0) {
            b->weights = payload;
            b->weight_size = size;
        } else if (strncmp(name, "scratch_size", 16) == 0 && size == 4u) {
            b->scratch_size = le32(payload);
        } else if (strncmp(name, "inputs", 16) == 0 && size >= 4u + 2u * 36u && le32(payload) == 2u) {
            b->input_offset[0] = le32(payload + 4u + 28u);
            b->input_offset[1] = le32(payload + 4u + 36u + 28u);
        } else if (strncmp(name, "outputs", 16) == 0 && size >= 4u + 36u && le32(payload) == 1u) {
            b->output_offset = le32(payload + 4u + 28u);
        } else if (strncmp(name, "vela_end_stream", 16) == 0) {
            return b->cmd != NULL ? 0 : -1;
        }
        pos += 32u + ((size + 15u) & ~(size_t)15u);
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_npu_minimal_example ethos_u_minimal_example.pte\n");
        return 2;
    }
    size_t file_size;
    uint8_t *file = test_read_file(argv[1], &file_size);
    /* The blob is stored inline: find its first block's name. Copy it to an
     * aligned buffer so every payload is 16-byte aligned. */
    const uint8_t *found = NULL;
    for (size_t i = 0; i + 16u <= file_size; i++) {
        if (memcmp(file + i, "vela_bin_stream", 16) == 0) {
            found = file + i;
            break;
        }
    }
    CHECK(found != NULL);
    if (found == NULL) {
        return 1;
    }
    size_t blob_avail = file_size - (size_t)(found - file);
    uint8_t *blob_copy = test_alloc(blob_avail);
    memcpy(blob_copy, found, blob_avail);
    blob b;
    CHECK(parse_blob(blob_copy, blob_avail, &b) == 0);
    /* facts of spec §8.1 */
    CHECK(b.cmd_size == 908u && b.weight_size == 32u && b.scratch_size == 144u);
    CHECK(b.input_offset[0] == 64u && b.input_offset[1] == 16u && b.output_offset == 0u);
    if (test_failures) {
        return 1;
    }

    uint32_t product = 9, log2_macs = 9;
    CHECK(ethosu_get_product_config_from_cop_data(b.cmd, (int)b.cmd_size, &product, &log2_macs) == 0);
    CHECK(product == 0u && log2_macs == 7u);
    CHECK(ethosu_get_product_config_from_cop_data(b.cmd, 2, &product, &log2_macs) == -1);
    CHECK(ethosu_get_product_config_from_cop_data(b.cmd + 4, 8, &product, &log2_macs) == -1);

    ptec_npu_hw hw;
    CHECK(ptec_npu_hw_from_name("ethos-u55-128", &hw) == 0);
    ptec_npu_model_configure(&hw);
    struct ethosu_hw_info info;
    ethosu_get_hw_info(NULL, &info);
    CHECK(info.cfg.macs_per_cc == 7u && info.cfg.cmd_stream_version == 0u && info.cfg.custom_dma == 0u);
    CHECK(info.version.arch_major_rev == 1u && info.version.arch_minor_rev == 0u && info.version.arch_patch_rev == 6u);
    CHECK(ethosu_reserve_driver_ex(1, 7) == NULL && ethosu_reserve_driver_ex(0, 8) == NULL);
    struct ethosu_driver *drv = ethosu_reserve_driver_ex(0, 7);
    CHECK(drv != NULL);
    ethosu_release_driver(drv);
    drv = ethosu_reserve_driver();
    CHECK(drv != NULL);

    uint8_t *scratch = test_alloc(b.scratch_size);
    uint64_t base[3];
    size_t base_size[3] = {b.weight_size, b.scratch_size, 0};
    int mismatches = 0;
    for (int in0 = -128; in0 <= 127; in0++) {
        for (int in1 = -128; in1 <= 127; in1++) {
            memset(scratch, 0x5A, b.scratch_size);
            scratch[b.input_offset[0]] = (uint8_t)(int8_t)in0;
            scratch[b.input_offset[1]] = (uint8_t)(int8_t)in1;
            base[0] = (uint64_t)(uintptr_t)b.weights;
            base[1] = (uint64_t)(uintptr_t)scratch;
            base[2] = 0;
            int rc = ethosu_invoke_v3(drv, b.cmd, (int)b.cmd_size, base, base_size, 3, NULL);
            int expected = ((in0 + in1 + 257) >> 1) - 128;
            if (rc != 0 || (int8_t)scratch[b.output_offset] != expected) {
                if (mismatches++ < 5) {
                    const ptec_npu_fault *f = ptec_npu_model_fault(ptec_npu_model_driver_state());
                    fprintf(stderr, "in %d %d: rc %d out %d expected %d (fault at command %u: %s)\n", in0, in1,
                            rc, (int8_t)scratch[b.output_offset], expected, f->command_index,
                            f->detail ? f->detail : "-");
                }
            }
        }
    }
    CHECK(mismatches == 0);
    printf("all 65536 pairs: %d mismatches\n", mismatches);

    /* what the run did (spec §8.1: 153 commands, 6 DMAs of 1 byte, 6 ops) */
    ptec_npu_stats stats;
    CHECK(ptec_ethos_u_last_call_stats(&stats) == 0);
    CHECK(stats.commands == 153u && stats.dma_count == 6u && stats.dma_bytes == 6u && stats.operations == 6u &&
          stats.macs == 0u);

    /* hook order, as Arm's driver calls them */
    hook_log[0] = '\0';
    int marker;
    CHECK(ethosu_invoke_v3(drv, b.cmd, (int)b.cmd_size, base, base_size, 2, &marker) == 0);
    CHECK(strcmp(hook_log, "flush begin remap-1 remap0 remap1 invalidate end ") == 0);
    CHECK(begin_arg == &marker);

    /* refusals: each -1 before any hook runs */
    hook_log[0] = '\0';
    CHECK(ethosu_invoke_v3(NULL, b.cmd, (int)b.cmd_size, base, base_size, 2, NULL) == -1);
    CHECK(ethosu_invoke_v3(drv, NULL, (int)b.cmd_size, base, base_size, 2, NULL) == -1);
    CHECK(ethosu_invoke_v3(drv, b.cmd, (int)b.cmd_size - 2, base, base_size, 2, NULL) == -1);
    CHECK(ethosu_invoke_v3(drv, b.cmd, 0, base, base_size, 2, NULL) == -1);
    CHECK(ethosu_invoke_v3(drv, b.cmd + 4, (int)b.cmd_size - 4, base, base_size, 2, NULL) == -1);
    base[1] += 8; /* misaligned base */
    CHECK(ethosu_invoke_v3(drv, b.cmd, (int)b.cmd_size, base, base_size, 2, NULL) == -1);
    base[1] -= 8;
    CHECK(hook_log[0] == '\0');

    /* wrong product or MACs: -1 (the OPTIMIZER_CONFIG check) */
    const char *others[] = {"ethos-u55-64", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512", "ethos-u55-32"};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        ptec_npu_hw other;
        CHECK(ptec_npu_hw_from_name(others[i], &other) == 0);
        ptec_npu_model_configure(&other);
        CHECK(ethosu_invoke_v3(drv, b.cmd, (int)b.cmd_size, base, base_size, 2, NULL) == -1);
        const ptec_npu_fault *f = ptec_npu_model_fault(ptec_npu_model_driver_state());
        CHECK(f->detail != NULL && (f->status & PTEC_NPU_STATUS_CMD_PARSE_ERROR));
    }
    ptec_npu_model_configure(&hw);

    /* a scratch region cut at 80 bytes: the stream's DMA to offset 80 faults */
    size_t short_size[2] = {b.weight_size, 80};
    CHECK(ethosu_invoke_v3(drv, b.cmd, (int)b.cmd_size, base, short_size, 2, NULL) == -1);
    CHECK(ptec_npu_model_fault(ptec_npu_model_driver_state())->status & PTEC_NPU_STATUS_BUS_STATUS);

    /* fast memory: base_addr[2] is replaced; too small a fast memory is -1 */
    static uint8_t fast[64] __attribute__((aligned(16)));
    CHECK(ethosu_init(drv, NULL, fast, sizeof(fast), 0, 0) == 0);
    base_size[2] = 32;
    base[2] = 0;
    CHECK(ethosu_invoke_v3(drv, b.cmd, (int)b.cmd_size, base, base_size, 3, NULL) == 0);
    CHECK(base[2] == (uint64_t)(uintptr_t)fast);
    base_size[2] = 65;
    CHECK(ethosu_invoke_v3(drv, b.cmd, (int)b.cmd_size, base, base_size, 3, NULL) == -1);
    ethosu_deinit(drv);
    ethosu_release_driver(drv);

    free(scratch);
    free(blob_copy);
    free(file);
    return test_summary("test_npu_minimal_example", 36);
}
