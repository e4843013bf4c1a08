/* Runs the cases of kernel_vectors.py through the C math layer and
 * compares every output byte with the numpy reference's. The same code runs
 * on the host (kernel_vector_harness.c, case file read from disk) and on
 * the boards (kernel_vector_firmware.c, case file placed in memory by
 * QEMU's loader). */
#include "kernel_vector_cases.h"

#include <stdio.h>
#include <string.h>

#include "ptec_nn.h"

enum {
    OP_QUANTIZE_S8, OP_QUANTIZE_S16, OP_DEQUANTIZE_S8, OP_DEQUANTIZE_S16, OP_ADD, OP_MUL,
    OP_DIV_S8, OP_DIV_S16, OP_LUT, OP_MINIMUM, OP_MAXIMUM, OP_FULLY_CONNECTED, OP_CONV,
    OP_DEPTHWISE_CONV, OP_TRANSPOSE_CONV, OP_BATCH_MATMUL, OP_AVGPOOL, OP_MAXPOOL, OP_SOFTMAX,
    OP_TRANSPOSE, OP_PAD, OP_CONV_S4, OP_FULLY_CONNECTED_S4, OP_CONV_S16, OP_DEPTHWISE_CONV_S16,
    OP_FULLY_CONNECTED_S16, OP_ADD_S16, OP_MUL_S16, OP_AVGPOOL_S16, OP_MAXPOOL_S16, OP_SOFTMAX_S16,
    OP_SOFTMAX_MASKED, OP_DEPTHWISE_IN_PLACE, OP_POINTWISE_IN_PLACE, OP_DEPTHWISE_CONV_S4, OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
    "quantize_s8", "quantize_s16", "dequantize_s8", "dequantize_s16", "add", "mul", "div_s8",
    "div_s16", "lut", "minimum", "maximum", "fully_connected", "conv", "depthwise_conv",
    "transpose_conv", "batch_matmul", "avgpool", "maxpool", "softmax", "transpose", "pad", "conv_s4",
    "fully_connected_s4", "conv_s16", "depthwise_conv_s16", "fully_connected_s16", "add_s16", "mul_s16",
    "avgpool_s16", "maxpool_s16", "softmax_s16", "softmax_masked", "depthwise_in_place", "pointwise_in_place",
    "depthwise_conv_s4"};

#define MAX_INTS 64
#define MAX_BLOBS 8

typedef struct test_case {
    uint32_t op;
    uint32_t n_ints;
    int32_t ints[MAX_INTS];
    uint32_t n_blobs;
    void *blobs[MAX_BLOBS];
    uint32_t blob_sizes[MAX_BLOBS];
    uint32_t expected_size;
    uint8_t *expected;
} test_case;

/* A cursor over the case file in memory. */
typedef struct reader {
    const uint8_t *data;
    size_t size, at;
    const kv_memory *memory;
} reader;

static int read_u32(reader *r, uint32_t *v)
{
    if (r->size - r->at < 4) {
        return 0;
    }
    const uint8_t *b = r->data + r->at;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    r->at += 4;
    return 1;
}

/* n bytes of the file, copied to memory of their own (aligned, and exactly
 * sized where the host's allocator checks bounds). */
static void *read_bytes(reader *r, uint32_t n)
{
    if (r->size - r->at < n) {
        return NULL;
    }
    void *p = r->memory->alloc(r->memory->ctx, n ? n : 1);
    if (p != NULL) {
        memcpy(p, r->data + r->at, n);
        r->at += n;
    }
    return p;
}

