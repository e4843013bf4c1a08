#include "runtime/flatbuffer.h"

#include <string.h>

static bool in_bounds(const fb_view *fb, uint64_t pos, uint64_t len)
{
    return pos <= fb->size && len <= fb->size - pos;
}

bool ptec_fb_table_at(const fb_view *fb, uint32_t pos, fb_table *out)
{
    if (!in_bounds(fb, pos, 4)) {
        return false;
    }
    int32_t soffset = (int32_t)fb_le32(fb->base + pos);
    int64_t vtable = (int64_t)pos - (int64_t)soffset;
    if (vtable < 0 || !in_bounds(fb, (uint64_t)vtable, 4)) {
        return false;
    }
    uint16_t vt_len = fb_le16(fb->base + vtable);
    uint16_t obj_len = fb_le16(fb->base + vtable + 2);
    /* obj_len is not trusted: upstream's writer can under-report it, so
     * fields are bounded by the buffer instead. */
    if (vt_len < 4 || (vt_len & 1u) || !in_bounds(fb, (uint64_t)vtable, vt_len)) {
        return false;
    }
    out->pos = pos;
    out->vtable = (uint32_t)vtable;
    out->vt_len = vt_len;
    out->obj_len = obj_len;
    return true;
}

bool ptec_fb_field(const fb_view *fb, const fb_table *t, unsigned id, uint32_t width, uint32_t *pos)
{
    uint32_t slot = 4u + 2u * id;
    *pos = 0;
    if (slot + 2u > t->vt_len) {
        return true;
    }
    uint16_t voffset = fb_le16(fb->base + t->vtable + slot);
    if (voffset == 0) {
        return true;
    }
    if (!in_bounds(fb, (uint64_t)t->pos + voffset, width)) {
        return false;
    }
    *pos = t->pos + voffset;
    return true;
}

bool ptec_fb_u8(const fb_view *fb, const fb_table *t, unsigned id, uint8_t dflt, uint8_t *out)
{
    uint32_t pos;
    if (!ptec_fb_field(fb, t, id, 1, &pos)) {
        return false;
    }
    *out = pos ? fb->base[pos] : dflt;
    return true;
}

bool ptec_fb_u32(const fb_view *fb, const fb_table *t, unsigned id, uint32_t dflt, uint32_t *out)
{
    uint32_t pos;
    if (!ptec_fb_field(fb, t, id, 4, &pos)) {
        return false;
    }
    *out = pos ? fb_le32(fb->base + pos) : dflt;
    return true;
}

bool ptec_fb_u64(const fb_view *fb, const fb_table *t, unsigned id, uint64_t dflt, uint64_t *out)
{
    uint32_t pos;
    if (!ptec_fb_field(fb, t, id, 8, &pos)) {
        return false;
    }
    *out = pos ? fb_le64(fb->base + pos) : dflt;
    return true;
}

bool ptec_fb_f64(const fb_view *fb, const fb_table *t, unsigned id, double dflt, double *out)
{
    uint32_t pos;
    if (!ptec_fb_field(fb, t, id, 8, &pos)) {
        return false;
    }
    if (pos == 0) {
        *out = dflt;
        return true;
    }
    uint64_t bits = fb_le64(fb->base + pos);
    memcpy(out, &bits, sizeof bits);
    return true;
}

/* Follows the uoffset stored in field `id`; 0 when the field is absent. */
static bool deref_field(const fb_view *fb, const fb_table *t, unsigned id, uint32_t *target)
{
    uint32_t pos;
    if (!ptec_fb_field(fb, t, id, 4, &pos)) {
        return false;
    }
    if (pos == 0) {
        *target = 0;
        return true;
    }
    uint64_t dest = (uint64_t)pos + fb_le32(fb->base + pos);
    if (dest >= fb->size) {
        return false;
    }
    *target = (uint32_t)dest;
    return true;
}

bool ptec_fb_subtable(const fb_view *fb, const fb_table *t, unsigned id, fb_table *out, bool *present)
{
    uint32_t target;
    *present = false;
    if (!deref_field(fb, t, id, &target)) {
        return false;
    }
    if (target == 0) {
        return true;
    }
    *present = true;
    return ptec_fb_table_at(fb, target, out);
}

bool ptec_fb_vec(const fb_view *fb, const fb_table *t, unsigned id, uint32_t elem_size, fb_vector *out)
{
    uint32_t target;
    out->data = 0;
    out->count = 0;
    out->present = false;
    if (!deref_field(fb, t, id, &target)) {
        return false;
    }
    if (target == 0) {
        return true;
    }
    if (!in_bounds(fb, target, 4)) {
        return false;
    }
    uint32_t count = fb_le32(fb->base + target);
    if (!in_bounds(fb, (uint64_t)target + 4u, (uint64_t)count * elem_size)) {
        return false;
    }
    out->data = target + 4u;
    out->count = count;
    out->present = true;
    return true;
}

bool ptec_fb_vec_table(const fb_view *fb, const fb_vector *v, uint32_t i, fb_table *out)
{
    if (i >= v->count) {
        return false;
    }
    uint32_t slot = v->data + 4u * i;
    uint64_t dest = (uint64_t)slot + fb_le32(fb->base + slot);
    if (dest >= fb->size) {
        return false;
    }
    return ptec_fb_table_at(fb, (uint32_t)dest, out);
}

bool ptec_fb_string(const fb_view *fb, const fb_table *t, unsigned id, const char **s, uint32_t *len)
{
    fb_vector v;
    if (!ptec_fb_vec(fb, t, id, 1, &v)) {
        return false;
    }
    *s = v.present ? (const char *)(fb->base + v.data) : "";
    *len = v.count;
    return true;
}
