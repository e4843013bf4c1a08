/* The vela_bin_stream parser (spec ethos-u-delegate.md §2, §4.2). Upstream's
 * runtime walks the same blocks; this walk is stricter where a lie would
 * otherwise reach the NPU or a copy: each block once and in the writer's
 * order, exact payload sizes for the fixed-size blocks, I/O tables whose
 * entries all fit the scratch area, and COP1 records that fit cmd_data with
 * exactly one command stream. All arithmetic on blob numbers is 64-bit, so
 * no sum of u32 fields can wrap. */
#include <string.h>

#include "backends/ethos_u/vela_blob.h"

#define HEADER_BYTES 32u
#define NAME_BYTES 16u
#define COP1_FOURCC 0x31504F43u /* "COP1" little-endian */
#define COP2_FOURCC 0x32504F43u
#define ACTION_OPTIMIZER_CONFIG 1u
#define ACTION_COMMAND_STREAM 2u
#define ACTION_NOP 5u

/* The blocks in the order upstream's writer emits them. */
enum { B_START, B_CMD, B_WEIGHT, B_SCRATCH, B_INPUTS, B_OUTPUTS, B_END, B_COUNT };
static const char *const block_names[B_COUNT] = {"vela_bin_stream", "cmd_data",       "weight_data",
                                                  "scratch_size",    "inputs",         "outputs",
                                                  "vela_end_stream"};
static const char *const out_of_order[B_COUNT] = {
    "block vela_bin_stream is not the first block",
    "block cmd_data is missing or out of order (expected after vela_bin_stream)",
    "block weight_data is missing or out of order (expected after cmd_data)",
    "block scratch_size is missing or out of order (expected after weight_data)",
    "block inputs is missing or out of order (expected after scratch_size)",
    "block outputs is missing or out of order (expected after inputs)",
    "block vela_end_stream is missing or out of order (expected after outputs)"};
static const char *const past_end[B_COUNT] = {
    "block vela_bin_stream runs past the end of the blob", "block cmd_data runs past the end of the blob",
    "block weight_data runs past the end of the blob",     "block scratch_size runs past the end of the blob",
    "block inputs runs past the end of the blob",          "block outputs runs past the end of the blob",
    "block vela_end_stream runs past the end of the blob"};

static ptec_status fail(const char **detail, ptec_status status, const char *why)
{
    *detail = why;
    return status;
}

/* Upstream matches names as prefixes of the 16-byte field (strncmp with the
 * known name's length); B_COUNT for an unknown name. */
static int block_kind(const uint8_t *name)
{
    for (int k = 0; k < B_COUNT; ++k) {
        if (strncmp((const char *)name, block_names[k], strlen(block_names[k])) == 0) {
            return k;
        }
    }
    return B_COUNT;
}

static ptec_status parse_io(const uint8_t *p, uint32_t size, uint32_t scratch_size, int outputs,
                            ptec_vela_io_table *table, const char **detail)
{
    if (size < 4u) {
        return fail(detail, PTEC_INVALID_PROGRAM,
                    outputs ? "outputs block is shorter than its count" : "inputs block is shorter than its count");
    }
    const uint32_t count = ptec_vela_u32(p);
    if ((uint64_t)count * PTEC_VELA_IO_ENTRY_BYTES + 4u != size) {
        return fail(detail, PTEC_INVALID_PROGRAM,
                    outputs ? "outputs block size does not match its entry count"
                            : "inputs block size does not match its entry count");
    }
    table->entries = p + 4;
    table->count = count;
    for (uint32_t i = 0; i < count; ++i) {
        const uint8_t *e = table->entries + (size_t)i * PTEC_VELA_IO_ENTRY_BYTES;
        for (uint32_t d = 0; d < PTEC_VELA_SHAPE_RANK; ++d) {
            if ((int32_t)ptec_vela_u32(e + 4u * d) < 0) {
                return fail(detail, PTEC_INVALID_PROGRAM,
                            outputs ? "an output shape entry is negative" : "an input shape entry is negative");
            }
        }
        const uint32_t elem = ptec_vela_u32(e + 24), offset = ptec_vela_u32(e + 28), region = ptec_vela_u32(e + 32);
        if (elem != 1u && elem != 2u && elem != 4u) {
            return fail(detail, PTEC_INVALID_PROGRAM,
                        outputs ? "an output's elem_size is not 1, 2 or 4" : "an input's elem_size is not 1, 2 or 4");
        }
        if (region != PTEC_VELA_SCRATCH_REGION) {
            return fail(detail, PTEC_INVALID_PROGRAM,
                        outputs ? "an output is not in region 1 (the scratch area, where the delegate copies I/O)"
                                : "an input is not in region 1 (the scratch area, where the delegate copies I/O)");
        }
        /* Every copy in or out stays within the tensor's Vela bytes (the
         * shape with 0 read as 1, times elem_size): all of them must lie in
         * the scratch area. Six entries below 2^31 each can reach 2^186, so
         * the product stops as soon as it passes the scratch size. */
        uint64_t bytes = elem;
        for (uint32_t d = 0; d < PTEC_VELA_SHAPE_RANK && bytes <= scratch_size; ++d) {
            const uint32_t dim = ptec_vela_u32(e + 4u * d);
            bytes *= dim == 0 ? 1u : dim;
        }
        if ((int32_t)offset < 0 || bytes > scratch_size || offset > scratch_size - bytes) {
            return fail(detail, PTEC_INVALID_PROGRAM,
                        outputs ? "an output lies outside the scratch area (offset + size > scratch_size)"
                                : "an input lies outside the scratch area (offset + size > scratch_size)");
        }
    }
    return PTEC_OK;
}

