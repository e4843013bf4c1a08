#include "runtime/flatbuffer.h"

fb_table ptec_fb_table(fb_view *fb, uint32_t pos)
{
    return ptec_fb_table_inline(fb, pos);
}

fb_table ptec_fb_sub(fb_view *fb, const fb_table *t, unsigned id)
{
    return ptec_fb_sub_inline(fb, t, id);
}

fb_table ptec_fb_at(fb_view *fb, const fb_vector *v, uint32_t i)
{
    return ptec_fb_at_inline(fb, v, i);
}

fb_vector ptec_fb_vec(fb_view *fb, const fb_table *t, unsigned id, uint32_t elem_size)
{
    return ptec_fb_vec_inline(fb, t, id, elem_size);
}

/* ptec_fb_field's checks, with what is the same for every field hoisted:
 * field id is in the vtable when 4 + 2 * id + 2 <= vt_len, and a table
 * that is not "none" has vt_len >= 4 and pos <= size - 4. */
void ptec_fb_fields(fb_view *fb, const fb_table *t, unsigned n, const uint8_t *widths, uint32_t *pos)
{
    const uint32_t slots = t->pos != 0 ? (t->vt_len - 4u) / 2u : 0u;
    const uint8_t *vt = fb->base + t->vtable + 4u;
    const uint32_t room = fb->size - t->pos; /* >= 4 when slots > 0 */
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

const char *ptec_fb_str(fb_view *fb, const fb_table *t, unsigned id, uint32_t *len)
{
    fb_vector v = ptec_fb_vec(fb, t, id, 1);
    *len = v.count;
    return v.present ? (const char *)(fb->base + v.data) : "";
}
