/* The requirements record (src/runtime/requirements_record.c,
 * docs/compatibility.md): the reader on hand-made records at and past every
 * bound (each in a buffer of exactly its size, so that host-asan reports a
 * read one byte too far), then a ptec-built program whose record is edited
 * in place: requirements come from it when it matches this build, fall back
 * to the measuring walk when it does not, and a load refuses a record that
 * lies, with PTEC_INVALID_PROGRAM and one line, whatever the lie.
 *
 * usage: test_requirements_record PROGRAM.pte UPSTREAM.pte (a ptec-built
 * program with a record, and one without) */
#include <stdint.h>

#include "ptec/ptec.h"
#include "runtime/runtime_internal.h"
#include "test_util.h"

static int checks;
#define EXPECT(cond)                                                                         \
    do {                                                                                     \
        ++checks;                                                                            \
        CHECK(cond);                                                                         \
    } while (0)

/* The test's own picture of the layout: header b"PTRQ", version, entry
 * size, count; entries of u32 fingerprint, method, kept values and u64
 * metadata, scratch, fast scratch. */
static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static size_t make_record(uint8_t *out, uint32_t count, uint32_t fingerprint)
{
    memcpy(out, "PTRQ", 4);
    put32(out + 4, 1);
    put32(out + 8, 36);
    put32(out + 12, count);
    for (uint32_t i = 0; i < count; ++i) {
        uint8_t *e = out + 16 + 36 * i;
        put32(e, fingerprint + i);
        put32(e + 4, i);
        put32(e + 8, 100 + i);
        put64(e + 12, 1000 + i);
        put64(e + 20, 2000 + i);
        put64(e + 28, 3000 + i);
    }
    return 16u + 36u * count;
}

/* ptec_record_parse on exactly `size` bytes of `image`. */
static bool parse(const uint8_t *image, size_t size, uint32_t fingerprint, uint32_t method, ptec_record_entry *e)
{
    uint8_t *copy = test_alloc(size);
    memcpy(copy, image, size);
    bool found = ptec_record_parse(copy, size, fingerprint, method, e);
    free(copy);
    return found;
}

static void reader_cases(void)
{
    uint8_t image[16 + 36 * 3];
    ptec_record_entry e;
    size_t size = make_record(image, 3, 0x1234u);
    EXPECT(parse(image, size, 0x1235u, 1, &e) && e.kept_values == 101 && e.metadata_bytes == 1001 &&
           e.scratch_bytes == 2001 && e.fast_scratch_bytes == 3001);
    EXPECT(parse(image, size, 0x1236u, 2, &e) && e.fast_scratch_bytes == 3002); /* the last byte is read */
    EXPECT(!parse(image, size, 0x1235u, 2, &e));                                 /* fingerprint, other method */
    EXPECT(!parse(image, size, 0x9999u, 0, &e));                                 /* another build */
    for (size_t n = 0; n < size; ++n) {                                         /* every truncation */
        bool found = parse(image, n, 0x1236u, 2, &e);
        EXPECT(!found);
    }
    EXPECT(!ptec_record_parse(NULL, 0, 0, 0, &e));
    uint8_t bad[sizeof image];
    static const size_t fields[] = {0, 3, 4, 8};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; ++k) { /* magic, version, entry size */
        memcpy(bad, image, size);
        bad[fields[k]] ^= 0x01;
        EXPECT(!parse(bad, size, 0x1234u, 0, &e));
    }
    /* Counts past the end: one more than fits, and ones whose product
     * with the entry size wraps 32 bits. */
    static const uint32_t counts[] = {4, 0x071c71c8u, 0x80000000u, 0xffffffffu};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
        memcpy(bad, image, size);
        put32(bad + 12, counts[k]);
        EXPECT(!parse(bad, size, 0x1236u, 2, &e));
    }
    memcpy(bad, image, size);
    put32(bad + 12, 0);
    EXPECT(!parse(bad, size, 0x1234u, 0, &e)); /* no entries */
}

/* The program under test, with its record entry for this build found by hand. */
static uint8_t *original;
static size_t original_size;
static size_t entry_at;  /* offset of this build's entry for method 0 */
static size_t record_at; /* offset of its record's header */

static void find_entry(void)
{
    /* The key this build computes for method 0 (its layout and kernels). */
    static ptec_program p;
    fb_table plan;
    uint32_t fp = 0;
    if (ptec_program_init(&p, original, original_size) == PTEC_OK &&
        ptec_plan_find(&p, NULL, &plan, NULL, NULL) == PTEC_OK) {
        fp = ptec_method_fingerprint(&p, &plan);
    }
    EXPECT(fp != 0 && fp != ptec_layout_fingerprint()); /* the kernels are in it */
    for (size_t at = 0; at + 16 <= original_size; ++at) {
        if (memcmp(original + at, "PTRQ", 4) != 0) {
            continue;
        }
        uint32_t count = get32(original + at + 12);
        for (uint32_t i = 0; i < count && at + 16 + 36 * (i + 1) <= original_size; ++i) {
            const uint8_t *e = original + at + 16 + 36 * i;
            if (get32(e) == fp && get32(e + 4) == 0) {
                entry_at = (size_t)(e - original);
                record_at = at;
            }
        }
    }
}

