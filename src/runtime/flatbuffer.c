#include "runtime/flatbuffer.h"

static bool in_bounds(const fb_view *fb, uint64_t pos, uint64_t len)
{
    return pos <= fb->size && len <= fb->size - pos;
}

fb_table ptec_fb_table(fb_view *fb, uint32_t pos)
{
    fb_table t = {0, 0, 0};
    if (pos == 0 || !in_bounds(fb, pos, 4)) {
        fb->bad = true;
        return t;
    }
    int64_t vtable = (int64_t)pos - (int32_t)fb_le32(fb->base + pos);
    if (vtable < 0 || !in_bounds(fb, (uint64_t)vtable, 4)) {
        fb->bad = true;
        return t;
    }
    /* The vtable's obj_len is not used: upstream's writer can under-report
     * it, so fields are bounded by the buffer instead. */
    uint32_t vt_len = fb_le16(fb->base + vtable);
    if (vt_len < 4 || !in_bounds(fb, (uint64_t)vtable, vt_len)) {
        fb->bad = true;
        return t;
    }
    t.pos = pos;
    t.vtable = (uint32_t)vtable;
    t.vt_len = vt_len;
    return t;
}

/* Follows the uoffset in field `id`; 0 when absent. */
static uint32_t target(fb_view *fb, const fb_table *t, unsigned id)
{
    uint32_t pos = ptec_fb_field(fb, t, id, 4);
    if (pos == 0) {
        return 0;
    }
    uint64_t dest = (uint64_t)pos + fb_le32(fb->base + pos);
    if (dest >= fb->size) {
        fb->bad = true;
        return 0;
    }
    return (uint32_t)dest;
}

fb_table ptec_fb_sub(fb_view *fb, const fb_table *t, unsigned id)
{
    uint32_t pos = target(fb, t, id);
    if (pos == 0) {
        fb_table none = {0, 0, 0};
        return none;
    }
    return ptec_fb_table(fb, pos);
}

fb_vector ptec_fb_vec(fb_view *fb, const fb_table *t, unsigned id, uint32_t elem_size)
{
    fb_vector v = {0, 0, false};
    uint32_t pos = target(fb, t, id);
    if (pos == 0) {
        return v;
    }
    if (!in_bounds(fb, pos, 4)) {
        fb->bad = true;
        return v;
    }
    uint32_t count = fb_le32(fb->base + pos);
    if (!in_bounds(fb, (uint64_t)pos + 4u, (uint64_t)count * elem_size)) {
        fb->bad = true;
        return v;
    }
    v.data = pos + 4u;
    v.count = count;
    v.present = true;
    return v;
}

fb_table ptec_fb_at(fb_view *fb, const fb_vector *v, uint32_t i)
{
    if (i >= v->count) {
        fb_table none = {0, 0, 0};
        fb->bad = true;
        return none;
    }
    uint32_t slot = v->data + 4u * i;
    uint64_t dest = (uint64_t)slot + fb_le32(fb->base + slot);
    return ptec_fb_table(fb, dest < fb->size ? (uint32_t)dest : 0u);
}

const char *ptec_fb_str(fb_view *fb, const fb_table *t, unsigned id, uint32_t *len)
{
    fb_vector v = ptec_fb_vec(fb, t, id, 1);
    *len = v.count;
    return v.present ? (const char *)(fb->base + v.data) : "";
}