static float as_float(int32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static ptec_nn_dims dims_at(const int32_t *v)
{
    ptec_nn_dims d = {v[0], v[1], v[2], v[3]};
    return d;
}

/* Blob i, or NULL when it is empty (an absent optional operand). */
static void *blob(const test_case *c, uint32_t i)
{
    return c->blob_sizes[i] ? c->blobs[i] : NULL;
}

static ptec_status run_conv_family(const test_case *c, void *out, const kv_memory *memory)
{
    const int32_t *v = c->ints;
    const ptec_nn_dims in = dims_at(v), filter = dims_at(v + 4), output = dims_at(v + 8);
    ptec_nn_conv_params p = {{v[12], v[13]}, {v[14], v[15]}, {v[16], v[17]}, v[18], v[19], {v[20], v[21]}};
    ptec_nn_per_channel_quant quant = {(const int32_t *)c->blobs[3], (const int32_t *)c->blobs[4]};
    const int32_t *bias = v[22] ? (const int32_t *)c->blobs[2] : NULL;
    ptec_nn_buffer scratch = {NULL, 0};
    uint32_t need;
    void *buf = NULL;
    ptec_status status;
    if (c->op == OP_CONV) {
        need = ptec_nn_convolve_s8_buffer_size(&in, &filter);
    } else if (c->op == OP_CONV_S4) {
        /* The compiler sizes the scratch with the s8 formula. */
        need = ptec_nn_convolve_s4_buffer_size(&in, &filter);
        if (need != ptec_nn_convolve_s8_buffer_size(&in, &filter)) {
            printf("conv_s4: scratch size %u differs from the s8 conv's %u\n", (unsigned)need,
                   (unsigned)ptec_nn_convolve_s8_buffer_size(&in, &filter));
            return PTEC_INTERNAL;
        }
    } else if (c->op == OP_DEPTHWISE_CONV) {
        need = ptec_nn_depthwise_conv_s8_buffer_size(&in, &filter);
    } else if (c->op == OP_DEPTHWISE_CONV_S4) {
        need = ptec_nn_depthwise_conv_s4_buffer_size(&in, &filter);
    } else {
        need = ptec_nn_transpose_conv_s8_buffer_size(&in, &filter);
    }
    if (need) {
        buf = memory->alloc(memory->ctx, need);
        if (buf == NULL) {
            return PTEC_MEMORY_ALLOCATION_FAILED;
        }
        memset(buf, 0xA5, need); /* kernels must not rely on zeroed scratch */
        scratch.buf = buf;
        scratch.size = need;
    }
    if (c->op == OP_CONV_S4) {
        status = ptec_nn_convolve_s4(scratch, &p, &quant, &in, c->blobs[0], &filter, c->blobs[1], bias, &output,
                                     out);
    } else if (c->op == OP_CONV) {
        status = ptec_nn_convolve_s8(scratch, &p, &quant, &in, c->blobs[0], &filter, c->blobs[1], bias,
                                     &output, out);
    } else if (c->op == OP_DEPTHWISE_CONV) {
        status = ptec_nn_depthwise_conv_s8(scratch, &p, v[23], &quant, &in, c->blobs[0], &filter,
                                           c->blobs[1], bias, &output, out);
    } else if (c->op == OP_DEPTHWISE_CONV_S4) {
        status = ptec_nn_depthwise_conv_s4(scratch, &p, v[23], &quant, &in, c->blobs[0], &filter,
                                           c->blobs[1], bias, &output, out);
    } else {
        status = ptec_nn_transpose_conv_s8(scratch, &p, &quant, &in, c->blobs[0], &filter, c->blobs[1],
                                           bias, &output, out);
    }
    return status;
}

/* The in-place depthwise and pointwise convolutions (the ints and blobs of
 * a depthwise or conv case whose out has the input's dims): the input is
 * copied into out and computed there. */
static ptec_status run_in_place(const test_case *c, void *out, const kv_memory *memory)
{
    const int32_t *v = c->ints;
    const ptec_nn_dims in = dims_at(v), filter = dims_at(v + 4), output = dims_at(v + 8);
    const ptec_nn_conv_params p = {{v[12], v[13]}, {v[14], v[15]}, {v[16], v[17]}, v[18], v[19], {v[20], v[21]}};
    const ptec_nn_per_channel_quant quant = {(const int32_t *)c->blobs[3], (const int32_t *)c->blobs[4]};
    const int32_t *bias = v[22] ? (const int32_t *)c->blobs[2] : NULL;
    const int depthwise = c->op == OP_DEPTHWISE_IN_PLACE;
    if (in.n != output.n || in.h != output.h || in.w != output.w || in.c != output.c ||
        c->blob_sizes[0] != c->expected_size) {
        return PTEC_INVALID_ARGUMENT;
    }
    const uint32_t need = depthwise ? ptec_nn_depthwise_in_place_s8_buffer_size(&p, &in, &filter)
                                    : ptec_nn_pointwise_in_place_s8_buffer_size(&p, &in, &filter);
    void *buf = need ? memory->alloc(memory->ctx, need) : NULL;
    if (need && buf == NULL) {
        return PTEC_MEMORY_ALLOCATION_FAILED;
    }
    if (need) {
        memset(buf, 0xA5, need); /* kernels must not rely on zeroed scratch */
    }
    const ptec_nn_buffer scratch = {buf, need};
    memcpy(out, c->blobs[0], c->expected_size);
    return depthwise ? ptec_nn_depthwise_in_place_s8(scratch, &p, &quant, &in, out, &filter, c->blobs[1], bias)
                     : ptec_nn_pointwise_in_place_s8(scratch, &p, &quant, &in, out, &filter, c->blobs[1], bias);
}

/* The a16 (int16 activation) ops, appended after the int8 ones. */
static ptec_status run_a16_case(const test_case *c, void *out)
{
    const int32_t *v = c->ints;
    switch (c->op) {
    case OP_CONV_S16:
    case OP_DEPTHWISE_CONV_S16: {
        const ptec_nn_dims in = dims_at(v), filter = dims_at(v + 4), output = dims_at(v + 8);
        const ptec_nn_conv_s16_params p = {{v[12], v[13]}, {v[14], v[15]}, {v[16], v[17]}, {v[18], v[19]}};
        const ptec_nn_per_channel_quant quant = {(const int32_t *)c->blobs[3], (const int32_t *)c->blobs[4]};
        const int64_t *bias = v[20] ? (const int64_t *)c->blobs[2] : NULL;
        if (c->op == OP_CONV_S16) {
            /* The reference needs no scratch; a variant would state its size. */
            const ptec_nn_buffer scratch = {NULL, ptec_nn_convolve_s16_buffer_size(&in, &filter)};
            if (scratch.size != 0) {
                return PTEC_NOT_SUPPORTED;
            }
            return ptec_nn_convolve_s16(scratch, &p, &quant, &in, c->blobs[0], &filter, c->blobs[1], bias, &output,
                                        out);
        }
        return ptec_nn_depthwise_conv_s16(&p, v[21], &quant, &in, c->blobs[0], &filter, c->blobs[1], bias, &output,
                                          out);
    }
    case OP_FULLY_CONNECTED_S16: {
        const ptec_nn_fc_dims d = {v[0], v[1], v[2]};
        const ptec_nn_fc_s16_params p = {{v[3], v[4]}, {v[5], v[6]}};
        return ptec_nn_fully_connected_s16(&p, &d, c->blobs[0], c->blobs[1], v[7] ? blob(c, 2) : NULL, out);
    }
    case OP_ADD_S16: {
        const ptec_nn_add_s16_params p = {{v[0], v[1]}, {v[2], v[3]}, 15, {v[4], v[5]}, {v[6], v[7]}};
        return ptec_nn_add_s16(c->blobs[0], c->blobs[1], c->blob_sizes[0] / 2, (uint32_t)v[8], out, &p);
    }
    case OP_MUL_S16: {
        const ptec_nn_mul_s16_params p = {{v[0], v[1]}, {INT16_MIN, INT16_MAX}};
        return ptec_nn_mul_s16(c->blobs[0], c->blobs[1], c->blob_sizes[0] / 2, (uint32_t)v[2], out, &p);
    }
    case OP_AVGPOOL_S16:
    case OP_MAXPOOL_S16: {
        const ptec_nn_dims in = dims_at(v), output = dims_at(v + 4);
        ptec_nn_pool_params p = {{v[8], v[9]}, {v[10], v[11]}, {v[12], v[13]}, {INT16_MIN, INT16_MAX}};
        if (c->op == OP_MAXPOOL_S16) {
            p.activation.min = v[14];
            p.activation.max = v[15];
            return ptec_nn_maxpool_s16(&p, &in, c->blobs[0], &output, out);
        }
        return ptec_nn_avgpool_s16(&p, &in, c->blobs[0], &output, out);
    }
    case OP_SOFTMAX_S16: {
        const ptec_nn_softmax_s16_params p = {v[2], v[3], c->blobs[1], c->blobs[2]};
        return ptec_nn_softmax_s16(c->blobs[0], v[0], v[1], &p, out);
    }
    case OP_SOFTMAX_MASKED: {
        const ptec_nn_softmax_params p = {v[3], v[4], v[5]};
        return ptec_nn_softmax_masked_s8(c->blobs[0], v[0], v[1], c->blobs[1], v[2], &p, out);
    }
    default:
        return PTEC_NOT_SUPPORTED;
    }
}

static ptec_status run_case(const test_case *c, void *out, const kv_memory *memory)
{
    const int32_t *v = c->ints;
    switch (c->op) {
    case OP_QUANTIZE_S8:
    case OP_QUANTIZE_S16:
    case OP_DEQUANTIZE_S8:
    case OP_DEQUANTIZE_S16: {
        ptec_nn_quantize_params p = {as_float(v[0]), v[1], v[2], v[3]};
        if (c->op == OP_QUANTIZE_S8) {
            return ptec_nn_quantize_f32_s8(c->blobs[0], out, c->blob_sizes[0] / 4, &p);
        }
        if (c->op == OP_QUANTIZE_S16) {
            return ptec_nn_quantize_f32_s16(c->blobs[0], out, c->blob_sizes[0] / 4, &p);
        }
        if (c->op == OP_DEQUANTIZE_S8) {
            return ptec_nn_dequantize_s8_f32(c->blobs[0], out, c->blob_sizes[0], &p);
        }
        return ptec_nn_dequantize_s16_f32(c->blobs[0], out, c->blob_sizes[0] / 2, &p);
    }
    case OP_ADD: {
        ptec_nn_add_params p = {v[0], v[1], {v[2], v[3]}, {v[4], v[5]}, 20, v[6], {v[7], v[8]}, {v[9], v[10]}};
        return ptec_nn_add_s8(c->blobs[0], c->blobs[1], c->blob_sizes[0], (uint32_t)v[11], out, &p);
    }
    case OP_MUL: {
        ptec_nn_mul_params p = {v[0], v[1], v[2], {v[3], v[4]}, {-128, 127}};
        return ptec_nn_mul_s8(c->blobs[0], c->blobs[1], c->blob_sizes[0], (uint32_t)v[5], out, &p);
    }
    case OP_DIV_S8:
    case OP_DIV_S16: {
        ptec_nn_div_params p = {v[0], v[1], v[2], as_float(v[3])};
        if (c->op == OP_DIV_S8) {
            return ptec_nn_div_s8(c->blobs[0], c->blobs[1], out, c->blob_sizes[0], &p);
        }
        return ptec_nn_div_s16(c->blobs[0], c->blobs[1], out, c->blob_sizes[0] / 2, &p);
    }
    case OP_LUT:
        return ptec_nn_lut_s8(c->blobs[0], c->blobs[1], out, c->blob_sizes[0]);
    case OP_MINIMUM:
        return ptec_nn_minimum_s8(c->blobs[0], v, c->blobs[1], v + 4, out, v + 8);
    case OP_MAXIMUM:
        return ptec_nn_maximum_s8(c->blobs[0], v, c->blobs[1], v + 4, out, v + 8);
    case OP_FULLY_CONNECTED: {
        ptec_nn_fc_dims d = {v[0], v[1], v[2]};
        ptec_nn_fc_params p = {v[3], v[4], v[5], {v[6], v[7]}, {v[8], v[9]}};
        return ptec_nn_fully_connected_s8(&p, &d, c->blobs[0], c->blobs[1], v[10] ? blob(c, 2) : NULL,
                                          v[11] ? blob(c, 3) : NULL, out);
    }
    case OP_FULLY_CONNECTED_S4: {
        ptec_nn_fc_dims d = {v[0], v[1], v[2]};
        ptec_nn_fc_params p = {v[3], 0, v[4], {v[5], v[6]}, {v[7], v[8]}};
        return ptec_nn_fully_connected_s4(&p, &d, c->blobs[0], c->blobs[1], v[9] ? blob(c, 2) : NULL, out);
    }
    case OP_CONV:
    case OP_CONV_S4:
    case OP_DEPTHWISE_CONV:
    case OP_DEPTHWISE_CONV_S4:
    case OP_TRANSPOSE_CONV:
        return run_conv_family(c, out, memory);
    case OP_DEPTHWISE_IN_PLACE:
    case OP_POINTWISE_IN_PLACE:
        return run_in_place(c, out, memory);
    case OP_BATCH_MATMUL: {
        ptec_nn_bmm_dims d = {v[0], v[1], v[2], v[3]};
        ptec_nn_bmm_params p = {v[4], v[5], v[6], {v[7], v[8]}, {-128, 127}};
        ptec_nn_buffer scratch = {NULL, 0};
        return ptec_nn_batch_matmul_s8(scratch, &p, &d, c->blobs[0], c->blobs[1], out);
    }
    case OP_AVGPOOL:
    case OP_MAXPOOL: {
        const ptec_nn_dims in = dims_at(v), output = dims_at(v + 4);
        ptec_nn_pool_params p = {{v[8], v[9]}, {v[10], v[11]}, {v[12], v[13]}, {-128, 127}};
        if (c->op == OP_MAXPOOL) {
            p.activation.min = v[14];
            p.activation.max = v[15];
            return ptec_nn_maxpool_s8(&p, &in, c->blobs[0], &output, out);
        }
        ptec_nn_buffer scratch = {NULL, ptec_nn_avgpool_s8_buffer_size(&in)};
        if (scratch.size) {
            scratch.buf = memory->alloc(memory->ctx, scratch.size);
            if (scratch.buf == NULL) {
                return PTEC_MEMORY_ALLOCATION_FAILED;
            }
        }
        return ptec_nn_avgpool_s8(scratch, &p, &in, c->blobs[0], &output, out);
    }
    case OP_SOFTMAX: {
        ptec_nn_softmax_params p = {v[2], v[3], v[4]};
        return ptec_nn_softmax_s8(c->blobs[0], v[0], v[1], &p, out);
    }
    case OP_TRANSPOSE:
        return ptec_nn_transpose_s8(c->blobs[0], v + 1, v[0], v + 5, out);
    case OP_PAD:
        return ptec_nn_pad_s8(blob(c, 0), v, v + 4, v + 8, (int8_t)v[12], out);
    default:
        return run_a16_case(c, out);
    }
}

static void report_mismatch(const test_case *c, uint32_t index, const uint8_t *got)
{
    uint32_t first = 0;
    while (first < c->expected_size && got[first] == c->expected[first]) {
        ++first;
    }
    printf("MISMATCH %s case %u: byte %u of %u: got %d, expected %d; ints:", op_names[c->op], (unsigned)index,
           (unsigned)first, (unsigned)c->expected_size, (int)(int8_t)got[first], (int)(int8_t)c->expected[first]);
    for (uint32_t i = 0; i < c->n_ints; ++i) {
        printf(" %ld", (long)c->ints[i]);
    }
    printf("\n");
}


int kv_run_cases(const uint8_t *data, size_t size, const kv_memory *memory)
{
    reader r = {data, size, 0, memory};
    unsigned counts[OP_COUNT] = {0};
    unsigned failures[OP_COUNT] = {0};
    unsigned total = 0, failed = 0;
    test_case c;
    while (r.at < r.size) {
        memory->release_all(memory->ctx);
        int ok = read_u32(&r, &c.op) && c.op < OP_COUNT && read_u32(&r, &c.n_ints) && c.n_ints <= MAX_INTS;
        for (uint32_t i = 0; ok && i < c.n_ints; ++i) {
            uint32_t u = 0;
            ok = read_u32(&r, &u);
            c.ints[i] = (int32_t)u;
        }
        ok = ok && read_u32(&r, &c.n_blobs) && c.n_blobs <= MAX_BLOBS;
        for (uint32_t i = 0; ok && i < c.n_blobs; ++i) {
            ok = read_u32(&r, &c.blob_sizes[i]) && (c.blobs[i] = read_bytes(&r, c.blob_sizes[i])) != NULL;
        }
        ok = ok && read_u32(&r, &c.expected_size) && (c.expected = read_bytes(&r, c.expected_size)) != NULL;
        uint8_t *got = ok ? memory->alloc(memory->ctx, c.expected_size ? c.expected_size : 1) : NULL;
        if (got == NULL) {
            printf("harness: malformed case file, or out of memory, at byte %lu\n", (unsigned long)r.at);
            memory->release_all(memory->ctx);
            return -1;
        }
        memset(got, 0x5A, c.expected_size);
        const ptec_status status = run_case(&c, c.expected_size ? got : NULL, memory);
        const unsigned index = counts[c.op]++;
        ++total;
        if (status != PTEC_OK) {
            printf("FAILED %s case %u: status 0x%x\n", op_names[c.op], index, (unsigned)status);
            ++failures[c.op];
            ++failed;
        } else if (memcmp(got, c.expected, c.expected_size) != 0) {
            if (failures[c.op] < 5) {
                report_mismatch(&c, index, got);
            }
            ++failures[c.op];
            ++failed;
        }
    }
    memory->release_all(memory->ctx);
    for (unsigned op = 0; op < OP_COUNT; ++op) {
        if (counts[op] != 0) {
            printf("%-16s %5u cases, %u mismatched\n", op_names[op], counts[op], failures[op]);
        }
    }
    printf("harness: %u cases, %u failed\n", total, failed);
    return total == 0 ? -1 : (int)failed;
}