typedef struct outcome {
    ptec_status requirements, load_single, load_regions;
    ptec_requirements req;
    uint32_t from_record;
    char error[PTEC_DETAIL_LEN];
} outcome;

/* Requirements, then a load from one buffer and one from regions of exactly
 * the reported sizes (fresh method structs: no measurement carried over). */
static outcome try_program(const uint8_t *bytes, size_t size)
{
    outcome o;
    memset(&o, 0, sizeof o);
    uint8_t *copy = test_alloc(size);
    memcpy(copy, bytes, size);
    ptec_program p;
    ptec_method m;
    memset(&m, 0, sizeof m);
    if (ptec_program_init(&p, copy, size) != PTEC_OK) {
        o.requirements = PTEC_INVALID_PROGRAM;
        free(copy);
        return o;
    }
    o.requirements = ptec_method_requirements(&m, &p, NULL, &o.req);
    o.from_record = m.measured.from_record;
    if (o.requirements != PTEC_OK || o.req.total_bytes > (64u << 20)) {
        free(copy);
        return o;
    }
    uint8_t *buf = test_alloc(o.req.total_bytes);
    o.load_single = ptec_method_load_single(&m, &p, NULL, buf, o.req.total_bytes);
    snprintf(o.error, sizeof o.error, "%s", ptec_method_error(&m));
    if (o.load_single == PTEC_OK) {
        ptec_method_unload(&m);
    }
    free(buf);
    ptec_memory mem;
    memset(&mem, 0, sizeof mem);
    mem.metadata = test_alloc(o.req.metadata_bytes);
    mem.metadata_size = o.req.metadata_bytes;
    mem.planned_count = o.req.planned_count;
    for (size_t i = 0; i < o.req.planned_count; ++i) {
        mem.planned[i] = test_alloc(o.req.planned_bytes[i]);
        mem.planned_size[i] = o.req.planned_bytes[i];
    }
    mem.scratch = test_alloc(o.req.scratch_bytes);
    mem.scratch_size = o.req.scratch_bytes;
    if (o.req.fast_scratch_bytes > 0) {
        mem.fast_scratch = test_alloc(o.req.fast_scratch_bytes);
        mem.fast_scratch_size = o.req.fast_scratch_bytes;
    }
    ptec_method m2;
    memset(&m2, 0, sizeof m2);
    CHECK_STATUS(ptec_method_requirements(&m2, &p, NULL, &o.req), PTEC_OK);
    o.load_regions = ptec_method_load(&m2, &p, NULL, &mem);
    if (o.load_regions == PTEC_OK) {
        ptec_method_unload(&m2);
    }
    free(mem.metadata);
    for (size_t i = 0; i < o.req.planned_count; ++i) {
        free(mem.planned[i]);
    }
    free(mem.scratch);
    free(mem.fast_scratch);
    free(copy);
    return o;
}

/* The program with this build's entry edited: field at `offset` in the
 * entry set to `value` (4 or 8 bytes). */
static outcome edited(size_t offset, unsigned width, uint64_t value)
{
    uint8_t *bytes = test_alloc(original_size);
    memcpy(bytes, original, original_size);
    if (width == 4) {
        put32(bytes + entry_at + offset, (uint32_t)value);
    } else {
        put64(bytes + entry_at + offset, value);
    }
    outcome o = try_program(bytes, original_size);
    free(bytes);
    return o;
}

/* A record that disagrees with this runtime is a hint the load corrects: it
 * measures the method by the walk and loads again when the memory given
 * (sized from the record) holds the true need (`fits`); otherwise the load
 * says how much is needed, in one line. */
static void expect_corrected(const outcome *o, const outcome *truth, const char *what, bool fits)
{
    char need[64];
    snprintf(need, sizeof need, "need %zu bytes", truth->req.total_bytes);
    ++checks;
    bool ok = o->requirements == PTEC_OK && o->from_record == 1u && strchr(o->error, '\n') == NULL;
    if (fits) {
        ok = ok && o->load_single == PTEC_OK && o->load_regions == PTEC_OK;
    } else {
        ok = ok && o->load_regions == PTEC_MEMORY_ALLOCATION_FAILED &&
             (o->load_single == PTEC_OK || (o->load_single == PTEC_MEMORY_ALLOCATION_FAILED && strstr(o->error, need) != NULL));
    }
    if (!ok) {
        fprintf(stderr, "%s: requirements %d from_record %u, loads %d %d: %s\n", what, o->requirements,
                o->from_record, o->load_single, o->load_regions, o->error);
        ++test_failures;
    }
}

