/* A bounds-checked, read-only view of a flatbuffer. Every read checks that
 * its bytes lie inside the buffer; a false return means the bytes are not a
 * valid flatbuffer (a corrupt or truncated file), never a crash.
 * Scalars are read byte by byte, so nothing needs to be aligned. */
#ifndef PTEC_RUNTIME_FLATBUFFER_H
#define PTEC_RUNTIME_FLATBUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct fb_view {
    const uint8_t *base;
    uint32_t size;
} fb_view;

typedef struct fb_table {
    uint32_t pos;     /* table start */
    uint32_t vtable;
    uint16_t vt_len;
    uint16_t obj_len;
} fb_table;

typedef struct fb_vector {
    uint32_t data;    /* position of element 0 (0 when absent) */
    uint32_t count;
    bool present;
} fb_vector;

/* Little-endian loads. The runtime only builds for little-endian targets
 * (runtime_internal.h), so a memcpy is the load itself: one LDR on cores
 * with unaligned access, byte loads elsewhere. */
static inline uint16_t fb_le16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint32_t fb_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint64_t fb_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

bool ptec_fb_table_at(const fb_view *fb, uint32_t pos, fb_table *out);
/* Position of field `id`, 0 when absent. False when the slot is malformed. */
bool ptec_fb_field(const fb_view *fb, const fb_table *t, unsigned id, uint32_t width, uint32_t *pos);

bool ptec_fb_u8(const fb_view *fb, const fb_table *t, unsigned id, uint8_t dflt, uint8_t *out);
bool ptec_fb_u32(const fb_view *fb, const fb_table *t, unsigned id, uint32_t dflt, uint32_t *out);
bool ptec_fb_u64(const fb_view *fb, const fb_table *t, unsigned id, uint64_t dflt, uint64_t *out);
bool ptec_fb_f64(const fb_view *fb, const fb_table *t, unsigned id, double dflt, double *out);

/* A sub-table field; *present is false when absent. */
bool ptec_fb_subtable(const fb_view *fb, const fb_table *t, unsigned id, fb_table *out, bool *present);
/* A vector field of elem_size-byte elements; absent gives count 0. */
bool ptec_fb_vec(const fb_view *fb, const fb_table *t, unsigned id, uint32_t elem_size, fb_vector *out);
/* Element i of a vector of tables. */
bool ptec_fb_vec_table(const fb_view *fb, const fb_vector *v, uint32_t i, fb_table *out);
/* A string field; absent gives len 0 and *s pointing at "". */
bool ptec_fb_string(const fb_view *fb, const fb_table *t, unsigned id, const char **s, uint32_t *len);

#endif
