/* The EthosUBackend (src/backends/ethos_u) on the upstream minimal example
 * (an int8 Add delegated to an ethos-u55-128, spec ethos-u-npu.md §8.1):
 *   - it loads; the requirements are exact: the NPU work area (144 bytes,
 *     the blob's scratch_size) is the method's scratch, and one byte less in
 *     any region fails the load cleanly, naming the region, before init;
 *   - it runs to the correct add for all 65,536 int8 input pairs, against
 *     out = ((in0 + in1 + 257) >> 1) - 128 (the oracle; the inputs enter as
 *     floats through the program's quantize ops and leave through its
 *     dequantize, inverted here to the int8 value);
 *   - hand-made hostile blobs (the sample's blob with one lie each) fail the
 *     load with their exact status and message; under the host-asan preset
 *     ASan and UBSan watch every one;
 *   - with the fake driver (PTEC_TEST_FAKE_NPU): the driver sees the blob's
 *     COP1 data and the three aligned bases {weights, work area, fast
 *     scratch} with their sizes; a driver failure is a clean status with the
 *     driver's return and the model's fault; the per-call report reaches the
 *     runner hook, "no counters" included.
 * argv[1]: the shared data directory. */
#include <stdint.h>

#include "backends/ethos_u/ethos_u_io.h"
#include "backends/ethos_u/vela_blob.h"
#include "ptec/ethos_u.h"
#include "ptec/ptec.h"
#include "test_regions.h"
#include "test_util.h"
#ifdef PTEC_TEST_FAKE_NPU
#include "ethos_u_fake_driver.h"
#endif

static int checks;
#define T(cond) do { ++checks; CHECK(cond); } while (0)
#define TS(expr, want) do { ++checks; CHECK_STATUS(expr, want); } while (0)

#define BLOB_OFFSET 112u /* the sample's inline blob, in the file */
#define BLOB_SIZE 1312u
/* Block payload offsets in the sample's blob (§2.2 framing). */
#define CMD_HEADER 32u
#define CMD_PAYLOAD 64u
#define WEIGHT_HEADER 976u
#define SCRATCH_HEADER 1040u
#define INPUTS_HEADER 1088u
#define INPUTS_PAYLOAD 1120u
#define OUTPUTS_HEADER 1200u
#define OUTPUTS_PAYLOAD 1232u
#define END_HEADER 1280u

