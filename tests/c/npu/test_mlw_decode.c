/* mlw_decode and npu_weights_unpack on hand-assembled streams. Each stream is
 * written field by field from the format's facts (spec §4.4) with the values
 * it must decode to worked out by hand in the comments; no encoder is shared
 * with the decoder. Every stream is also cut at every length and must then
 * fail cleanly (run under ASan, the copies are exact-size heap blocks, so an
 * over-read is caught). The real-stream oracle is person_detect's (oracle 0). */
#include <stdlib.h>

#include "mlw_decode.h"
#include "npu_weights.h"
#include "test_util.h"
#include "mlw_writer.h"

/* ---- a sink into an array ------------------------------------------------- */

typedef struct {
    int32_t v[8192];
    size_t n, cap;
} sink_buf;

static int into_array(void *user, int32_t value)
{
    sink_buf *b = (sink_buf *)user;
    if (b->n == b->cap) {
        return -1;
    }
    b->v[b->n++] = value;
    return 0;
}

static sink_buf out;

/* Decodes an exact-size heap copy of bytes[0..len). */
static int decode(const uint8_t *bytes, size_t len, size_t cap, const char **detail)
{
    uint8_t *copy = (uint8_t *)malloc(len ? len : 1u);
    memcpy(copy, bytes, len);
    out.n = 0;
    out.cap = cap;
    size_t count = 0;
    int rc = mlw_decode(copy, len, into_array, &out, &count, detail);
    free(copy);
    if (rc == 0 && count != out.n) {
        return -99;
    }
    return rc;
}

static void expect_values(const char *what, const bit_writer *w, size_t len, const int32_t *want, size_t n)
{
    const char *detail = NULL;
    int rc = decode(w->bytes, len, 8192, &detail);
    int same = rc == 0 && out.n == n;
    for (size_t i = 0; same && i < n; i++) {
        same = out.v[i] == want[i];
    }
    if (!same) {
        fprintf(stderr, "%s: rc %d (%s), %zu values\n", what, rc, detail ? detail : "-", out.n);
        test_failures++;
    }
    /* every cut ends inside the stream or before its marker: a clean error */
    for (size_t cut = 0; cut < len; cut++) {
        detail = NULL;
        rc = decode(w->bytes, cut, 8192, &detail);
        /* cuts past the marker's byte keep the whole stream: they decode */
        int whole = cut * 8u >= w->marker_end;
        if (whole ? rc != 0 : (rc != -1 || detail == NULL)) {
            fprintf(stderr, "%s cut at %zu: rc %d\n", what, cut, rc);
            test_failures++;
        }
    }
}

static void expect_error(const char *what, const bit_writer *w, size_t len)
{
    const char *detail = NULL;
    int rc = decode(w->bytes, len, 8192, &detail);
    if (rc != -1 || detail == NULL) {
        fprintf(stderr, "%s: rc %d, expected a clean error\n", what, rc);
        test_failures++;
    }
}

/* Uncompressed (WDIV 7), no palette (PALSIZE 0), PALBITS 9, DIROFS 3, no
 * zero runs (ZDIV 6): after the header each value is a plain 9-bit index,
 * value = index + DIROFS, weight = sign in bit 0, magnitude above. */
static size_t uncompressed_stream(bit_writer *w, const uint32_t *index, size_t n)
{
    memset(w, 0, sizeof(*w));
    header(w, 6, (uint32_t)n, 7, 0, 1);
    palette_fields(w, 3, 0, 7);
    for (size_t i = 0; i < n; i++) {
        put(w, index[i], 9);
    }
    return finish(w);
}

