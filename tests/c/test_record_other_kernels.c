/* A runtime whose kernels declare other prepared arguments
 * (PTEC_PREPARED_ARGS) than the compiler's layout copy
 * (python/ptec/runtime_layout.json) keeps other values, so the requirements
 * record's figures are not its own: the record's key covers each of the
 * method's kernels as the build declares it, so this runtime finds no entry
 * and measures the method by the walk (docs/compatibility.md, "The
 * requirements record"). Before the key covered them, it read the record's
 * smaller metadata figure and the load in memory of that size failed.
 *   test_record_other_kernels DS_CNN.pte
 * (a ptec-built DS-CNN with a record). Built with a kernel table that is the
 * build's own with cortex_m::quantized_conv2d.out swapped for a stand-in:
 * the same prepare, run and state bytes, declaring no prepared arguments
 * (as a runtime from before that kernel declared them). */
#include <string.h>

#include "kernels/cortex_m/cortex_m_args.h"
#include "ptec/ptec.h"
#include "test_util.h"

extern const ptec_kernel ptec_kernel_cortex_m_quantized_conv2d_out;

static ptec_status older_prepare(ptec_op *op)
{
    return ptec_kernel_cortex_m_quantized_conv2d_out.prepare(op);
}

static ptec_status older_run(ptec_op *op)
{
    return ptec_kernel_cortex_m_quantized_conv2d_out.run(op);
}

const ptec_kernel ptec_kernel_mock_conv2d_no_prepared_args = {
    "cortex_m::quantized_conv2d.out", sizeof(ptec_cm_conv_state), older_prepare, older_run};

static int checks;
#define EXPECT(cond)                                                                         \
    do {                                                                                     \
        ++checks;                                                                            \
        CHECK(cond);                                                                         \
    } while (0)

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

typedef struct outcome {
    ptec_requirements req;
    uint32_t from_record;
    ptec_status load_single, load_regions, execute;
    uint8_t output[256];
    size_t output_bytes;
} outcome;

/* Requirements, a load from one buffer of exactly the reported total and
 * one from regions of exactly the reported sizes, then an execute on a
 * fixed input; fresh method structs each time. */
static outcome try_program(const uint8_t *bytes, size_t size)
{
    outcome o;
    memset(&o, 0, sizeof o);
    uint8_t *copy = test_alloc(size);
    memcpy(copy, bytes, size);
    static ptec_program p;
    static ptec_method m, m2;
    memset(&m, 0, sizeof m);
    memset(&m2, 0, sizeof m2);
    CHECK_STATUS(ptec_program_init(&p, copy, size), PTEC_OK);
    CHECK_STATUS(ptec_method_requirements(&m, &p, NULL, &o.req), PTEC_OK);
    o.from_record = m.measured.from_record;
    uint8_t *buf = test_alloc(o.req.total_bytes);
    o.load_single = ptec_method_load_single(&m, &p, NULL, buf, o.req.total_bytes);
    if (o.load_single == PTEC_OK) {
        ptec_method_unload(&m);
    }
    free(buf);
    ptec_memory mem;
    memset(&mem, 0, sizeof mem);
    ptec_requirements req;
    CHECK_STATUS(ptec_method_requirements(&m2, &p, NULL, &req), PTEC_OK);
    mem.metadata = test_alloc(req.metadata_bytes);
    mem.metadata_size = req.metadata_bytes;
    mem.planned_count = req.planned_count;
    for (size_t i = 0; i < req.planned_count; ++i) {
        mem.planned[i] = test_alloc(req.planned_bytes[i]);
        mem.planned_size[i] = req.planned_bytes[i];
    }
    mem.scratch = test_alloc(req.scratch_bytes);
    mem.scratch_size = req.scratch_bytes;
    o.load_regions = ptec_method_load(&m2, &p, NULL, &mem);
    o.execute = PTEC_INVALID_STATE;
    ptec_tensor_info info;
    if (o.load_regions == PTEC_OK && ptec_method_input_info(&m2, 0, &info) == PTEC_OK) {
        uint8_t *in = test_alloc(info.nbytes);
        memset(in, 0, info.nbytes);
        for (size_t i = 0; i + 4 <= info.nbytes; i += 4) { /* float inputs that vary */
            float v = 0.5f * (float)((i / 4) % 13) - 3.0f;
            memcpy(in + i, &v, sizeof v);
        }
        const ptec_tensor *out;
        if (ptec_method_set_input(&m2, 0, (ptec_dtype)info.dtype, NULL, 0, in, info.nbytes) == PTEC_OK &&
            (o.execute = ptec_method_execute(&m2)) == PTEC_OK && ptec_method_output(&m2, 0, &out) == PTEC_OK &&
            out->nbytes <= sizeof o.output) {
            memcpy(o.output, out->data, out->nbytes);
            o.output_bytes = out->nbytes;
        }
        free(in);
    }
    if (o.load_regions == PTEC_OK) {
        ptec_method_unload(&m2);
    }
    free(mem.metadata);
    for (size_t i = 0; i < req.planned_count; ++i) {
        free(mem.planned[i]);
    }
    free(mem.scratch);
    free(copy);
    return o;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_record_other_kernels DS_CNN.pte\n");
        return 2;
    }
    size_t size = 0;
    uint8_t *original = test_read_file(argv[1], &size);
    /* The record, found by hand (this test's picture of the format). */
    size_t record_at = 0;
    for (size_t at = 0; at + 16 <= size && record_at == 0; ++at) {
        record_at = memcmp(original + at, "PTRQ", 4) == 0 ? at : 0;
    }
    EXPECT(record_at != 0 && get32(original + record_at + 12) > 0);
    if (record_at == 0) {
        return test_summary("record on other kernels", checks);
    }
    /* The truth: the same program with its record's magic broken. */
    uint8_t *walked = test_alloc(size);
    memcpy(walked, original, size);
    walked[record_at] = 'X';
    outcome walk = try_program(walked, size);
    EXPECT(walk.from_record == 0 && walk.load_single == PTEC_OK && walk.execute == PTEC_OK && walk.output_bytes > 0);
    /* The stand-in keeps the conv's constants: no entry's metadata figure is
     * this runtime's (so reading one would be wrong). */
    for (uint32_t i = 0; i < get32(original + record_at + 12); ++i) {
        const uint8_t *e = original + record_at + 16 + 36 * i;
        EXPECT(get32(e + 12) != walk.req.metadata_bytes || get32(e + 16) != 0);
    }
    outcome rec = try_program(original, size);
    EXPECT(rec.from_record == 0); /* no entry for this runtime's kernels: measured */
    EXPECT(memcmp(&rec.req, &walk.req, sizeof rec.req) == 0);
    EXPECT(rec.load_single == PTEC_OK && rec.load_regions == PTEC_OK && rec.execute == PTEC_OK);
    EXPECT(rec.output_bytes == walk.output_bytes && memcmp(rec.output, walk.output, walk.output_bytes) == 0);
    free(walked);
    free(original);
    return test_summary("record on other kernels", checks);
}