static ptec_status parse_cop(const uint8_t *cmd, uint32_t size, ptec_vela_cop *cop, const char **detail)
{
    if (size < 4u || size % 4u != 0 || size > (uint32_t)INT32_MAX) {
        /* ethosu_invoke_v3 takes the size as an int */
        return fail(detail, PTEC_INVALID_PROGRAM, "cmd_data size is not a positive multiple of 4 below 2 GiB");
    }
    const uint32_t fourcc = ptec_vela_u32(cmd);
    if (fourcc == COP2_FOURCC) {
        return fail(detail, PTEC_NOT_SUPPORTED, "cmd_data is COP2, which Ethos-U55/U65 drivers do not run");
    }
    if (fourcc != COP1_FOURCC) {
        return fail(detail, PTEC_INVALID_PROGRAM, "cmd_data does not start with COP1");
    }
    const uint32_t words = size / 4u;
    uint32_t configs = 0, streams = 0;
    for (uint32_t i = 1; i < words;) {
        const uint32_t header = ptec_vela_u32(cmd + 4u * i);
        const uint32_t action = header & 0xFFu;
        if (action == ACTION_OPTIMIZER_CONFIG) {
            if (words - i < 3u) {
                return fail(detail, PTEC_INVALID_PROGRAM, "COP1 OPTIMIZER_CONFIG record runs past cmd_data");
            }
            cop->config = ptec_vela_u32(cmd + 4u * (i + 1u));
            cop->id = ptec_vela_u32(cmd + 4u * (i + 2u));
            ++configs;
            i += 3u;
        } else if (action == ACTION_COMMAND_STREAM) {
            const uint32_t length = ((header >> 8) & 0xFFu) << 16 | header >> 16;
            if (length > words - i - 1u) {
                return fail(detail, PTEC_INVALID_PROGRAM, "COP1 COMMAND_STREAM record runs past cmd_data");
            }
            cop->stream_offset = 4u * (i + 1u);
            cop->stream_words = length;
            ++streams;
            i += 1u + length;
        } else if (action == ACTION_NOP) {
            ++i;
        } else {
            return fail(detail, PTEC_INVALID_PROGRAM, "COP1 record with an unknown action (not 1, 2 or 5)");
        }
    }
    if (configs != 1u) {
        return fail(detail, PTEC_INVALID_PROGRAM,
                    configs ? "COP1 has more than one OPTIMIZER_CONFIG record" : "COP1 has no OPTIMIZER_CONFIG record");
    }
    if (streams != 1u) {
        return fail(detail, PTEC_INVALID_PROGRAM,
                    streams ? "COP1 has more than one COMMAND_STREAM record" : "COP1 has no COMMAND_STREAM record");
    }
    if (cop->stream_words == 0) {
        return fail(detail, PTEC_INVALID_PROGRAM, "COP1 command stream is empty");
    }
    if (cop->stream_offset % 16u != 0) {
        return fail(detail, PTEC_INVALID_PROGRAM, "COP1 command stream is not 16-byte aligned (the driver requires it)");
    }
    return PTEC_OK;
}