static void test_uncompressed(void)
{
    bit_writer w;
    /* index + 3 = value: 7 -> 10 -> +5; 0 -> 3 -> -1; 505 -> 508 -> +254;
     * 508 -> 511 -> -255; 1 -> 4 -> +2; 2 -> 5 -> -2; 17 -> 20 -> +10; 0 -> -1;
     * 9 -> 12 -> +6 (a ninth value: the second group of 8) */
    const uint32_t index[] = {7, 0, 505, 508, 1, 2, 17, 0, 9};
    const int32_t want[] = {5, -1, 254, -255, 2, -2, 10, -1, 6};
    size_t len = uncompressed_stream(&w, index, 9);
    expect_values("uncompressed WDIV 7", &w, len, want, 9);

    /* 509 + 3 = 512: not a 9-bit value */
    const uint32_t too_big[] = {509};
    len = uncompressed_stream(&w, too_big, 1);
    expect_error("value beyond 9 bits", &w, len);

    /* the sink takes only 4 of the 9 values */
    len = uncompressed_stream(&w, index, 9);
    const char *detail = NULL;
    CHECK(decode(w.bytes, len, 4, &detail) == -1 && detail == MLW_DETAIL_SINK && out.n == 4);
}

/* Palette + zero runs + truncated GRC, in one chunk pair:
 * ZDIV 0 (runs: unary groups of 12, no remainder bits), SLICELEN 2, WDIV 0,
 * WTRUNC 1, NEWPAL 1, DIROFS 0, PALSIZE 1 + 1 = 2, PALBITS 1 + 2 = 3,
 * palette {4, 3} (4 -> +2, 3 -> -1).
 * Output: 0, +2, 0, 0, -1 = runs {1, 2, 0} around indices {0, 1}.
 * Chunk 1 (both lanes enabled, balance 0):
 *   WUNARY0 (12): index 0 -> code 0, index 1 -> code 1, 10 unused slots code 0
 *                 -> bit 1 set: 0x002
 *   ZUNARY (12):  run 1 -> "1 0", run 2 -> "1 1 0", run 0 -> "0", then zeros
 *                 -> bits 0, 2, 3 set: 0x00D
 *   WUNARY1 (1 bit, one set bit above): 0 = code 1
 * Chunk 2: both lanes have all symbols: no unary; remainders are 0 bits. */
static void test_palette_zero_runs(void)
{
    bit_writer w;
    header(restart(&w), 0, 2, 0, 1, 1);
    palette_fields(&w, 0, 1, 1);
    put(&w, 4, 3);   /* palette[0] */
    put(&w, 3, 3);   /* palette[1] */
    put(&w, 0x002, 12);
    put(&w, 0x00D, 12);
    put(&w, 0, 1);
    size_t len = finish(&w);
    const int32_t want[] = {0, 2, 0, 0, -1};
    expect_values("palette + zero runs", &w, len, want, 5);
}

/* GRC with remainders and quotients longer than a chunk, no zero runs:
 * slice 1: ZDIV 6, SLICELEN 2, WDIV 1, WTRUNC 0, NEWPAL 1, DIROFS 0, PALSIZE 0,
 *   PALBITS 0 (+2). Indices 9 (q 4, r 1) and 2 (q 1, r 0); direct: 9 -> -4, 2 -> +1.
 *   Chunk 1: WUNARY0 slots: code 2, code 2, code 0 (q 4 closes), code 1 (q 1),
 *   8 slots code 0 -> bits 0, 1, 3: 0xB; WUNARY1 (3 bits): 1, 1, 0 -> 0x3.
 *   Chunk 2: remainders 1, 0 (1 bit each).
 * slice 2 (keeps the palette): ZDIV 6, SLICELEN 1, WDIV 0, WTRUNC 0, NEWPAL 0.
 *   Index 26 -> +13 as q 26: chunk 1 has twelve code-2 slots (WUNARY0 0xFFF,
 *   WUNARY1 0xFFF: 24 carried, no symbol); chunk 2: code 2 then code 0 closes
 *   q 26 (WUNARY0 0x001, WUNARY1 1 bit = 1); chunk 3: no remainder bits. */
static void test_grc_carry(void)
{
    bit_writer w;
    header(restart(&w), 6, 2, 1, 0, 1);
    palette_fields(&w, 0, 0, 0);
    put(&w, 0xB, 12);
    put(&w, 0x3, 3);
    put(&w, 1, 1);
    put(&w, 0, 1);
    header(&w, 6, 1, 0, 0, 0);
    put(&w, 0xFFF, 12);
    put(&w, 0xFFF, 12);
    put(&w, 0x001, 12);
    put(&w, 1, 1);
    size_t len = finish(&w);
    const int32_t want[] = {-4, 1, 13};
    expect_values("GRC remainders and carry", &w, len, want, 3);
}

