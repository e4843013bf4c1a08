/* Boundary tests of every flatbuffer accessor (src/runtime/flatbuffer.c).
 *
 * Each case lays out a few bytes by hand (the test's own picture of the
 * format, not the runtime's) and hands the accessor a buffer of exactly that
 * many bytes, allocated at exactly that size: a read that ends on the last
 * byte must succeed, one byte further must set `bad`, and under the
 * host-asan preset any read past the end is an ASan report even when the
 * accessor's answer looks right. Then the same for whole files: add.pte with
 * one offset or count damaged must give PTEC_INVALID_PROGRAM. */
#include <stdint.h>

#include "ptec/ptec.h"
#include "runtime/flatbuffer.h"
#include "test_util.h"

static int checks;
#define EXPECT(cond)                                                                         \
    do {                                                                                     \
        ++checks;                                                                            \
        CHECK(cond);                                                                         \
    } while (0)

/* The image under construction; cases copy a prefix of it into an
 * exact-size buffer. */
static uint8_t image[256];

static void put16(uint32_t pos, uint16_t v)
{
    memcpy(image + pos, &v, 2);
}

static void put32(uint32_t pos, uint32_t v)
{
    memcpy(image + pos, &v, 4);
}

/* A view of the first `size` bytes of `image`, in memory of exactly that size. */
static fb_view view_of(uint32_t size)
{
    uint8_t *copy = test_alloc(size);
    memcpy(copy, image, size);
    fb_view fb = {copy, size, false};
    return fb;
}

static void done(fb_view *fb)
{
    free((void *)fb->base);
}

/* A table at `table` whose vtable at `vtable` has `fields` field slots
 * (vt_len 4 + 2*fields). Slots are set with set_slot. */
static void layout_table(uint32_t vtable, uint32_t table, uint16_t fields)
{
    memset(image, 0, sizeof image);
    put16(vtable, (uint16_t)(4u + 2u * fields));
    put16(vtable + 2u, 4u);
    put32(table, (uint32_t)((int32_t)table - (int32_t)vtable));
}

static void set_slot(uint32_t vtable, unsigned id, uint16_t voffset)
{
    put16(vtable + 4u + 2u * id, voffset);
}

static void test_table(void)
{
    /* vtable at 4 (4 bytes), table at 8: the table's soffset is its last word. */
    layout_table(4, 8, 0);
    fb_view fb = view_of(12);
    fb_table t = ptec_fb_table(&fb, 8);
    EXPECT(!fb.bad && t.pos == 8 && t.vtable == 4 && t.vt_len == 4);
    done(&fb);

    fb = view_of(11); /* the soffset's last byte is missing */
    ptec_fb_table(&fb, 8);
    EXPECT(fb.bad);
    done(&fb);

    fb = view_of(12);
    ptec_fb_table(&fb, 0); /* position 0 is "no table" */
    EXPECT(fb.bad);
    done(&fb);

    const uint32_t past[] = {9, 12, 13, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof past / sizeof past[0]; ++i) {
        fb = view_of(12);
        ptec_fb_table(&fb, past[i]);
        EXPECT(fb.bad);
        done(&fb);
    }

    /* A vtable before the start of the buffer (negative position). */
    layout_table(4, 8, 0);
    put32(8, 9);
    fb = view_of(12);
    ptec_fb_table(&fb, 8);
    EXPECT(fb.bad);
    done(&fb);
    put32(8, 0x80000000u); /* the most negative soffset: vtable far past the end */
    fb = view_of(12);
    ptec_fb_table(&fb, 8);
    EXPECT(fb.bad);
    done(&fb);

    /* A vtable after its table (negative soffset), ending on the last byte. */
    memset(image, 0, sizeof image);
    put32(4, (uint32_t)-4); /* table at 4, vtable at 8 */
    put16(8, 6);
    put16(10, 4);
    put16(12, 0);
    fb = view_of(14);
    t = ptec_fb_table(&fb, 4);
    EXPECT(!fb.bad && t.vtable == 8 && t.vt_len == 6);
    done(&fb);
    fb = view_of(13); /* the vtable's last slot is cut */
    ptec_fb_table(&fb, 4);
    EXPECT(fb.bad);
    done(&fb);
    fb = view_of(9); /* the vtable's length itself is cut */
    ptec_fb_table(&fb, 4);
    EXPECT(fb.bad);
    done(&fb);

    /* vt_len below 4 is malformed. */
    layout_table(4, 8, 0);
    put16(4, 2);
    fb = view_of(12);
    ptec_fb_table(&fb, 8);
    EXPECT(fb.bad);
    done(&fb);

    /* A misaligned table and vtable read the same as aligned ones. */
    memset(image, 0, sizeof image);
    put16(5, 6);
    put16(7, 4);
    put16(9, 4);
    put32(11, 6); /* table at 11, vtable at 5 */
    put32(15, 0x11223344u);
    fb = view_of(19);
    t = ptec_fb_table(&fb, 11);
    EXPECT(!fb.bad && t.vtable == 5);
    EXPECT(ptec_fb_u32(&fb, &t, 0, 0) == 0x11223344u && !fb.bad);
    done(&fb);
}

