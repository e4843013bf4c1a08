/* A bounds-checked, read-only view of a flatbuffer.
 *
 * Errors are sticky: a read that would leave the buffer sets `bad` and
 * returns the field's default (an absent table, an empty vector, 0). Callers
 * read everything an object needs and check `bad` once, so a corrupt or
 * truncated file costs one test per object instead of one per field. */
#ifndef PTEC_RUNTIME_FLATBUFFER_H
#define PTEC_RUNTIME_FLATBUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct fb_view {
    const uint8_t *base;
    uint32_t size;
    bool bad;
} fb_view;

/* A table, or "none" (pos 0: no table can start at byte 0). */
typedef struct fb_table {
    uint32_t pos;
    uint32_t vtable;
    uint32_t vt_len;
} fb_table;

typedef struct fb_vector {
    uint32_t data;    /* position of element 0 */
    uint32_t count;   /* 0 when absent */
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

/* The table at `pos`, its vtable checked to lie in the buffer; "none" and
 * `bad` set otherwise. Inline, with ptec_fb_at and ptec_fb_sub below: a
 * load validates three or four tables per value, and the calls (and their
 * struct returns through memory) were a third of that. The decoding of
 * values and instructions uses these; colder code calls the out-of-line
 * ptec_fb_table, ptec_fb_at and ptec_fb_sub (the same checks), which keep
 * the inline bodies out of every file that reads a table. */
static inline fb_table ptec_fb_table_inline(fb_view *fb, uint32_t pos)
{
    fb_table t = {0, 0, 0};
    const uint32_t size = fb->size;
    /* pos 0 is "no table"; the soffset at pos and the vtable's two length
     * fields must lie in the buffer, and so must the whole vtable. The
     * vtable's obj_len is not used: upstream's writer can under-report it,
     * so fields are bounded by the buffer instead. */
    if (pos != 0 && size >= 4u && pos <= size - 4u) {
        const int64_t vtable = (int64_t)pos - (int32_t)fb_le32(fb->base + pos);
        if (vtable >= 0 && (uint64_t)vtable <= size - 4u) {
            const uint32_t vt_len = fb_le16(fb->base + vtable);
            if (vt_len >= 4u && vt_len <= size - (uint32_t)vtable) {
                t.pos = pos;
                t.vtable = (uint32_t)vtable;
                t.vt_len = vt_len;
                return t;
            }
        }
    }
    fb->bad = true;
    return t;
}

/* Position of field `id` holding `width` bytes, or 0 when absent (a field
 * that would leave the buffer sets `bad`). Inline, with the scalar readers
 * below: a load reads about ten fields per value, and a call per field was
 * a third of decoding one. */
static inline uint32_t ptec_fb_field(fb_view *fb, const fb_table *t, unsigned id, uint32_t width)
{
    uint32_t slot = 4u + 2u * id;
    if (t->pos == 0 || slot + 2u > t->vt_len) {
        return 0;
    }
    uint32_t voffset = fb_le16(fb->base + t->vtable + slot);
    if (voffset == 0) {
        return 0;
    }
    /* pos < size and voffset < 2^16: no overflow in 64 bits. */
    if ((uint64_t)t->pos + voffset + width > fb->size) {
        fb->bad = true;
        return 0;
    }
    return t->pos + voffset;
}

/* Address of field `id` holding `width` bytes, or NULL when absent. */
static inline const uint8_t *ptec_fb_field_bytes(fb_view *fb, const fb_table *t, unsigned id, uint32_t width)
{
    uint32_t pos = ptec_fb_field(fb, t, id, width);
    return pos ? fb->base + pos : NULL;
}

static inline uint8_t ptec_fb_u8(fb_view *fb, const fb_table *t, unsigned id, uint8_t dflt)
{
    uint32_t pos = ptec_fb_field(fb, t, id, 1);
    return pos ? fb->base[pos] : dflt;
}

static inline uint32_t ptec_fb_u32(fb_view *fb, const fb_table *t, unsigned id, uint32_t dflt)
{
    uint32_t pos = ptec_fb_field(fb, t, id, 4);
    return pos ? fb_le32(fb->base + pos) : dflt;
}

static inline uint64_t ptec_fb_u64(fb_view *fb, const fb_table *t, unsigned id, uint64_t dflt)
{
    uint32_t pos = ptec_fb_field(fb, t, id, 8);
    return pos ? fb_le64(fb->base + pos) : dflt;
}

/* Positions of fields 0..n-1 of table `t`, each as ptec_fb_field(fb, t,
 * id, widths[id]) finds it (0 when absent), in one call: a field whose
 * width is 0 is one the caller does not read, left at 0 unchecked. The
 * decoding of values reads a table's fields this way, where a call per
 * field (GCC keeps ptec_fb_field out of line at -Os) cost a third of it.
 * ptec_fb_field's checks, with what is the same for every field hoisted:
 * field id is in the vtable when 4 + 2 * id + 2 <= vt_len, and a table
 * that is not "none" has vt_len >= 4 and pos <= size - 4. */
static inline void ptec_fb_fields(fb_view *fb, const fb_table *t, unsigned n, const uint8_t *widths, uint32_t *pos)
{
    const uint32_t slots = t->pos != 0 ? (t->vt_len - 4u) / 2u : 0u;
    const uint8_t *vt = fb->base + t->vtable + 4u;
    const uint32_t room = fb->size - t->pos; /* >= 4 when slots > 0 */
#if !defined(__OPTIMIZE_SIZE__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 16 /* speed builds: each field's width a constant */
#endif
    for (unsigned id = 0; id < n; ++id) {
        uint32_t at = 0;
        if (id < slots && widths[id] != 0) {
            const uint32_t voffset = fb_le16(vt + 2u * id);
            if (voffset != 0) {
                if (voffset + widths[id] > room) {
                    fb->bad = true;
                } else {
                    at = t->pos + voffset;
                }
            }
        }
        pos[id] = at;
    }
}

/* The sub-table whose uoffset is at `pos` (a field position; 0: absent). */
static inline fb_table ptec_fb_sub_at(fb_view *fb, uint32_t pos)
{
    if (pos != 0) {
        /* pos + 4 <= size < 2^32: no overflow in 64 bits. */
        uint64_t dest = (uint64_t)pos + fb_le32(fb->base + pos);
        if (dest < fb->size) {
            return ptec_fb_table_inline(fb, (uint32_t)dest);
        }
        fb->bad = true;
    }
    fb_table none = {0, 0, 0};
    return none;
}

/* Sub-table field; pos 0 when absent. */
static inline fb_table ptec_fb_sub_inline(fb_view *fb, const fb_table *t, unsigned id)
{
    return ptec_fb_sub_at(fb, ptec_fb_field(fb, t, id, 4));
}
/* Vector field of elem_size-byte elements; count 0 when absent. */
fb_vector ptec_fb_vec(fb_view *fb, const fb_table *t, unsigned id, uint32_t elem_size);
/* Element i of a vector of tables (bad when i is out of range). The
 * vector's elements were checked to lie in the buffer when it was read. */
static inline fb_table ptec_fb_at_inline(fb_view *fb, const fb_vector *v, uint32_t i)
{
    if (i >= v->count) {
        fb_table none = {0, 0, 0};
        fb->bad = true;
        return none;
    }
    uint32_t slot = v->data + 4u * i;
    uint64_t dest = (uint64_t)slot + fb_le32(fb->base + slot);
    return ptec_fb_table_inline(fb, dest < fb->size ? (uint32_t)dest : 0u);
}
/* String field: pointer into the buffer ("" when absent) and its length. */
const char *ptec_fb_str(fb_view *fb, const fb_table *t, unsigned id, uint32_t *len);

/* The vector whose uoffset is at `pos` (a field position; 0: absent): its
 * count and its elements must lie in the buffer. */
static inline fb_vector ptec_fb_vec_at(fb_view *fb, uint32_t pos, uint32_t elem_size)
{
    fb_vector v = {0, 0, false};
    if (pos == 0) {
        return v;
    }
    /* pos + 4 <= size < 2^32: no overflow in 64 bits. */
    const uint64_t dest = (uint64_t)pos + fb_le32(fb->base + pos);
    const uint32_t size = fb->size;
    if (dest + 4u <= size) {
        const uint32_t count = fb_le32(fb->base + dest);
        if ((uint64_t)count * elem_size <= size - (dest + 4u)) {
            v.data = (uint32_t)dest + 4u;
            v.count = count;
            v.present = true;
            return v;
        }
    }
    fb->bad = true;
    return v;
}

/* ptec_fb_vec, inline. */
static inline fb_vector ptec_fb_vec_inline(fb_view *fb, const fb_table *t, unsigned id, uint32_t elem_size)
{
    return ptec_fb_vec_at(fb, ptec_fb_field(fb, t, id, 4), elem_size);
}

fb_table ptec_fb_table(fb_view *fb, uint32_t pos);
fb_table ptec_fb_sub(fb_view *fb, const fb_table *t, unsigned id);
fb_table ptec_fb_at(fb_view *fb, const fb_vector *v, uint32_t i);

#endif