static void test_corrupt(void)
{
    bit_writer w;
    const char *detail;

    memset(&w, 0, sizeof(w));
    CHECK(decode(w.bytes, 0, 8, &detail) == -1 && detail != NULL); /* empty */
    put(&w, 7, 3);
    CHECK(decode(w.bytes, 1, 8, &detail) == 0 && out.n == 0); /* only the marker */

    header(restart(&w), 6, 1, 7, 0, 0); /* first slice without a palette */
    expect_error("first slice without NEWPAL", &w, finish(&w));

    header(restart(&w), 4, 1, 7, 0, 1); /* ZDIV 4 */
    put(&w, 0, 13);
    expect_error("ZDIV 4", &w, finish(&w));

    header(restart(&w), 6, 1, 6, 0, 1); /* WDIV 6 */
    put(&w, 0, 13);
    expect_error("WDIV 6", &w, finish(&w));

    /* zero-run mode changes without a new palette */
    size_t len;
    header(restart(&w), 6, 1, 7, 0, 1);
    palette_fields(&w, 0, 0, 7);
    put(&w, 4, 9);
    header(&w, 0, 1, 7, 0, 0);
    put(&w, 0, 64);
    expect_error("zero-run switch without NEWPAL", &w, finish(&w));

    /* a WDIV 0 quotient that never closes until the bits run out */
    header(restart(&w), 6, 1, 0, 0, 1);
    put(&w, 0, 13);
    for (int i = 0; i < 40; i++) {
        put(&w, 0xFFF, 12);
        put(&w, 0xFFF, 12);
    }
    len = (w.bits + 7u) / 8u; /* no marker */
    expect_error("unending quotient", &w, len);

    /* a quotient past 9 bits: 512 = 256 code-2 slots, WTRUNC 0 */
    header(restart(&w), 6, 1, 0, 0, 1);
    put(&w, 0, 13);
    for (int i = 0; i < 22; i++) {
        put(&w, 0xFFF, 12);
        put(&w, 0xFFF, 12);
    }
    put(&w, 0x000, 12);
    expect_error("index past 9 bits", &w, finish(&w));
}

/* ---- brick order ------------------------------------------------------- */

/* A stream whose k-th brick value is (k mod 200) - 100 (uncompressed, so the
 * count is exact), unpacked; then dense positions are checked against brick
 * indices worked out by hand from the loop order. */
static int16_t dense[4096];

static int unpack_counting(const npu_weight_layout *l, size_t bricks, const char **detail)
{
    static bit_writer w;
    memset(&w, 0, sizeof(w));
    size_t done = 0;
    while (done < bricks) {
        size_t n = bricks - done > 32768u ? 32768u : bricks - done;
        header(&w, 6, (uint32_t)n, 7, 0, done == 0u ? 1u : 0u);
        if (done == 0u) {
            palette_fields(&w, 0, 0, 7);
        }
        for (size_t i = 0; i < n; i++) {
            int32_t v = (int32_t)((done + i) % 200u) - 100;
            put(&w, v < 0 ? (uint32_t)(-v) * 2u + 1u : (uint32_t)v * 2u, 9);
        }
        done += n;
    }
    size_t len = finish(&w);
    return npu_weights_unpack(l, w.bytes, len, dense, sizeof(dense) / sizeof(dense[0]), detail);
}

static int16_t brick_value(size_t k)
{
    return (int16_t)((int32_t)(k % 200u) - 100);
}

/* An 8-bit layout with IFM micro-blocks of 8; the rest as given. */
static npu_weight_layout layout(uint32_t ofm, uint32_t kh, uint32_t kw, uint32_t ifm, uint32_t ofm_block,
                                uint32_t ofm_ublock, uint32_t sub_kernel)
{
    npu_weight_layout l;
    memset(&l, 0, sizeof(l));
    l.ofm_depth = ofm;
    l.kernel_height = kh;
    l.kernel_width = kw;
    l.ifm_depth = ifm;
    l.ofm_block_depth = ofm_block;
    l.ofm_ublock_depth = ofm_ublock;
    l.ifm_ublock_depth = 8;
    l.ifm_bits = 8;
    l.sub_kernel_height = l.sub_kernel_width = sub_kernel;
    return l;
}

