/* ptec_npu_model's interpreter on hand-made streams: what a good stream does
 * (registers, DMA, STOP, stats) and how every hostile one stops (a clean -1
 * with the STATUS bits, the failing command's index and QREAD). The expected
 * values are written out by hand from spec §3/§6, not computed by the model. */
#include "npu_model.h"
#include "test_util.h"

#define CMD0(op, param) ((uint32_t)(op) | (uint32_t)(param) << 16)
#define CMD1(op, param) ((uint32_t)(op) | 0x4000u | (uint32_t)(param) << 16)
#define STOP CMD0(0x000, 0xFFFF)

static uint8_t region0[64] __attribute__((aligned(16)));
static uint8_t region1[64] __attribute__((aligned(16)));
static uint64_t bases[2];
static size_t sizes[2] = {sizeof(region0), sizeof(region1)};
static ptec_npu_model model;

static int run(const uint32_t *stream, size_t words)
{
    bases[0] = (uint64_t)(uintptr_t)region0;
    bases[1] = (uint64_t)(uintptr_t)region1;
    return ptec_npu_model_run(&model, stream, words, bases, sizes, 2);
}

/* DMA len bytes region src:src_off -> dst:dst_off */
#define DMA(src_region, src_off, dst_region, dst_off, len)                                      \
    CMD0(0x130, src_region), CMD0(0x131, dst_region), CMD1(0x030, 0), (src_off), CMD1(0x031, 0), \
        (dst_off), CMD1(0x032, 0), (len), CMD0(0x010, 0)

static void expect_fault(const char *what, const uint32_t *stream, size_t words, uint32_t status_bits,
                         uint32_t index, uint32_t qread)
{
    int rc = run(stream, words);
    const ptec_npu_fault *f = ptec_npu_model_fault(&model);
    if (rc != -1 || (f->status & status_bits) != status_bits || f->command_index != index || f->qread != qread ||
        f->detail == NULL || (f->status & PTEC_NPU_STATUS_CMD_END_REACHED)) {
        fprintf(stderr, "%s: rc %d status 0x%x index %u qread %u detail %s\n", what, rc, f->status,
                f->command_index, f->qread, f->detail ? f->detail : "(null)");
        test_failures++;
    }
}

