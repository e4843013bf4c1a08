/* Helper of the person_detect weight oracle (spec §8.2 oracle 0,
 * tests/python/test_npu_weights_oracle.py): runs a Vela command stream on the
 * NPU model with an observer and, for every CONV/DEPTHWISE op, writes the
 * weights and scale records the op reads (after the DMAs before it ran), as
 * the model decodes them. The Python test compares them with the original
 * .tflite; this tool only dumps.
 *
 *   npu_weights_dump ACCELERATOR COP_FILE FLASH_FILE SCRATCH_BYTES OUT_FILE [INPUT_FILE]
 *
 * ACCELERATOR is a Vela name ("ethos-u55-256"); COP_FILE the COP1 payload;
 * FLASH_FILE region 0; region 1 is SCRATCH_BYTES of zeros with INPUT_FILE (if
 * given) at offset 0. OUT_FILE: per op, little-endian
 *   u32 x 14: word offset of the NPU_OP, kind (2 CONV, 3 DEPTHWISE), OFM depth,
 *             kernel height, kernel width, dense IFM depth (1 for depthwise),
 *             IFM depth, stride x, stride y, part-kernel-first, weight region,
 *             scale mode (0 records, 1 global), WEIGHT_BASE, WEIGHT_LENGTH
 *   i16 x (OFM depth x kh x kw x dense IFM depth): w[ofm][ky][kx][ic]
 *   per OFM channel: i64 bias, u32 scale, u32 shift
 * stdout: "ops N", "work BYTES" (the work buffer the stream needs) and, after
 * a successful run, "output B0 B1 ..." (the first
 * 16 bytes of region 1). Exit 0 when the run reached NPU_OP_STOP and every op
 * decoded; 1 otherwise, with the reason on stderr. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_internal.h"
#include "npu_weights.h"
#include "test_util.h"

typedef struct {
    ptec_npu_model *model;
    FILE *out;
    int16_t *dense;
    size_t dense_cap;
    unsigned ops;
    int failed;
} dump_state;

static void put_u32(FILE *f, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    fwrite(b, 1, 4, f);
}

static void put_i64(FILE *f, int64_t v)
{
    put_u32(f, (uint32_t)(uint64_t)v);
    put_u32(f, (uint32_t)((uint64_t)v >> 32));
}

static void observe(void *user, const ptec_npu_op_view *op)
{
    dump_state *s = (dump_state *)user;
    if (op->kind != PTEC_NPU_OP_CONV && op->kind != PTEC_NPU_OP_DEPTHWISE) {
        return;
    }
    ptec_npu_model *m = s->model;
    npu_weight_layout layout;
    const char *detail = NULL;
    uint8_t *stream;
    size_t count;
    if (npu_weight_layout_of(&m->hw, op, &layout, &detail) != 0) {
        fprintf(stderr, "op at word %u: %s\n", op->qread / 4u, detail);
        s->failed = 1;
        return;
    }
    count = npu_weight_count(&layout);
    if (count > s->dense_cap) {
        fprintf(stderr, "op at word %u: %zu weights exceed the dump buffer\n", op->qread / 4u, count);
        s->failed = 1;
        return;
    }
    if (npu_region_span(m, op->weight_region, op->weight_base, op->weight_length, PTEC_NPU_CHANNEL_WEIGHTS, 0,
                        &stream) != 0 ||
        npu_weights_unpack(&layout, stream, op->weight_length, s->dense, count, &detail) != 0) {
        fprintf(stderr, "op at word %u: weights: %s\n", op->qread / 4u, detail ? detail : m->fault.detail);
        s->failed = 1;
        return;
    }
    const uint32_t header[14] = {op->qread / 4u,   op->kind,          op->ofm.depth,
                                 op->kernel_height, op->kernel_width,  layout.ifm_depth,
                                 op->ifm.depth,     op->stride_x,      op->stride_y,
                                 op->part_kernel_first, op->weight_region, op->ofm_scale_mode,
                                 (uint32_t)op->weight_base, op->weight_length};
    for (int i = 0; i < 14; i++) {
        put_u32(s->out, header[i]);
    }
    for (size_t i = 0; i < count; i++) {
        uint16_t v = (uint16_t)s->dense[i];
        uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
        fwrite(b, 1, 2, s->out);
    }
    for (uint32_t c = 0; c < op->ofm.depth; c++) {
        npu_scale scale;
        if (npu_scale_record(m, op, c, &scale) != 0) {
            fprintf(stderr, "op at word %u: scale record %u: %s\n", op->qread / 4u, c, m->fault.detail);
            s->failed = 1;
            memset(&scale, 0, sizeof(scale));
        }
        put_i64(s->out, scale.bias);
        put_u32(s->out, scale.scale);
        put_u32(s->out, scale.shift);
    }
    s->ops++;
}

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: npu_weights_dump ACCELERATOR COP_FILE FLASH_FILE SCRATCH_BYTES OUT_FILE [INPUT_FILE]\n");
        return 2;
    }
    ptec_npu_hw hw;
    if (ptec_npu_hw_from_name(argv[1], &hw) != 0) {
        fprintf(stderr, "unknown accelerator %s\n", argv[1]);
        return 2;
    }
    size_t cop_size, flash_size, input_size = 0;
    void *cop = test_read_file(argv[2], &cop_size);
    void *flash = test_read_file(argv[3], &flash_size);
    size_t scratch_size = (size_t)strtoull(argv[4], NULL, 10);
    uint8_t *scratch = (uint8_t *)test_alloc(scratch_size);
    memset(scratch, 0, scratch_size);
    if (argc == 7) {
        void *input = test_read_file(argv[6], &input_size);
        if (input_size > scratch_size) {
            fprintf(stderr, "input larger than the scratch region\n");
            return 2;
        }
        memcpy(scratch, input, input_size);
        free(input);
    }

    static ptec_npu_model model;
    ptec_npu_model_init(&model, &hw, NULL, 0);
    const uint32_t *stream;
    size_t words;
    const char *detail;
    if (ptec_npu_cop_check(&hw, cop, cop_size, &stream, &words, &detail) != 0) {
        fprintf(stderr, "COP1: %s\n", detail);
        return 1;
    }
    size_t work_size = ptec_npu_model_work_bytes(&model, stream, words);
    void *work = test_alloc(work_size);
    ptec_npu_model_init(&model, &hw, work, work_size);

    dump_state state;
    memset(&state, 0, sizeof(state));
    state.model = &model;
    state.dense_cap = 1u << 20;
    state.dense = (int16_t *)malloc(state.dense_cap * sizeof(int16_t));
    state.out = fopen(argv[5], "wb");
    if (state.out == NULL || state.dense == NULL) {
        fprintf(stderr, "cannot write %s\n", argv[5]);
        return 2;
    }
    ptec_npu_model_set_observer(&model, observe, &state);
    uint64_t bases[2] = {(uint64_t)(uintptr_t)flash, (uint64_t)(uintptr_t)scratch};
    size_t sizes[2] = {flash_size, scratch_size};
    int rc = ptec_npu_model_run(&model, stream, words, bases, sizes, 2);
    fclose(state.out);
    printf("ops %u\nwork %zu\n", state.ops, work_size);
    if (rc != 0) {
        const ptec_npu_fault *f = ptec_npu_model_fault(&model);
        fprintf(stderr, "run stopped at command %u (byte %u): %s (status 0x%x)\n", f->command_index, f->qread,
                f->detail ? f->detail : "?", f->status);
        return 1;
    }
    printf("output");
    for (size_t i = 0; i < 16u && i < scratch_size; i++) {
        printf(" %u", scratch[i]);
    }
    printf("\n");
    free(state.dense);
    free(work);
    free(scratch);
    free(cop);
    free(flash);
    return state.failed ? 1 : 0;
}