ptec_status ptec_vela_blob_parse(const uint8_t *data, size_t size, ptec_vela_blob *out, const char **detail)
{
    memset(out, 0, sizeof *out);
    *detail = "";
    if (data == NULL || ((uintptr_t)data & 15u) != 0) {
        return fail(detail, PTEC_INVALID_PROGRAM,
                    "blob is not 16-byte aligned in memory (the NPU reads its command and weight data in place)");
    }
    if (size < 2u * HEADER_BYTES || size % 16u != 0) {
        return fail(detail, PTEC_INVALID_PROGRAM, "blob length is not a multiple of 16 of at least 64 bytes");
    }
    if (block_kind(data) != B_START) {
        return fail(detail, PTEC_INVALID_PROGRAM, "blob does not start with a vela_bin_stream block");
    }
    if (block_kind(data + size - HEADER_BYTES) != B_END) {
        return fail(detail, PTEC_INVALID_PROGRAM, "blob does not end with a vela_end_stream block");
    }
    const uint8_t *payload[B_COUNT] = {NULL};
    uint32_t payload_size[B_COUNT] = {0};
    int expect = B_START;
    size_t pos = 0;
    while (pos < size) {
        if (size - pos < HEADER_BYTES) {
            return fail(detail, PTEC_INVALID_PROGRAM, "block header runs past the end of the blob");
        }
        const uint8_t *header = data + pos;
        const int kind = block_kind(header);
        if (kind == B_COUNT) {
            return fail(detail, PTEC_INVALID_PROGRAM, "unknown block name in the blob");
        }
        if (kind != expect) {
            return fail(detail, PTEC_INVALID_PROGRAM, out_of_order[expect]);
        }
        const uint32_t bytes = ptec_vela_u32(header + NAME_BYTES);
        const uint64_t padded = ((uint64_t)bytes + 15u) & ~(uint64_t)15u;
        if (padded > size - pos - HEADER_BYTES) {
            return fail(detail, PTEC_INVALID_PROGRAM, past_end[kind]);
        }
        if (header[20] > 1u) {
            return fail(detail, PTEC_INVALID_PROGRAM, "block external flag is neither 0 nor 1");
        }
        if (header[20] == 1u) {
            return fail(detail, PTEC_NOT_SUPPORTED,
                        "block is external (named data), which this delegate does not read");
        }
        payload[kind] = header + HEADER_BYTES;
        payload_size[kind] = bytes;
        pos += HEADER_BYTES + (size_t)padded;
        ++expect;
        if (kind == B_END) {
            break;
        }
    }
    if (expect != B_COUNT || pos != size) {
        /* The walk met vela_end_stream early (its header also sits at the
         * end, so the blob holds it twice) or never met it. */
        return fail(detail, PTEC_INVALID_PROGRAM, "vela_end_stream does not end exactly at the end of the blob");
    }
    if (payload_size[B_START] != 0 || payload_size[B_END] != 0) {
        return fail(detail, PTEC_INVALID_PROGRAM, "vela_bin_stream and vela_end_stream must be empty");
    }
    if (payload_size[B_SCRATCH] != 4u) {
        return fail(detail, PTEC_INVALID_PROGRAM, "scratch_size block is not 4 bytes");
    }
    out->cmd_data = payload[B_CMD];
    out->cmd_size = payload_size[B_CMD];
    out->weight_data = payload[B_WEIGHT];
    out->weight_size = payload_size[B_WEIGHT];
    out->scratch_size = ptec_vela_u32(payload[B_SCRATCH]);
    ptec_status st = parse_cop(out->cmd_data, out->cmd_size, &out->cop, detail);
    if (st == PTEC_OK) {
        st = parse_io(payload[B_INPUTS], payload_size[B_INPUTS], out->scratch_size, 0, &out->inputs, detail);
    }
    if (st == PTEC_OK) {
        st = parse_io(payload[B_OUTPUTS], payload_size[B_OUTPUTS], out->scratch_size, 1, &out->outputs, detail);
    }
    return st;
}

void ptec_vela_io_at(const ptec_vela_io_table *table, uint32_t i, ptec_vela_io *out)
{
    const uint8_t *e = table->entries + (size_t)i * PTEC_VELA_IO_ENTRY_BYTES;
    for (uint32_t d = 0; d < PTEC_VELA_SHAPE_RANK; ++d) {
        out->shape[d] = ptec_vela_u32(e + 4u * d);
    }
    out->elem_size = ptec_vela_u32(e + 24);
    out->offset = ptec_vela_u32(e + 28);
}

int ptec_vela_io_elements(const ptec_vela_io *io, size_t *elements, size_t *rows)
{
    /* The parse bounded elements * elem_size by the u32 scratch size. */
    size_t n = 1;
    for (uint32_t d = 0; d < PTEC_VELA_SHAPE_RANK; ++d) {
        if (d == PTEC_VELA_SHAPE_RANK - 1u) {
            *rows = n;
        }
        const size_t dim = io->shape[d] == 0 ? 1u : io->shape[d];
        if (dim != 0 && n > SIZE_MAX / dim) {
            return 0;
        }
        n *= dim;
    }
    *elements = n;
    return 1;
}
