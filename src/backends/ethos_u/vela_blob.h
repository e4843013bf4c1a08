/* The upstream EthosUBackend blob ("vela_bin_stream", spec
 * ethos-u-delegate.md §2): framing, block order, the COP1 command data and
 * the I/O tables, every length, offset and count checked before use. The
 * parsed view points into the blob, which stays resident while the method is
 * loaded; nothing is copied. */
#ifndef PTEC_VELA_BLOB_H
#define PTEC_VELA_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "ptec/status.h"

#define PTEC_VELA_SHAPE_RANK 6u
#define PTEC_VELA_IO_ENTRY_BYTES 36u /* shape[6], elem_size, offset, region: i32 each */
#define PTEC_VELA_SCRATCH_REGION 1u  /* Vela's region of every I/O tensor */

/* One I/O table entry, checked: shape entries >= 0, elem_size 1, 2 or 4,
 * region 1 and the tensor's Vela bytes inside the scratch area. */
typedef struct ptec_vela_io {
    uint32_t shape[PTEC_VELA_SHAPE_RANK];
    uint32_t elem_size;
    uint32_t offset; /* bytes into the scratch area (region 1) */
} ptec_vela_io;

/* An I/O table: `count` entries of PTEC_VELA_IO_ENTRY_BYTES at `entries`. */
typedef struct ptec_vela_io_table {
    const uint8_t *entries;
    uint32_t count;
} ptec_vela_io_table;

/* COP1 command data, walked: the driver's records (spec ethos-u-delegate.md §4.2). */
typedef struct ptec_vela_cop {
    uint32_t config;        /* OPTIMIZER_CONFIG config word (ethos-u-npu.md §2) */
    uint32_t id;            /* and its id word */
    uint32_t stream_offset; /* bytes from the start of cmd_data to the command stream */
    uint32_t stream_words;
} ptec_vela_cop;

typedef struct ptec_vela_blob {
    const uint8_t *cmd_data;
    uint32_t cmd_size;
    const uint8_t *weight_data; /* region 0; NULL when the block is empty */
    uint32_t weight_size;
    uint32_t scratch_size;      /* region 1 bytes, as Vela planned them */
    ptec_vela_io_table inputs, outputs;
    ptec_vela_cop cop;
} ptec_vela_blob;

/* Parses and checks `size` bytes at `data` (which must be 16-byte aligned).
 * PTEC_OK fills *out; otherwise *detail is a static sentence saying what the
 * blob got wrong (PTEC_DELEGATE_INVALID_COMPATIBILITY for a malformed blob,
 * PTEC_NOT_SUPPORTED for a well-formed one this build cannot run). */
ptec_status ptec_vela_blob_parse(const uint8_t *data, size_t size, ptec_vela_blob *out, const char **detail);

/* Entry i of a parsed table (i < table->count). */
void ptec_vela_io_at(const ptec_vela_io_table *table, uint32_t i, ptec_vela_io *out);

/* The product of an entry's shape with each 0 read as 1 (the output copy's
 * rule) and of its first five entries; false when either overflows size_t. */
int ptec_vela_io_elements(const ptec_vela_io *io, size_t *elements, size_t *rows);

/* Little-endian u32 at p (the blob has no alignment promise below 16 bytes
 * for every field, and the host may be big-endian). */
static inline uint32_t ptec_vela_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