static void test_brick_order(void)
{
    const char *detail = NULL;
    npu_weight_layout l;

    /* Depth-first CONV 1x1, OFM 2, IFM 3, OFM block 8 (u55-256 micro-blocks 8/8).
     * One IFM block of 32 (not clipped in depth-first order): 4 IFM micro-blocks
     * x 8 OFM channels x 8 IFM channels = 256 values; (o, i) is brick o*8 + i. */
    l = layout(2, 1, 1, 3, 8, 8, 8);
    CHECK(unpack_counting(&l, 256, &detail) == 0);
    for (int o = 0; o < 2; o++) {
        for (int i = 0; i < 3; i++) {
            CHECK(dense[o * 3 + i] == brick_value((size_t)(o * 8 + i)));
        }
    }
    CHECK(unpack_counting(&l, 255, &detail) == -1 && detail != NULL); /* one short */
    CHECK(unpack_counting(&l, 257, &detail) == -1 && detail == MLW_DETAIL_SINK);

    /* Part-kernel-first CONV 3x2, OFM 2, IFM 2, 8-bit: IFM block 16 clipped to
     * 2 -> one IFM micro-block; OFM micro-block; 6 elements padded to 8; 8 OFM
     * x 8 IFM channels: 8 * 64 = 512 values. (o, ky, kx, i) is brick
     * (ky*2 + kx)*64 + o*8 + i. */
    l = layout(2, 3, 2, 2, 8, 8, 8);
    l.part_kernel_first = 1;
    CHECK(unpack_counting(&l, 512, &detail) == 0);
    for (int o = 0; o < 2; o++) {
        for (int ky = 0; ky < 3; ky++) {
            for (int kx = 0; kx < 2; kx++) {
                for (int i = 0; i < 2; i++) {
                    size_t at = (size_t)(((o * 3 + ky) * 2 + kx) * 2 + i);
                    CHECK(dense[at] == brick_value((size_t)((ky * 2 + kx) * 64 + o * 8 + i)));
                }
            }
        }
    }

    /* Depthwise 3x3, 12 channels, OFM block 8, u55-32 OFM micro-block 4:
     * blocks [0,8) and [8,12); per block: OFM micro-blocks of 4, 9 elements
     * padded to 12, 4 channels each. Block 0 has 2 micro-blocks x 12 x 4 = 96
     * values; block 1 (clipped to 4) one: 48. (c, e) is brick
     * (c / 8) * 96 + ((c % 8) / 4) * 48 + e * 4 + c % 4. */
    l = layout(12, 3, 3, 1, 8, 4, 8);
    l.depthwise = 1;
    CHECK(unpack_counting(&l, 144, &detail) == 0);
    for (int c = 0; c < 12; c++) {
        for (int e = 0; e < 9; e++) {
            CHECK(dense[c * 9 + e] == brick_value((size_t)((c / 8) * 96 + ((c % 8) / 4) * 48 + e * 4 + c % 4)));
        }
    }

    /* Dilation 2 splits a 5x1 kernel into sub-kernels of 4 rows and 1 row:
     * depth-first, OFM 1, IFM 1: each element is 32 IFM x 8 OFM = 256 values;
     * sub-kernel 0 has elements ky 0..3, sub-kernel 1 ky 4. (ky) is brick ky*256. */
    l = layout(1, 5, 1, 1, 16, 8, 4);
    CHECK(unpack_counting(&l, 5 * 256, &detail) == 0);
    for (int ky = 0; ky < 5; ky++) {
        CHECK(dense[ky] == brick_value((size_t)ky * 256u));
    }
}

int main(void)
{
    test_uncompressed();
    test_palette_zero_runs();
    test_grc_carry();
    test_corrupt();
    test_brick_order();
    return test_summary("test_mlw_decode", 30);
}