int main(void)
{
    ptec_npu_hw hw;
    CHECK(ptec_npu_hw_from_name("ethos-u55-128", &hw) == 0);
    CHECK(hw.config == 0x1807u && hw.product == 0u && hw.log2_macs == 7u && hw.shram_kib == 24u);
    CHECK(ptec_npu_hw_from_name("ethos-u65-256", &hw) == 0 && hw.config == 0x10003008u);
    CHECK(ptec_npu_hw_from_name("ethos-u55-100", &hw) == -1);
    CHECK(ptec_npu_hw_from_name("ethos-u55-128", &hw) == 0);
    ptec_npu_model_init(&model, &hw, NULL, 0);

    for (unsigned i = 0; i < sizeof(region0); i++) {
        region0[i] = (uint8_t)(i + 1u);
    }

    /* A good stream: DMA 16 bytes of region 0 to region 1 offset 32, waits, STOP. */
    const uint32_t good[] = {DMA(0, 4, 1, 32, 16), CMD0(0x011, 0), CMD0(0x012, 0), STOP};
    memset(region1, 0, sizeof(region1));
    CHECK(run(good, sizeof(good) / 4) == 0);
    CHECK(region1[31] == 0 && region1[32] == 5 && region1[47] == 20 && region1[48] == 0);
    const ptec_npu_fault *f = ptec_npu_model_fault(&model);
    CHECK((f->status & PTEC_NPU_STATUS_CMD_END_REACHED) && f->detail == NULL);
    const ptec_npu_stats *s = ptec_npu_model_stats(&model);
    CHECK(s->commands == 9u && s->dma_count == 1u && s->dma_bytes == 16u && s->operations == 0u);

    /* Hostile streams. Command indices and byte offsets by hand (a DMA(...) is
     * six commands, eight words: its DMA_START is command 5 at byte 32): */
    const uint32_t unknown_op[] = {CMD0(0x130, 1), CMD0(0x007, 0), STOP};
    expect_fault("unknown cmd0 op", unknown_op, 3, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 1, 4);
    const uint32_t unknown_reg[] = {CMD1(0x020, 0), 0, CMD0(0x106, 0), STOP};
    expect_fault("unknown cmd0 register", unknown_reg, 4, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 1, 8);
    const uint32_t unknown_cmd1[] = {CMD1(0x040, 0), 0, STOP};
    expect_fault("unknown cmd1", unknown_cmd1, 3, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 0, 0);
    const uint32_t no_stop[] = {CMD0(0x130, 1), CMD0(0x131, 1)};
    expect_fault("no STOP", no_stop, 2, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 2, 8);
    const uint32_t cut_cmd1[] = {CMD0(0x130, 1), CMD1(0x030, 0)};
    expect_fault("cmd1 cut", cut_cmd1, 2, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 1, 4);
    const uint32_t control3[] = {0xC000u, STOP};
    expect_fault("control bits", control3, 2, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 0, 0);
    expect_fault("empty", good, 0, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 0, 0);
    /* DMA past the end of region 1 (48 + 17 > 64): bus fault, mem2mem write channel 9 */
    const uint32_t dma_past[] = {DMA(0, 0, 1, 48, 17), STOP};
    expect_fault("DMA past region end", dma_past, sizeof(dma_past) / 4,
                 PTEC_NPU_STATUS_BUS_STATUS | (9u << 12), 5, 32);
    /* DMA reading past region 0 (AXI1: faulting_interface), channel 4 */
    const uint32_t dma_read_past[] = {DMA(0, 60, 1, 0, 8), STOP};
    expect_fault("DMA read past region 0", dma_read_past, sizeof(dma_read_past) / 4,
                 PTEC_NPU_STATUS_BUS_STATUS | PTEC_NPU_STATUS_FAULTING_INTERFACE | (4u << 12), 5, 32);
    /* Huge lengths and offsets: no wrap-around */
    const uint32_t dma_huge[] = {DMA(1, 0xFFFFFFF0u, 1, 0, 0xFFFFFFFFu), STOP};
    expect_fault("DMA huge", dma_huge, sizeof(dma_huge) / 4, PTEC_NPU_STATUS_BUS_STATUS, 5, 32);
    /* Region 5 has no base */
    const uint32_t dma_region5[] = {DMA(5, 0, 1, 0, 4), STOP};
    expect_fault("DMA region 5", dma_region5, sizeof(dma_region5) / 4, PTEC_NPU_STATUS_BUS_STATUS, 5, 32);
    /* Writing the constants */
    const uint32_t dma_to_0[] = {DMA(1, 0, 0, 0, 4), STOP};
    expect_fault("DMA into region 0", dma_to_0, sizeof(dma_to_0) / 4, PTEC_NPU_STATUS_BUS_STATUS, 5, 32);
    /* SHRAM outside the LUT area (u55-128: LUT at 0x5800..0x6000) */
    const uint32_t shram_low[] = {DMA(0, 0, 0x103, 0x57F0, 16), STOP};
    expect_fault("DMA below LUT", shram_low, sizeof(shram_low) / 4, PTEC_NPU_STATUS_BUS_STATUS, 5, 32);
    const uint32_t shram_ok[] = {DMA(0, 0, 0x103, 0x5FF0, 16), STOP};
    CHECK(run(shram_ok, sizeof(shram_ok) / 4) == 0);
    CHECK(model.lut[2032] == 1 && model.lut[2047] == 16);
    const uint32_t shram_high[] = {DMA(0, 0, 0x103, 0x5FF0, 17), STOP};
    expect_fault("DMA past LUT", shram_high, sizeof(shram_high) / 4, PTEC_NPU_STATUS_BUS_STATUS, 5, 32);
    /* 2-D DMA: not modelled */
    const uint32_t dma_2d[] = {DMA(0, 0, 1 | (1u << 9), 0, 4), STOP};
    expect_fault("2-D DMA", dma_2d, sizeof(dma_2d) / 4, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 5, 32);
    /* Reserved OFM precision size (3) at an ELEMENTWISE */
    const uint32_t bad_precision[] = {CMD0(0x114, 3u << 1), CMD0(0x006, 1), STOP};
    expect_fault("OFM precision", bad_precision, 3, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 1, 4);

    /* Registers are reset per run: the same DMA with no region set reads region 0. */
    const uint32_t reset_check[] = {CMD1(0x032, 0), 4, CMD0(0x131, 1), CMD0(0x010, 0), STOP};
    memset(region1, 0, sizeof(region1));
    CHECK(run(reset_check, 5) == 0 && region1[0] == 1 && region1[3] == 4 && region1[4] == 0);

    /* The work budget stops a stream that would run for ever. */
    model.work_limit = 32;
    const uint32_t two_dmas[] = {DMA(0, 0, 1, 0, 20), DMA(0, 0, 1, 0, 20), STOP};
    expect_fault("budget", two_dmas, sizeof(two_dmas) / 4, PTEC_NPU_STATUS_CMD_PARSE_ERROR, 11, 68);
    model.work_limit = PTEC_NPU_DEFAULT_WORK_LIMIT;

    /* COP1: one COMMAND_STREAM, config checked. */
    uint32_t cop2[20] __attribute__((aligned(16))) = {0x31504F43u, 0x00100001u, 0x1807u, 0x10066001u,
                                                        5, 5, 5, 0x000A0002u, DMA(0, 0, 1, 0, 4), STOP};
    CHECK(ptec_npu_model_run_cop(&model, cop2, 18 * 4, bases, sizes, 2) == 0);
    const uint32_t *found;
    size_t words;
    const char *detail = NULL;
    CHECK(ptec_npu_cop_check(&hw, cop2, 18 * 4, &found, &words, &detail) == 0 && found == cop2 + 8 && words == 10);
    /* another product / MACs: -1 */
    ptec_npu_hw u55_256;
    CHECK(ptec_npu_hw_from_name("ethos-u55-256", &u55_256) == 0);
    CHECK(ptec_npu_cop_check(&u55_256, cop2, 18 * 4, &found, &words, &detail) == -1 && detail != NULL);
    /* a shram-only difference passes */
    cop2[2] = 0x3007u;
    CHECK(ptec_npu_cop_check(&hw, cop2, 18 * 4, &found, &words, &detail) == 0);
    cop2[2] = 0x1807u;
    /* newer arch minor in the stream: -1 */
    cop2[3] = 0x10166001u;
    CHECK(ptec_npu_cop_check(&hw, cop2, 18 * 4, &found, &words, &detail) == -1);
    cop2[3] = 0x10066001u;
    /* truncated stream record, no stream, two streams, bad size, bad FourCC */
    CHECK(ptec_npu_cop_check(&hw, cop2, 17 * 4, &found, &words, &detail) == -1);
    CHECK(ptec_npu_cop_check(&hw, cop2, 7 * 4, &found, &words, &detail) == -1);
    CHECK(ptec_npu_cop_check(&hw, cop2, 18 * 4 - 2, &found, &words, &detail) == -1);
    uint32_t two[8] = {0x31504F43u, 0x00010002u, STOP, 0x00010002u, STOP, 5, 5, 5};
    CHECK(ptec_npu_cop_check(&hw, two, sizeof(two), &found, &words, &detail) == -1);
    CHECK(ptec_npu_cop_check(&hw, two, 3 * 4, &found, &words, &detail) == 0 && words == 1);
    two[0] = 0x32504F43u;
    CHECK(ptec_npu_cop_check(&hw, two, 3 * 4, &found, &words, &detail) == -1);
    uint32_t unknown_action[4] = {0x31504F43u, 0x00000003u, 0x00010002u, STOP};
    CHECK(ptec_npu_cop_check(&hw, unknown_action, sizeof(unknown_action), &found, &words, &detail) == -1);

    return test_summary("test_npu_stream", 42);
}