/* A table at 8 with one scalar field of `width` bytes whose last byte is the
 * buffer's last byte when the buffer is `8 + 4 + width` bytes long. */
static void layout_scalar(uint32_t width)
{
    layout_table(0, 8, 2);
    set_slot(0, 0, 4);       /* field 0 right after the soffset */
    set_slot(0, 1, 0);       /* field 1 absent */
    memset(image + 12, 0xA5, width);
}

static void test_scalars(void)
{
    static const uint32_t widths[] = {1, 4, 8};
    for (size_t w = 0; w < 3; ++w) {
        const uint32_t width = widths[w];
        layout_scalar(width);
        for (uint32_t size = 12u + width - (width > 1 ? 3u : 1u); size <= 12u + width; ++size) {
            fb_view fb = view_of(size);
            fb_table t = ptec_fb_table(&fb, 8);
            EXPECT(!fb.bad);
            const int fits = size == 12u + width;
            if (width == 1) {
                uint8_t v = ptec_fb_u8(&fb, &t, 0, 7);
                EXPECT(fits ? (!fb.bad && v == 0xA5) : (fb.bad && v == 7));
            } else if (width == 4) {
                uint32_t v = ptec_fb_u32(&fb, &t, 0, 7);
                EXPECT(fits ? (!fb.bad && v == 0xA5A5A5A5u) : (fb.bad && v == 7));
            } else {
                uint64_t v = ptec_fb_u64(&fb, &t, 0, 7);
                EXPECT(fits ? (!fb.bad && v == UINT64_C(0xA5A5A5A5A5A5A5A5)) : (fb.bad && v == 7));
            }
            fb.bad = false;
            const uint8_t *p = ptec_fb_field_bytes(&fb, &t, 0, width);
            EXPECT(fits ? (p == fb.base + 12 && !fb.bad) : (p == NULL && fb.bad));
            done(&fb);
        }
    }

    /* Absent fields: a zero slot, or an id past the vtable, give the
     * default without marking the view bad. */
    layout_scalar(4);
    fb_view fb = view_of(16);
    fb_table t = ptec_fb_table(&fb, 8);
    EXPECT(ptec_fb_u32(&fb, &t, 1, 99) == 99 && !fb.bad);
    EXPECT(ptec_fb_u32(&fb, &t, 2, 98) == 98 && !fb.bad);
    EXPECT(ptec_fb_u64(&fb, &t, 200, 97) == 97 && !fb.bad);
    fb_table none = {0, 0, 0};
    EXPECT(ptec_fb_u8(&fb, &none, 0, 96) == 96 && !fb.bad);
    done(&fb);

    /* A voffset that points past the end. */
    layout_scalar(4);
    set_slot(0, 0, 0xFFFFu);
    fb = view_of(16);
    t = ptec_fb_table(&fb, 8);
    EXPECT(ptec_fb_u32(&fb, &t, 0, 5) == 5 && fb.bad);
    done(&fb);
}