static void program_cases(const outcome *truth)
{
    const uint64_t meta = get64(original + entry_at + 12), scratch = get64(original + entry_at + 20);
    const uint32_t kept = get32(original + entry_at + 8);
    /* Figures this runtime disagrees with (each one field): the load measures. */
    outcome o = edited(12, 8, meta - 8);
    expect_corrected(&o, truth, "metadata 8 bytes short", false);
    EXPECT(o.req.metadata_bytes == meta - 8); /* requirements report the record's figure */
    o = edited(12, 8, 8);
    expect_corrected(&o, truth, "metadata 8 bytes", false);
    o = edited(12, 8, 0);
    expect_corrected(&o, truth, "metadata 0 bytes", false);
    o = edited(12, 8, meta + 8);
    expect_corrected(&o, truth, "metadata 8 bytes over", true);
    o = edited(20, 8, scratch + 16);
    expect_corrected(&o, truth, "scratch over", true);
    if (scratch > 0) {
        o = edited(20, 8, scratch - 1);
        expect_corrected(&o, truth, "scratch short", false);
    }
    o = edited(28, 8, 16);
    expect_corrected(&o, truth, "fast scratch", true);
    static const uint32_t kept_lies[] = {0, 1, 0x7fffffffu, 0xffffffffu};
    for (size_t k = 0; k < sizeof kept_lies / sizeof kept_lies[0]; ++k) {
        o = edited(8, 4, kept_lies[k]);
        expect_corrected(&o, truth, "kept values", true);
    }
    o = edited(8, 4, kept - 1);
    expect_corrected(&o, truth, "kept values - 1", true);
    o = edited(8, 4, kept + 1);
    expect_corrected(&o, truth, "kept values + 1", true);
    /* An entry this reader cannot use: the measuring walk, same figures. */
    static const struct {
        size_t offset;
        unsigned width;
        uint64_t value;
    } unusable[] = {
        {0, 4, 0},                      /* another fingerprint */
        {4, 4, 1},                      /* another method */
        {12, 8, UINT64_MAX},            /* metadata past any address space */
        {12, 8, UINT64_MAX - 15},       /* aligned total wraps */
        {20, 8, (uint64_t)SIZE_MAX},    /* scratch: the sum wraps */
        {28, 8, (uint64_t)SIZE_MAX - 4}, /* fast scratch: aligning wraps */
        {12, 8, (uint64_t)1 << 40},      /* metadata past 4 GiB: on no build (64-bit ones too) */
        {20, 8, (uint64_t)1 << 32},      /* scratch past 4 GiB */
        {28, 8, (uint64_t)1 << 33}       /* fast scratch past 4 GiB */
    };
    for (size_t k = 0; k < sizeof unusable / sizeof unusable[0]; ++k) {
        o = edited(unusable[k].offset, unusable[k].width, unusable[k].value);
        ++checks;
        if (o.requirements != PTEC_OK || o.from_record || o.load_single != PTEC_OK || o.load_regions != PTEC_OK ||
            memcmp(&o.req, &truth->req, sizeof o.req) != 0) {
            fprintf(stderr, "unusable entry %zu: requirements %d from_record %u loads %d %d: %s\n", k,
                    o.requirements, o.from_record, o.load_single, o.load_regions, o.error);
            ++test_failures;
        }
    }
    /* A record header this reader does not read (magic, version, entry
     * size, count past the end): the walk. */
    size_t header = record_at;
    static const size_t header_fields[] = {0, 4, 8, 12};
    for (size_t k = 0; k < 4; ++k) {
        uint8_t *bytes = test_alloc(original_size);
        memcpy(bytes, original, original_size);
        put32(bytes + header + header_fields[k], k == 3 ? 0x10000000u : 77u);
        o = try_program(bytes, original_size);
        ++checks;
        if (o.requirements != PTEC_OK || o.from_record || o.load_single != PTEC_OK ||
            memcmp(&o.req, &truth->req, sizeof o.req) != 0) {
            fprintf(stderr, "header field %zu: requirements %d from_record %u\n", k, o.requirements, o.from_record);
            ++test_failures;
        }
        free(bytes);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_requirements_record PTEC_BUILT.pte UPSTREAM.pte\n");
        return 2;
    }
    reader_cases();
    original = test_read_file(argv[1], &original_size);
    find_entry();
    EXPECT(entry_at != 0);
    if (entry_at == 0) {
        return test_summary("requirements record", checks);
    }
    /* The record, then the walk on the same program with the record's magic
     * broken: the same figures, and both load. */
    outcome rec = try_program(original, original_size);
    EXPECT(rec.requirements == PTEC_OK && rec.from_record == 1 && rec.load_single == PTEC_OK &&
           rec.load_regions == PTEC_OK);
    uint8_t *walked = test_alloc(original_size);
    memcpy(walked, original, original_size);
    walked[record_at] = 'X';
    outcome walk = try_program(walked, original_size);
    EXPECT(walk.requirements == PTEC_OK && walk.from_record == 0 && walk.load_single == PTEC_OK);
    EXPECT(memcmp(&walk.req, &rec.req, sizeof rec.req) == 0);
    free(walked);
    program_cases(&walk);
    /* A program with no record: measured. */
    size_t up_size;
    uint8_t *up = test_read_file(argv[2], &up_size);
    outcome o = try_program(up, up_size);
    EXPECT(o.requirements == PTEC_OK && o.from_record == 0 && o.load_single == PTEC_OK);
    free(up);
    free(original);
    return test_summary("requirements record", checks);
}
