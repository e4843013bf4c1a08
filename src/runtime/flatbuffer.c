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

const char *ptec_fb_str(fb_view *fb, const fb_table *t, unsigned id, uint32_t *len)
{
    fb_vector v = ptec_fb_vec(fb, t, id, 1);
    *len = v.count;
    return v.present ? (const char *)(fb->base + v.data) : "";
}