/* ptec_fb_fields: every field's position at once, with ptec_fb_field's
 * checks (the positions expected are the layout's, worked out here). */
static void test_fields(void)
{
    static const uint32_t widths[] = {1, 4, 8};
    for (size_t w = 0; w < 3; ++w) {
        const uint32_t width = widths[w];
        const uint8_t read[3] = {(uint8_t)width, 4, 4}; /* field 1 absent, field 2 past the vtable */
        layout_scalar(width);
        for (uint32_t size = 12u + width - 1u; size <= 12u + width; ++size) {
            fb_view fb = view_of(size);
            fb_table t = ptec_fb_table(&fb, 8);
            uint32_t pos[3] = {77, 77, 77};
            ptec_fb_fields(&fb, &t, 3, read, pos);
            const int fits = size == 12u + width;
            EXPECT(fits ? (!fb.bad && pos[0] == 12u) : (fb.bad && pos[0] == 0u));
            EXPECT(pos[1] == 0u && pos[2] == 0u);
            done(&fb);
        }
    }
    /* A field past the end that the caller does not read (width 0) is left
     * unchecked; read, it marks the view bad. */
    layout_scalar(4);
    set_slot(0, 0, 0xFFFFu);
    fb_view fb = view_of(16);
    fb_table t = ptec_fb_table(&fb, 8);
    uint32_t pos[2] = {77, 77};
    static const uint8_t unread[2] = {0, 4}, read_first[2] = {4, 4};
    ptec_fb_fields(&fb, &t, 2, unread, pos);
    EXPECT(!fb.bad && pos[0] == 0u && pos[1] == 0u);
    ptec_fb_fields(&fb, &t, 2, read_first, pos);
    EXPECT(fb.bad && pos[0] == 0u);
    done(&fb);
    /* An odd vtable length: slot 1's bytes are there, but 4 + 2 * 1 + 2 > 7. */
    layout_scalar(4);
    set_slot(0, 1, 4);
    put16(0, 7);
    fb = view_of(16);
    t = ptec_fb_table(&fb, 8);
    ptec_fb_fields(&fb, &t, 2, read_first, pos);
    EXPECT(!fb.bad && pos[0] == 12u && pos[1] == 0u);
    /* The "none" table: every field absent. */
    fb_table none = {0, 0, 0};
    ptec_fb_fields(&fb, &none, 2, read_first, pos);
    EXPECT(!fb.bad && pos[0] == 0u && pos[1] == 0u);
    done(&fb);
}

/* Table at 8 (vtable at 2, one slot), field 0 a uoffset at 12 to a vector at
 * 16: count word at 16, elements from 20. */
static void layout_vector(uint32_t count, uint32_t elem_size)
{
    layout_table(2, 8, 1);
    set_slot(2, 0, 4);
    put32(12, 4);
    put32(16, count);
    memset(image + 20, 0x5A, (size_t)count * elem_size < 200u ? (size_t)count * elem_size : 200u);
}