/* The method's error holds `want`; says what it held when not. */
#define T_ERROR(m, want)                                                                              \
    do {                                                                                              \
        ++checks;                                                                                     \
        if (strstr(ptec_method_error(m), want) == NULL) {                                             \
            fprintf(stderr, "%s:%d: error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, ptec_method_error(m), want); \
            ++test_failures;                                                                          \
        }                                                                                             \
    } while (0)

static ptec_ethos_u_call last_call;
static int calls;

void ptec_ethos_u_call_done(const ptec_ethos_u_call *call)
{
    last_call = *call;
    ++calls;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int load(const ptec_program *p, ptec_method *m, uint8_t *buf, size_t cap)
{
    ptec_requirements req;
    ptec_status st = ptec_method_requirements(m, p, NULL, &req);
    if (st != PTEC_OK) {
        return st;
    }
    return req.total_bytes > cap ? PTEC_MEMORY_ALLOCATION_FAILED : ptec_method_load_single(m, p, NULL, buf, req.total_bytes);
}

/* The input float that quantizes (scale 1/255, zero point -128) to q. */
static float input_for(int q)
{
    return (float)(q + 128) / 255.0f;
}

/* Runs the sample on int8 inputs a and b; the int8 output, or 1000 on failure. */
static int run_pair(ptec_method *m, int a, int b)
{
    float x = input_for(a), y = input_for(b);
    if (ptec_method_set_input(m, 0, PTEC_DTYPE_FLOAT, NULL, 0, &x, sizeof x) != PTEC_OK ||
        ptec_method_set_input(m, 1, PTEC_DTYPE_FLOAT, NULL, 0, &y, sizeof y) != PTEC_OK ||
        ptec_method_execute(m) != PTEC_OK) {
        return 1000;
    }
    const ptec_tensor *out;
    if (ptec_method_output(m, 0, &out) != PTEC_OK || out->dtype != PTEC_DTYPE_FLOAT) {
        return 1000;
    }
    /* dequantize: (q + 128) * 2/255; invert to q (the error is ~1e-5). */
    const float f = ((const float *)out->data)[0];
    const float q = f * 255.0f / 2.0f - 128.0f;
    return (int)(q < 0 ? q - 0.5f : q + 0.5f);
}

static void check_all_pairs(const ptec_program *p)
{
    uint8_t *buf = test_alloc(1 << 16);
    ptec_method m;
    TS(load(p, &m, buf, 1 << 16), PTEC_OK);
    int wrong = 0;
    for (int a = -128; a < 128; ++a) {
        for (int b = -128; b < 128; ++b) {
            const int want = ((a + b + 257) >> 1) - 128;
            const int got = run_pair(&m, a, b);
            if (got != want && wrong++ < 5) {
                fprintf(stderr, "add(%d, %d): got %d, want %d (%s)\n", a, b, got, want, ptec_method_error(&m));
            }
        }
    }
    T(wrong == 0);
    T(calls >= 65536 && last_call.delegate_index == 0 && last_call.driver_result == 0);
    ptec_method_unload(&m);
    free(buf);
}

/* A load with one region a byte short fails before any driver call, naming it. */
static void check_short(const ptec_program *p, const ptec_memory *mem, const char *region)
{
    ptec_method m;
    TS(ptec_method_load(&m, p, NULL, mem), PTEC_MEMORY_ALLOCATION_FAILED);
    T(strstr(ptec_method_error(&m), region) != NULL && strstr(ptec_method_error(&m), "short by 1") != NULL);
}

static void check_requirements(const ptec_program *p)
{
    ptec_method m;
    ptec_requirements req;
    TS(ptec_method_requirements(&m, p, NULL, &req), PTEC_OK);
    /* quantize and dequantize ask for no scratch: the work area is the
     * blob's scratch_size, 144, a multiple of 16 already. */
    T(req.scratch_bytes == 144 && req.fast_scratch_bytes == 0);
    ptec_memory mem;
    test_regions_alloc(&mem, &req);
    TS(ptec_method_load(&m, p, NULL, &mem), PTEC_OK);
    T(run_pair(&m, 127, 127) == 127 && run_pair(&m, -128, -128) == -128 && run_pair(&m, 0, -1) == 0);
#ifdef PTEC_TEST_FAKE_NPU
    /* The driver saw the blob's cmd_data (COP1, 908 bytes) and the bases
     * upstream passes: weights in the blob, the work area, fast scratch. */
    T(fake_npu.cop_size == 908 && memcmp(fake_npu.cop, "COP1", 4) == 0);
    T(fake_npu.base_count == 3 && fake_npu.base[1] == (uint64_t)(uintptr_t)mem.scratch);
    T(fake_npu.base_size[0] == 32 && fake_npu.base_size[1] == 144 && fake_npu.base_size[2] == 0);
    T((const uint8_t *)(uintptr_t)fake_npu.base[0] == (const uint8_t *)fake_npu.cop - CMD_PAYLOAD + (WEIGHT_HEADER + 32));
    T(fake_npu.reserved_product == 0 && fake_npu.reserved_macs == 7); /* ethos-u55-128: config 0x1807 */
    T(fake_npu.reserves == fake_npu.releases && fake_npu.released_right_driver == fake_npu.releases);
#endif
    ptec_method_unload(&m);

    ptec_memory short_mem;
    const char *region;
    for (size_t k = 0; (region = test_regions_short(&mem, k, &short_mem)) != NULL; ++k) {
        check_short(p, &short_mem, region);
    }
    test_regions_free(&mem);
}

/* One lie told to the sample's blob (same length, so the program around it
 * stays valid). */
typedef struct hostile {
    const char *name;
    void (*damage)(uint8_t *blob);
    ptec_status status;
    const char *message; /* the whole detail after "delegate 0: " */
} hostile;

static void lying_cmd_size(uint8_t *b) { put_u32(b + CMD_HEADER + 16, 0xFFFFFFF0u); }
static void cmd_past_end(uint8_t *b) { put_u32(b + CMD_HEADER + 16, BLOB_SIZE); }
static void lying_inputs_size(uint8_t *b) { put_u32(b + INPUTS_HEADER + 16, 72); }
static void lying_input_count(uint8_t *b) { put_u32(b + INPUTS_PAYLOAD, 0x80000000u); }
static void no_end_marker(uint8_t *b) { memcpy(b + END_HEADER, "vela_end_strean", 15); }
static void unknown_block(uint8_t *b) { memcpy(b + SCRATCH_HEADER, "scratch_sizf", 12); }
static void blocks_swapped(uint8_t *b) { memcpy(b + INPUTS_HEADER, "outputs\0", 8); }
static void external_block(uint8_t *b) { b[WEIGHT_HEADER + 20] = 1; }
static void bad_fourcc(uint8_t *b) { memcpy(b + CMD_PAYLOAD, "COPX", 4); }
static void cop2(uint8_t *b) { memcpy(b + CMD_PAYLOAD, "COP2", 4); }
static void cop_unknown_action(uint8_t *b) { put_u32(b + CMD_PAYLOAD + 16, 0x00000009u); } /* a NOP becomes action 9 */
static void cop_stream_too_long(uint8_t *b) { put_u32(b + CMD_PAYLOAD + 28, 0x00FF0002u); } /* COMMAND_STREAM length 255 */
static void cop_no_config(uint8_t *b) { put_u32(b + CMD_PAYLOAD + 4, 5u); put_u32(b + CMD_PAYLOAD + 8, 5u); put_u32(b + CMD_PAYLOAD + 12, 5u); }
static void io_offset_past_scratch(uint8_t *b) { put_u32(b + INPUTS_PAYLOAD + 4 + 28, 144); }
static void io_offset_wraps(uint8_t *b) { put_u32(b + OUTPUTS_PAYLOAD + 4 + 28, 0xFFFFFFFFu); }
static void io_shape_huge(uint8_t *b) { for (int d = 0; d < 6; ++d) put_u32(b + INPUTS_PAYLOAD + 4 + 4u * (uint32_t)d, 0x7FFFFFFFu); }
static void io_region(uint8_t *b) { put_u32(b + OUTPUTS_PAYLOAD + 4 + 32, 3); }
static void io_elem_size(uint8_t *b) { put_u32(b + INPUTS_PAYLOAD + 4 + 36 + 24, 3); }
static void scratch_small(uint8_t *b) { put_u32(b + SCRATCH_HEADER + 32, 64); } /* input 0 at 64 no longer fits */
static void config_u65(uint8_t *b) { put_u32(b + CMD_PAYLOAD + 8, 0x10003008u); }
static void config_more_shram(uint8_t *b) { put_u32(b + CMD_PAYLOAD + 8, 0x00003007u); }
static void config_stream_version(uint8_t *b) { put_u32(b + CMD_PAYLOAD + 8, 0x00001817u); }

static const hostile hostiles[] = {
    {"lying cmd_data size", lying_cmd_size, PTEC_INVALID_PROGRAM, "block cmd_data runs past the end of the blob"},
    {"cmd_data past the end", cmd_past_end, PTEC_INVALID_PROGRAM, "block cmd_data runs past the end of the blob"},
    {"lying inputs size", lying_inputs_size, PTEC_INVALID_PROGRAM, "inputs block size does not match its entry count"},
    {"lying input count", lying_input_count, PTEC_INVALID_PROGRAM, "inputs block size does not match its entry count"},
    {"no end marker", no_end_marker, PTEC_INVALID_PROGRAM, "blob does not end with a vela_end_stream block"},
    {"unknown block", unknown_block, PTEC_INVALID_PROGRAM, "unknown block name in the blob"},
    {"blocks out of order", blocks_swapped, PTEC_INVALID_PROGRAM,
     "block inputs is missing or out of order (expected after scratch_size)"},
    {"external block", external_block, PTEC_NOT_SUPPORTED,
     "block is external (named data), which this delegate does not read"},
    {"bad FourCC", bad_fourcc, PTEC_INVALID_PROGRAM, "cmd_data does not start with COP1"},
    {"COP2", cop2, PTEC_NOT_SUPPORTED, "cmd_data is COP2, which Ethos-U55/U65 drivers do not run"},
    {"unknown COP action", cop_unknown_action, PTEC_INVALID_PROGRAM, "COP1 record with an unknown action (not 1, 2 or 5)"},
    {"command stream past cmd_data", cop_stream_too_long, PTEC_INVALID_PROGRAM,
     "COP1 COMMAND_STREAM record runs past cmd_data"},
    {"no OPTIMIZER_CONFIG", cop_no_config, PTEC_INVALID_PROGRAM, "COP1 has no OPTIMIZER_CONFIG record"},
    {"io offset past scratch", io_offset_past_scratch, PTEC_INVALID_PROGRAM,
     "an input lies outside the scratch area (offset + size > scratch_size)"},
    {"io offset wraps", io_offset_wraps, PTEC_INVALID_PROGRAM,
     "an output lies outside the scratch area (offset + size > scratch_size)"},
    {"io shape overflows", io_shape_huge, PTEC_INVALID_PROGRAM,
     "an input lies outside the scratch area (offset + size > scratch_size)"},
    {"io region out of range", io_region, PTEC_INVALID_PROGRAM,
     "an output is not in region 1 (the scratch area, where the delegate copies I/O)"},
    {"io elem_size", io_elem_size, PTEC_INVALID_PROGRAM, "an input's elem_size is not 1, 2 or 4"},
    {"scratch too small for the I/O", scratch_small, PTEC_INVALID_PROGRAM,
     "an input lies outside the scratch area (offset + size > scratch_size)"},
    {"config word of another NPU", config_u65, PTEC_INVALID_PROGRAM,
     "the target compile spec and the COP1 config word name different NPUs"},
    {"config word with more SHRAM", config_more_shram, PTEC_DELEGATE_INVALID_COMPATIBILITY,
     "blob was planned for more SHRAM (COP1 config word) than ethos-u55-128 has"},
    {"config word stream version", config_stream_version, PTEC_DELEGATE_INVALID_COMPATIBILITY,
     "blob's command stream version (COP1 config word) is not the one ethos-u55-128 runs"},
};

/* The sample with its blob damaged: requirements and load both refuse it,
 * with the status and the whole message. */
static void expect_refused(const uint8_t *file, size_t size, const char *name, ptec_status status, const char *message)
{
    ptec_program p;
    ptec_method m;
    ptec_requirements req;
    TS(ptec_program_init(&p, file, size), PTEC_OK);
    char want[PTEC_DETAIL_LEN + 64];
    snprintf(want, sizeof want, "backend EthosUBackend delegate 0: %s", message);
    want[PTEC_DETAIL_LEN - 1] = '\0';
    ++checks;
    ptec_status st = ptec_method_requirements(&m, &p, NULL, &req);
    if (st != status || strstr(ptec_method_error(&m), want) == NULL) {
        fprintf(stderr, "%s: got 0x%02x \"%s\", want 0x%02x \"%s\"\n", name, st, ptec_method_error(&m), status,
                want);
        ++test_failures;
    }
    uint8_t *buf = test_alloc(1 << 16);
    TS(ptec_method_load_single(&m, &p, NULL, buf, 1 << 16), status);
    free(buf);
}

/* The flatbuffer string `text` in the program (its u32 length right before it). */
static uint8_t *find_string(uint8_t *program, size_t size, const char *text)
{
    const size_t n = strlen(text);
    for (size_t i = 4; i + n <= size; ++i) {
        if (memcmp(program + i, text, n) == 0 && program[i - 4] == n && program[i - 3] == 0 && program[i - 2] == 0) {
            return program + i;
        }
    }
    return NULL;
}

static void check_hostile(const uint8_t *file, size_t size)
{
    uint8_t *copy = test_alloc(size);
    for (size_t i = 0; i < sizeof hostiles / sizeof hostiles[0]; ++i) {
        memcpy(copy, file, size);
        hostiles[i].damage(copy + BLOB_OFFSET);
        expect_refused(copy, size, hostiles[i].name, hostiles[i].status, hostiles[i].message);
    }
    /* The target compile spec names another NPU: the error names both. */
    memcpy(copy, file, size);
    /* the target spec's value (the other copy is inside compile_flags) */
    uint8_t *target = find_string(copy, size, "ethos-u55-128");
    T(target != NULL);
    memcpy(target, "ethos-u65-256", 13);
    expect_refused(copy, size, "target spec u65", PTEC_DELEGATE_INVALID_COMPATIBILITY,
                   "blob is for ethos-u65-256, this build drives ethos-u55-128");
    memcpy(target, "ethos-u85-256", 13);
    expect_refused(copy, size, "target spec u85", PTEC_DELEGATE_INVALID_COMPATIBILITY,
                   "blob's target spec is no U55/U65 NPU, this build drives ethos-u55-128");
    /* Without a target spec (key renamed), the COP1 config word decides. */
    memcpy(target, "ethos-u55-128", 13);
    uint8_t *key = find_string(copy, size, "target");
    T(key != NULL);
    memcpy(key, "targex", 6);
    config_u65(copy + BLOB_OFFSET);
    expect_refused(copy, size, "config word u65", PTEC_DELEGATE_INVALID_COMPATIBILITY,
                   "blob is for ethos-u65-256, this build drives ethos-u55-128");
    free(copy);

    /* Length and placement, through the parser: a blob 16 bytes short loses
     * its end marker; one at an address off 16 bytes is refused. */
    ptec_vela_blob parsed;
    const char *detail;
    const uint8_t *blob = file + BLOB_OFFSET;
    TS(ptec_vela_blob_parse(blob, BLOB_SIZE, &parsed, &detail), PTEC_OK);
    T(parsed.scratch_size == 144 && parsed.inputs.count == 2 && parsed.outputs.count == 1 && parsed.cop.config == 0x1807 &&
      parsed.cop.stream_words == 219);
    TS(ptec_vela_blob_parse(blob, BLOB_SIZE - 16, &parsed, &detail), PTEC_INVALID_PROGRAM);
    T(strcmp(detail, "blob does not end with a vela_end_stream block") == 0);
    TS(ptec_vela_blob_parse(blob, BLOB_SIZE - 4, &parsed, &detail), PTEC_INVALID_PROGRAM);
    T(strcmp(detail, "blob length is not a multiple of 16 of at least 64 bytes") == 0);
    uint8_t *shifted = test_alloc(BLOB_SIZE + 4);
    memcpy(shifted + 4, blob, BLOB_SIZE);
    TS(ptec_vela_blob_parse(shifted + 4, BLOB_SIZE, &parsed, &detail), PTEC_INVALID_PROGRAM);
    T(strstr(detail, "blob is not 16-byte aligned") == detail);
    free(shifted);
    /* The end marker met early: a second vela_end_stream header in the middle. */
    uint8_t *twice = test_alloc(BLOB_SIZE + 32);
    memcpy(twice, blob, BLOB_SIZE);
    memcpy(twice + BLOB_SIZE, blob + END_HEADER, 32);
    TS(ptec_vela_blob_parse(twice, BLOB_SIZE + 32, &parsed, &detail), PTEC_INVALID_PROGRAM);
    T(strcmp(detail, "vela_end_stream does not end exactly at the end of the blob") == 0);
    free(twice);
}

#ifndef PTEC_TEST_FAKE_NPU
/* The NPU model as the driver: a blob whose scratch_size leaves the I/O
 * inside the work area but not the stream's intermediate results (the
 * wrong-region bug upstream meets on hardware as "outputs unchanged"): the
 * model stops at the first access past region 1, the call fails naming the
 * command, and the report of a good call carries the model's counters. */
static void check_model_fault(const uint8_t *file, size_t size)
{
    uint8_t *copy = test_alloc(size);
    memcpy(copy, file, size);
    put_u32(copy + BLOB_OFFSET + SCRATCH_HEADER + 32, 80); /* inputs at 64 and 16, output at 0 still fit */
    ptec_program p;
    TS(ptec_program_init(&p, copy, size), PTEC_OK);
    uint8_t *buf = test_alloc(1 << 16);
    ptec_method m;
    TS(load(&p, &m, buf, 1 << 16), PTEC_OK);
    T(run_pair(&m, 1, 2) == 1000);
    T_ERROR(&m, "(EthosUBackend): delegate 0: ethosu_invoke_v3 = -1 at command ");
    T(last_call.driver_result == -1 && last_call.have_stats);
    ptec_method_unload(&m);
    TS(ptec_program_init(&p, file, size), PTEC_OK);
    TS(load(&p, &m, buf, 1 << 16), PTEC_OK);
    T(run_pair(&m, 1, 2) == ((1 + 2 + 257) >> 1) - 128);
    /* 153 commands, 6 one-byte DMAs (ethos-u-npu.md §8.1); no CONV, so no MACs. */
    T(last_call.driver_result == 0 && last_call.have_stats && last_call.commands == 153 && last_call.dma_bytes == 6 &&
      last_call.macs == 0);
    ptec_method_unload(&m);
    free(buf);
    free(copy);
}
#else
/* A driver failure: the status, the driver's return and the model's fault;
 * a driver without counters reports none. */
static void check_driver_failure(const ptec_program *p)
{
    uint8_t *buf = test_alloc(1 << 16);
    ptec_method m;
    TS(load(p, &m, buf, 1 << 16), PTEC_OK);
    fake_npu.has_report = 1;
    T(run_pair(&m, 1, 2) == ((1 + 2 + 257) >> 1) - 128);
    T(last_call.have_stats && last_call.commands == 153 && last_call.dma_bytes == 6 && last_call.macs == 0);
    fake_npu.fail = 1;
    T(run_pair(&m, 1, 2) == 1000);
    T_ERROR(&m, "(EthosUBackend): delegate 0: ethosu_invoke_v3 = -1 at command 7 (QREAD 0x1c, STATUS "
                "0x1024): IFM read outside region 1");
    T(last_call.driver_result == -1);
    fake_npu.has_report = 0;
    T(run_pair(&m, 1, 2) == 1000);
    T(strstr(ptec_method_error(&m), "delegate 0: ethosu_invoke_v3 = -1") != NULL &&
      strstr(ptec_method_error(&m), "QREAD") == NULL);
    fake_npu.fail = 0;
    T(run_pair(&m, 5, 6) == ((5 + 6 + 257) >> 1) - 128 && !last_call.have_stats);
    ptec_method_unload(&m);
    free(buf);
}
#endif

extern const ptec_backend ptec_backend_ethos_u;

/* The hooks called directly, as the runtime would, with arguments a program
 * could not express: the wrong argument count, a non-tensor argument, a work
 * area short of scratch_size or off 16 bytes. */
static void check_hooks(const uint8_t *file)
{
    const ptec_backend *b = &ptec_backend_ethos_u;
    ptec_delegate_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.backend = b;
    ctx.blob.data = file + BLOB_OFFSET;
    ctx.blob.size = BLOB_SIZE;
    ptec_delegate_needs needs = {0, 0, 0};
    TS(b->prepare(&ctx, &needs), PTEC_OK);
    T(needs.scratch_bytes == 144 && needs.fast_scratch_bytes == 0 && needs.persistent_bytes > 0);
    uint8_t *persistent = test_alloc(needs.persistent_bytes);
    uint8_t *scratch = test_alloc(needs.scratch_bytes + 16);
    memset(persistent, 0, needs.persistent_bytes);
    ctx.persistent.base = persistent;
    ctx.persistent.size = needs.persistent_bytes;
    ctx.scratch.base = scratch;
    ctx.scratch.size = needs.scratch_bytes - 1;
    TS(b->init(&ctx), PTEC_MEMORY_ALLOCATION_FAILED); /* one byte short */
    ctx.scratch.base = scratch + 4;
    ctx.scratch.size = needs.scratch_bytes;
    TS(b->init(&ctx), PTEC_MEMORY_ALLOCATION_FAILED); /* off 16 bytes */
    ctx.scratch.base = scratch;
    TS(b->init(&ctx), PTEC_OK);
    int8_t a = 1, c = 2, out = 0;
    int32_t one[4] = {1, 1, 1, 1};
    ptec_tensor ta = {&a, one, NULL, 1, 1, PTEC_DTYPE_CHAR, 4, 0};
    ptec_tensor tc = {&c, one, NULL, 1, 1, PTEC_DTYPE_CHAR, 4, 0};
    ptec_tensor tout = {&out, one, NULL, 1, 1, PTEC_DTYPE_CHAR, 4, 0};
    ptec_value va = {PTEC_VALUE_TENSOR, 0, {.tensor = &ta}}, vc = {PTEC_VALUE_TENSOR, 0, {.tensor = &tc}};
    ptec_value vout = {PTEC_VALUE_TENSOR, 0, {.tensor = &tout}}, vnone = {PTEC_VALUE_NONE, 0, {.tensor = NULL}};
    ptec_value *args[3] = {&va, &vc, &vout};
    TS(b->execute(&ctx, args, 2), PTEC_INVALID_ARGUMENT);
    ptec_value *bad[3] = {&va, &vnone, &vout};
    TS(b->execute(&ctx, bad, 3), PTEC_INVALID_TYPE);
    TS(b->execute(&ctx, args, 3), PTEC_OK);
    T(out == ((1 + 2 + 257) >> 1) - 128);
    free(scratch);
    free(persistent);
}

/* The copy rules of §3.2 steps 3 and 5, on a hand-made work area. */
static void check_io_rules(void)
{
    uint8_t scratch[64];
    for (int i = 0; i < 64; ++i) {
        scratch[i] = (uint8_t)i;
    }
    const char *detail;
    int32_t sizes[2] = {2, 3};
    int8_t out[12];
    ptec_tensor t = {out, sizes, NULL, 6, 6, PTEC_DTYPE_CHAR, 2, 0};
    /* Vela shape 1x1x1x1x2x4 (innermost padded from 3 to 4), elem 1, at 8:
     * rows of 4, keep 3 of each. */
    ptec_vela_io io = {{1, 1, 1, 1, 2, 4}, 1, 8};
    TS(ptec_ethos_u_copy_output(scratch, sizeof scratch, &io, &t, &detail), PTEC_OK);
    T(out[0] == 8 && out[1] == 9 && out[2] == 10 && out[3] == 12 && out[4] == 13 && out[5] == 14);
    /* Same sizes: straight. A 0 in the shape reads as 1. */
    ptec_vela_io same = {{0, 1, 1, 1, 2, 3}, 1, 20};
    TS(ptec_ethos_u_copy_output(scratch, sizeof scratch, &same, &t, &detail), PTEC_OK);
    T(out[0] == 20 && out[5] == 25);
    /* int4: 2 rows of 3 packed bytes become 2 rows of 6 int8, low nibble
     * first, sign-extended (0x21 -> 1, 2; 0xF8 -> -8, -1). */
    uint8_t packed[6] = {0x21, 0xF8, 0x7F, 0x00, 0x90, 0xEE};
    int32_t sizes12[2] = {2, 6};
    ptec_tensor t12 = {out, sizes12, NULL, 12, 12, PTEC_DTYPE_CHAR, 2, 0};
    ptec_vela_io nibbles = {{1, 1, 1, 1, 2, 3}, 1, 0};
    TS(ptec_ethos_u_copy_output(packed, sizeof packed, &nibbles, &t12, &detail), PTEC_OK);
    static const int8_t want[12] = {1, 2, -8, -1, -1, 7, 0, 0, 0, -7, -2, -2};
    T(memcmp(out, want, 12) == 0);
    /* Neither rule: 2 rows of 4 into 2 rows of 5. */
    int32_t sizes10[2] = {2, 5};
    ptec_tensor t10 = {out, sizes10, NULL, 10, 10, PTEC_DTYPE_CHAR, 2, 0};
    TS(ptec_ethos_u_copy_output(scratch, sizeof scratch, &io, &t10, &detail), PTEC_INVALID_ARGUMENT);
    T(strstr(detail, "matches neither") != NULL);
    /* int4 only for int8 outputs. */
    t12.dtype = PTEC_DTYPE_BYTE;
    TS(ptec_ethos_u_copy_output(packed, sizeof packed, &nibbles, &t12, &detail), PTEC_INVALID_ARGUMENT);
    /* A constant output is never written. */
    ptec_tensor constant = t;
    constant.flags = PTEC_TENSOR_CONSTANT;
    TS(ptec_ethos_u_copy_output(scratch, sizeof scratch, &io, &constant, &detail), PTEC_INVALID_PROGRAM);
    /* Past the work area (a caller that passes a smaller one than parsed). */
    TS(ptec_ethos_u_copy_output(scratch, 15, &io, &t, &detail), PTEC_INVALID_PROGRAM);

    /* Inputs: dtype and elem_size must pair, numel must equal the shape's product. */
    int16_t in16[6] = {1, 2, 3, 4, 5, 6};
    ptec_tensor s16 = {in16, sizes, NULL, 6, 12, PTEC_DTYPE_SHORT, 2, 0};
    ptec_vela_io in_io = {{1, 1, 1, 1, 2, 3}, 2, 32};
    TS(ptec_ethos_u_copy_input(scratch, sizeof scratch, &in_io, &s16, &detail), PTEC_OK);
    T(memcmp(scratch + 32, in16, 12) == 0 && scratch[44] == 44);
    in_io.elem_size = 1;
    TS(ptec_ethos_u_copy_input(scratch, sizeof scratch, &in_io, &s16, &detail), PTEC_INVALID_TYPE);
    T(strstr(detail, "input dtype does not match") == detail);
    ptec_tensor f32 = {in16, sizes, NULL, 3, 12, PTEC_DTYPE_FLOAT, 2, 0};
    in_io.elem_size = 4;
    TS(ptec_ethos_u_copy_input(scratch, sizeof scratch, &in_io, &f32, &detail), PTEC_INVALID_TYPE); /* no float I/O */
    in_io.elem_size = 2;
    in_io.shape[5] = 4;
    TS(ptec_ethos_u_copy_input(scratch, sizeof scratch, &in_io, &s16, &detail), PTEC_INVALID_ARGUMENT);
    T(strcmp(detail, "input element count differs from the blob's input shape") == 0);
    in_io.shape[5] = 3;
    in_io.offset = 60;
    TS(ptec_ethos_u_copy_input(scratch, sizeof scratch, &in_io, &s16, &detail), PTEC_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_ethos_u_delegate SHARED_DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/models/upstream/ethos_u_minimal_example.pte", argv[1]);
    size_t size;
    uint8_t *bytes = test_read_file(path, &size);
    T(size > BLOB_OFFSET + BLOB_SIZE && memcmp(bytes + BLOB_OFFSET, "vela_bin_stream", 15) == 0);
    T(ptec_backend_find("EthosUBackend", 13) != NULL);
    T(ptec_ethos_u_target_name() != NULL && strcmp(ptec_ethos_u_target_name(), "ethos-u55-128") == 0 &&
      ptec_ethos_u_target_config() == 0x1807);
    ptec_program p;
    TS(ptec_program_init(&p, bytes, size), PTEC_OK);
    check_requirements(&p);
    check_all_pairs(&p);
#ifdef PTEC_TEST_FAKE_NPU
    check_driver_failure(&p);
#else
    check_model_fault(bytes, size);
#endif
    check_hostile(bytes, size);
    check_io_rules();
    check_hooks(bytes);
    free(bytes);
    return test_summary("ethos-u delegate", checks);
}