static void test_vectors(void)
{
    static const uint32_t sizes[] = {1, 4, 8};
    for (size_t s = 0; s < 3; ++s) {
        const uint32_t elem = sizes[s];
        /* 3 elements: exactly at the end, then one byte short. */
        layout_vector(3, elem);
        fb_view fb = view_of(20u + 3u * elem);
        fb_table t = ptec_fb_table(&fb, 8);
        fb_vector v = ptec_fb_vec(&fb, &t, 0, elem);
        EXPECT(!fb.bad && v.present && v.count == 3 && v.data == 20);
        done(&fb);
        fb = view_of(20u + 3u * elem - 1u);
        t = ptec_fb_table(&fb, 8);
        v = ptec_fb_vec(&fb, &t, 0, elem);
        EXPECT(fb.bad && !v.present && v.count == 0);
        done(&fb);
        /* A count one too many for the bytes there. */
        layout_vector(4, elem);
        fb = view_of(20u + 3u * elem);
        t = ptec_fb_table(&fb, 8);
        v = ptec_fb_vec(&fb, &t, 0, elem);
        EXPECT(fb.bad && v.count == 0);
        done(&fb);
    }

    /* count * elem_size wraps 32 bits to a small number. */
    static const struct {
        uint32_t count, elem;
    } wraps[] = {{0x40000001u, 4}, {0x20000000u, 8}, {0x20000001u, 8}, {0xFFFFFFFFu, 4}, {0xFFFFFFFFu, 1}};
    for (size_t i = 0; i < sizeof wraps / sizeof wraps[0]; ++i) {
        layout_vector(0, 1);
        put32(16, wraps[i].count);
        fb_view fb = view_of(64);
        fb_table t = ptec_fb_table(&fb, 8);
        fb_vector v = ptec_fb_vec(&fb, &t, 0, wraps[i].elem);
        EXPECT(fb.bad && !v.present);
        done(&fb);
    }

    /* The count word itself crosses the end; the uoffset points at the end
     * or wraps. */
    layout_vector(0, 1);
    for (uint32_t size = 17; size < 20; ++size) {
        fb_view fb = view_of(size);
        fb_table t = ptec_fb_table(&fb, 8);
        ptec_fb_vec(&fb, &t, 0, 1);
        EXPECT(fb.bad);
        done(&fb);
    }
    const uint32_t targets[] = {8, 9, 0xFFFFFFFFu, 0xFFFFFFF4u};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; ++i) {
        layout_vector(0, 1);
        put32(12, targets[i]); /* to 20 (= the end), 21, and wrapping to 11 and 0 */
        fb_view fb = view_of(20);
        fb_table t = ptec_fb_table(&fb, 8);
        fb_vector v = ptec_fb_vec(&fb, &t, 0, 1);
        EXPECT(fb.bad && !v.present);
        fb.bad = false;
        fb_table sub = ptec_fb_sub(&fb, &t, 0);
        EXPECT(fb.bad && sub.pos == 0);
        done(&fb);
    }

    /* An empty vector ending exactly at the end is present and fine. */
    layout_vector(0, 4);
    fb_view fb = view_of(20);
    fb_table t = ptec_fb_table(&fb, 8);
    fb_vector v = ptec_fb_vec(&fb, &t, 0, 4);
    EXPECT(!fb.bad && v.present && v.count == 0);
    done(&fb);
}

static void test_strings(void)
{
    layout_vector(5, 1);
    memcpy(image + 20, "hello", 5);
    fb_view fb = view_of(25); /* no NUL: the runtime does not read one */
    fb_table t = ptec_fb_table(&fb, 8);
    uint32_t len = 99;
    const char *s = ptec_fb_str(&fb, &t, 0, &len);
    EXPECT(!fb.bad && len == 5 && memcmp(s, "hello", 5) == 0);
    done(&fb);
    fb = view_of(24);
    t = ptec_fb_table(&fb, 8);
    s = ptec_fb_str(&fb, &t, 0, &len);
    EXPECT(fb.bad && len == 0 && s[0] == '\0');
    done(&fb);
    /* Absent: "" and length 0, not bad. */
    layout_table(2, 8, 1);
    fb = view_of(12);
    t = ptec_fb_table(&fb, 8);
    s = ptec_fb_str(&fb, &t, 0, &len);
    EXPECT(!fb.bad && len == 0 && s[0] == '\0');
    done(&fb);
}

/* A vector of two tables: table at 8 (vtable at 2, one slot) whose field 0
 * points to the vector at 16 = [count 2][uoffset][uoffset], then an element
 * table at 32 with its own vtable at 28 (no fields). */
static void layout_table_vector(void)
{
    layout_table(2, 8, 1);
    set_slot(2, 0, 4);
    put32(12, 4);
    put32(16, 2);
    put32(20, 12); /* element 0 -> 32 */
    put32(24, 8);  /* element 1 -> 32 */
    put16(28, 4);
    put16(30, 4);
    put32(32, 4);
}

static void test_vector_of_tables(void)
{
    layout_table_vector();
    fb_view fb = view_of(36);
    fb_table t = ptec_fb_table(&fb, 8);
    fb_vector v = ptec_fb_vec(&fb, &t, 0, 4);
    fb_table e0 = ptec_fb_at(&fb, &v, 0);
    fb_table e1 = ptec_fb_at(&fb, &v, 1);
    EXPECT(!fb.bad && e0.pos == 32 && e1.pos == 32 && e0.vtable == 28);
    fb_table e2 = ptec_fb_at(&fb, &v, 2); /* index == count */
    EXPECT(fb.bad && e2.pos == 0);
    fb.bad = false;
    ptec_fb_at(&fb, &v, 0xFFFFFFFFu);
    EXPECT(fb.bad);
    done(&fb);

    /* The element table's soffset is cut by one byte. */
    fb = view_of(35);
    t = ptec_fb_table(&fb, 8);
    v = ptec_fb_vec(&fb, &t, 0, 4);
    EXPECT(!fb.bad && v.count == 2);
    ptec_fb_at(&fb, &v, 0);
    EXPECT(fb.bad);
    done(&fb);

    /* Element offsets that point at the end, past it, or wrap. */
    const uint32_t offsets[] = {16, 17, 0xFFFFFFFFu, 0xFFFFFFECu};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; ++i) {
        layout_table_vector();
        put32(20, offsets[i]); /* 20 + 16 = 36, the end */
        fb = view_of(36);
        t = ptec_fb_table(&fb, 8);
        v = ptec_fb_vec(&fb, &t, 0, 4);
        fb_table e = ptec_fb_at(&fb, &v, 0);
        EXPECT(fb.bad && e.pos == 0);
        done(&fb);
    }
}

/* add.pte with one field damaged: the loader must say InvalidProgram. The
 * execution_plan vector is found by the test's own reading of the layout. */
static uint32_t le32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static ptec_status load_status(const uint8_t *bytes, size_t size)
{
    uint8_t *copy = test_alloc(size);
    memcpy(copy, bytes, size);
    ptec_program p;
    ptec_status st = ptec_program_init(&p, copy, size);
    ptec_requirements req;
    ptec_method m;
    if (st == PTEC_OK) {
        st = ptec_method_requirements(&m, &p, NULL, &req);
    }
    free(copy);
    return st;
}

static void test_whole_file(const char *path)
{
    size_t size;
    uint8_t *pte = test_read_file(path, &size);
    uint8_t *damaged = malloc(size);
    EXPECT(load_status(pte, size) == PTEC_OK);
    const uint32_t root = le32_at(pte);
    const uint32_t vtable = root - le32_at(pte + root);
    const uint32_t slot = vtable + 4u + 2u * 1u; /* Program.execution_plan */
    const uint32_t field = root + (uint32_t)(pte[slot] | pte[slot + 1] << 8);
    const uint32_t plans = field + le32_at(pte + field);
    const struct {
        uint32_t pos, value;
    } damage[] = {
        {0, (uint32_t)size},               /* root offset at the end */
        {0, (uint32_t)size - 3u},          /* root table's soffset cut */
        {field, (uint32_t)size - field},   /* execution_plan vector at the end */
        {plans, ((uint32_t)size - plans - 4u) / 4u + 1u}, /* one element more than fits */
        {plans, 0x40000001u},              /* count * 4 wraps to 4 */
        {plans + 4u, (uint32_t)size - plans - 4u}, /* plan 0 at the end */
    };
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; ++i) {
        memcpy(damaged, pte, size);
        memcpy(damaged + damage[i].pos, &damage[i].value, 4);
        const ptec_status st = load_status(damaged, size);
        if (st != PTEC_INVALID_PROGRAM) {
            fprintf(stderr, "damage %zu: status 0x%02x\n", i, (unsigned)st);
        }
        EXPECT(st == PTEC_INVALID_PROGRAM);
    }
    free(damaged);
    free(pte);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_flatbuffer_bounds <add.pte>\n");
        return 2;
    }
    test_table();
    test_scalars();
    test_fields();
    test_vectors();
    test_strings();
    test_vector_of_tables();
    test_whole_file(argv[1]);
    return test_summary("flatbuffer bounds", checks);
}
