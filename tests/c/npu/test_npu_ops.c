/* ptec_npu_model's POOL, ELEMENTWISE, LUT, layouts and output stage on
 * hand-made streams. Each expected value is computed here from the rule in
 * spec §4.2/§5 written out directly (floor shifts, plain loops), not through
 * the model's code. What the spec marks I (inferred) is checked as the model
 * implements it, so a change of rule shows up here. */
#include "npu_model.h"
#include "test_util.h"
#include "mlw_writer.h"

static uint32_t cmd[1024];
static size_t n;
static void c0(uint32_t op, uint32_t param)
{
    cmd[n++] = op | (param & 0xFFFFu) << 16;
}
static void c1(uint32_t op, uint32_t param, uint32_t payload)
{
    cmd[n++] = op | 0x4000u | (param & 0xFFFFu) << 16;
    cmd[n++] = payload;
}

static uint8_t region0[1024] __attribute__((aligned(16)));
static uint8_t region1[2048] __attribute__((aligned(16)));
static ptec_npu_model model;

static int run(void)
{
    uint64_t base[2] = {(uint64_t)(uintptr_t)region0, (uint64_t)(uintptr_t)region1};
    size_t size[2] = {sizeof(region0), sizeof(region1)};
    c0(0x000, 0xFFFF);
    int rc = ptec_npu_model_run(&model, cmd, n, base, size, 2);
    n = 0;
    if (rc != 0) {
        const ptec_npu_fault *f = ptec_npu_model_fault(&model);
        fprintf(stderr, "run: fault at command %u: %s\n", f->command_index, f->detail ? f->detail : "-");
    }
    return rc;
}

/* precision words */
#define S8 0x1u
#define S32_IN 0x9u        /* signed, size 2 ([3:2]) */
#define S32_OUT 0x5u       /* signed, size 2 ([2:1]) */
#define NHCWB16 (1u << 6)
#define GLOBAL_SCALE (1u << 8)
#define NATURAL (2u << 14)
#define TRUNCATE (1u << 14)

/* A feature map: region 1 offset `base`, NHWC strides for w x d of e bytes, one tile. */
static void fmap(uint32_t precision_op, uint32_t region_op, uint32_t base0_op, uint32_t w0_op, uint32_t zp_op,
                 uint32_t precision, uint32_t base, uint32_t w, uint32_t h, uint32_t d, uint32_t e, int zp)
{
    c0(precision_op, precision);
    c0(region_op, 1);
    c1(base0_op, 0, base);
    c1(base0_op + 4u, 0, d * e);     /* X */
    c1(base0_op + 5u, 0, w * d * e); /* Y */
    c1(base0_op + 6u, 0, 16u * e * w);
    c0(w0_op, w - 1u);
    c0(w0_op + 1u, h - 1u);
    c0(w0_op + 2u, h - 1u);
    c0(zp_op, (uint32_t)zp);
}
static void ifm(uint32_t precision, uint32_t base, uint32_t w, uint32_t h, uint32_t d, uint32_t e, int zp)
{
    fmap(0x105, 0x10F, 0x000, 0x10A, 0x109, precision, base, w, h, d, e, zp);
    c0(0x104, d - 1u);
}
static void ifm2(uint32_t precision, uint32_t base, uint32_t w, uint32_t h, uint32_t d, uint32_t e, int zp)
{
    fmap(0x185, 0x18F, 0x080, 0x18A, 0x189, precision, base, w, h, d, e, zp);
}
/* The OFM, with neutral defaults a test may override after it (registers
 * start at 0 each run): no clamp, OPA = OPB = 1, OFM_SCALE 1 shift 0. */
static void ofm(uint32_t precision, uint32_t base, uint32_t w, uint32_t h, uint32_t d, uint32_t e, int zp)
{
    fmap(0x114, 0x11F, 0x010, 0x11A, 0x118, precision, base, w, h, d, e, zp);
    c0(0x111, w - 1u);
    c0(0x112, h - 1u);
    c0(0x113, d - 1u);
    c0(0x126, 0x8000u);
    c0(0x127, 0x7FFFu);
    c1(0x025, 0, 1);
    c1(0x026, 0, 1);
    c1(0x024, 0, 1);
}
static void kernel(uint32_t kw, uint32_t kh, uint32_t stride, uint32_t pad)
{
    c0(0x120, kw - 1u);
    c0(0x121, kh - 1u);
    c0(0x122, stride == 2u ? 3u : 0u);
    c0(0x100, pad);
    c0(0x101, pad);
    c0(0x102, pad);
    c0(0x103, pad);
}
static void clamp(int lo, int hi)
{
    c0(0x126, (uint32_t)lo);
    c0(0x127, (uint32_t)hi);
}

static int64_t floor_shift(int64_t v, unsigned s)
{
    int64_t d = (int64_t)1 << s;
    return v >= 0 ? v / d : -((-v + d - 1) / d);
}
static int clampi(int64_t v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : (int)v;
}

static int8_t *s8(uint32_t offset)
{
    return (int8_t *)(region1 + offset);
}
static int32_t get32(uint32_t offset)
{
    int32_t v;
    memcpy(&v, region1 + offset, 4);
    return v;
}
static void put32(uint32_t offset, int32_t v)
{
    memcpy(region1 + offset, &v, 4);
}

static void test_pools(void)
{
    /* MAX 2x2 stride 2, 4x4x3 s8 -> 2x2x3 */
    for (int i = 0; i < 48; i++) {
        *s8((uint32_t)i) = (int8_t)((i * 37) % 251 - 125);
    }
    ifm(S8, 0, 4, 4, 3, 1, 5);
    ofm(S8, 512, 2, 2, 3, 1, 5);
    kernel(2, 2, 2, 0);
    clamp(-128, 127);
    c0(0x005, 0);
    CHECK(run() == 0);
    int bad = 0;
    for (int oy = 0; oy < 2; oy++) {
        for (int ox = 0; ox < 2; ox++) {
            for (int c = 0; c < 3; c++) {
                int best = -1000;
                for (int ky = 0; ky < 2; ky++) {
                    for (int kx = 0; kx < 2; kx++) {
                        int v = *s8((uint32_t)(((2 * oy + ky) * 4 + 2 * ox + kx) * 3 + c));
                        best = v > best ? v : best;
                    }
                }
                bad += *s8((uint32_t)(512 + (oy * 2 + ox) * 3 + c)) != best;
            }
        }
    }
    CHECK(bad == 0);

    /* AVERAGE 3x3 stride 1 pad 1 on 4x4x3 (padding taps skipped), global
     * scale M = 2^30, s = 31, NATURAL: floor((sum + 1) / 2), ofm zp -3 */
    ifm(S8, 0, 4, 4, 3, 1, 5);
    ofm(S8 | GLOBAL_SCALE | NATURAL, 512, 4, 4, 3, 1, -3);
    kernel(3, 3, 1, 1);
    c1(0x024, 31, 1u << 30);
    c0(0x005, 1);
    CHECK(run() == 0);
    bad = 0;
    for (int oy = 0; oy < 4; oy++) {
        for (int ox = 0; ox < 4; ox++) {
            for (int c = 0; c < 3; c++) {
                int64_t sum = 0;
                for (int iy = oy - 1; iy <= oy + 1; iy++) {
                    for (int ix = ox - 1; ix <= ox + 1; ix++) {
                        if (iy >= 0 && iy < 4 && ix >= 0 && ix < 4) {
                            sum += *s8((uint32_t)((iy * 4 + ix) * 3 + c)) - 5;
                        }
                    }
                }
                bad += *s8((uint32_t)(512 + (oy * 4 + ox) * 3 + c)) != clampi(floor_shift(sum + 1, 1) - 3, -128, 127);
            }
        }
    }
    CHECK(bad == 0);

    /* AVERAGE with per-channel scale records in region 0: bias + scale */
    memset(region0, 0, 64);
    for (int c = 0; c < 3; c++) {
        uint8_t *r = region0 + 10 * c;
        int64_t bias = c == 1 ? -300 : 1000 * c;
        for (int i = 0; i < 5; i++) {
            r[i] = (uint8_t)((uint64_t)bias >> (8 * i));
        }
        uint32_t scale = (uint32_t)(3u << 29) + (uint32_t)c; /* ~0.75 */
        memcpy(r + 5, &scale, 4);
        r[9] = 33; /* shift 33 */
    }
    ifm(S8, 0, 4, 4, 3, 1, 0);
    ofm(S8, 512, 2, 2, 3, 1, 0); /* per-channel, DBL */
    kernel(2, 2, 2, 0);
    c0(0x129, 0);
    c1(0x022, 0, 0);
    c1(0x023, 0, 32);
    c0(0x005, 1);
    CHECK(run() == 0);
    bad = 0;
    for (int oy = 0; oy < 2; oy++) {
        for (int ox = 0; ox < 2; ox++) {
            for (int c = 0; c < 3; c++) {
                int64_t sum = c == 1 ? -300 : 1000 * c;
                for (int ky = 0; ky < 2; ky++) {
                    for (int kx = 0; kx < 2; kx++) {
                        sum += *s8((uint32_t)(((2 * oy + ky) * 4 + 2 * ox + kx) * 3 + c));
                    }
                }
                /* DBL, s > 31: floor((p + 2^32 + (p >= 0 ? 2^30 : -2^30)) / 2^33) */
                int64_t p = sum * (int64_t)((3u << 29) + (uint32_t)c);
                int64_t want = floor_shift(p + ((int64_t)1 << 32) + (p >= 0 ? 1 : -1) * ((int64_t)1 << 30), 33);
                bad += *s8((uint32_t)(512 + (oy * 2 + ox) * 3 + c)) != clampi(want, -128, 127);
            }
        }
    }
    CHECK(bad == 0);
    /* the same with SCALE_LENGTH one record short: a clean bus fault (scales) */
    ifm(S8, 0, 4, 4, 3, 1, 0);
    ofm(S8, 512, 2, 2, 3, 1, 0);
    kernel(2, 2, 2, 0);
    c0(0x129, 0);
    c1(0x023, 0, 20);
    c0(0x005, 1);
    CHECK(run() == -1 && (ptec_npu_model_fault(&model)->status >> 12) == 3u);

    /* REDUCE_SUM 1x1 over 3 channels into an int32 OFM, M = 1, s = 0 */
    ifm(S8, 0, 4, 4, 3, 1, 5);
    ofm(S32_OUT | GLOBAL_SCALE, 512, 4, 4, 1, 4, 0);
    kernel(1, 1, 1, 0);
    c1(0x024, 0, 1);
    c0(0x005, 2);
    CHECK(run() == 0);
    bad = 0;
    for (int i = 0; i < 16; i++) {
        int32_t sum = 0;
        for (int c = 0; c < 3; c++) {
            sum += *s8((uint32_t)(i * 3 + c)) - 5;
        }
        bad += get32((uint32_t)(512 + 4 * i)) != sum;
    }
    CHECK(bad == 0);
}

/* ELEMENTWISE `mode` on the maps set before: IFM2_BROADCAST, OPA/OPB, the
 * OFM_SCALE shift (M = 1), the clamp; then runs. */
static int elementwise(uint32_t mode, uint32_t broadcast, uint32_t opa, uint32_t opb, uint32_t shift, int lo, int hi)
{
    c0(0x180, broadcast);
    c1(0x025, 0, opa);
    c1(0x026, 0, opb);
    c1(0x024, shift, 1);
    clamp(lo, hi);
    c0(0x006, mode);
    return run();
}

static void test_elementwise(void)
{
    for (int i = 0; i < 64; i++) {
        *s8((uint32_t)i) = (int8_t)((i * 53) % 256 - 128);
        *s8((uint32_t)(128 + i)) = (int8_t)((i * 29) % 256 - 128);
    }
    /* ADD s8, mode 0: ((a - 2)·3 + (b + 3)·5) · 1 >> 1 NATURAL, + 10, clamp -100..100 */
    ifm(S8, 0, 4, 4, 4, 1, 2);
    ifm2(S8, 128, 4, 4, 4, 1, -3);
    ofm(S8 | GLOBAL_SCALE | NATURAL, 512, 4, 4, 4, 1, 10);
    CHECK(elementwise(1, 0, 3, 5, 1, -100, 100) == 0);
    int bad = 0;
    for (int i = 0; i < 64; i++) {
        int64_t v = (int64_t)(*s8((uint32_t)i) - 2) * 3 + (int64_t)(*s8((uint32_t)(128 + i)) + 3) * 5;
        bad += *s8((uint32_t)(512 + i)) != clampi(floor_shift(v + 1, 1) + 10, -100, 100);
    }
    CHECK(bad == 0);

    /* SUB reversed (b - a) with IFM2 broadcast over C (IFM2 4x4x1), TRUNCATE shift 2 */
    ifm(S8, 0, 4, 4, 4, 1, 0);
    ifm2(S8, 128, 4, 4, 1, 1, 0);
    ofm(S8 | GLOBAL_SCALE | TRUNCATE, 512, 4, 4, 4, 1, 0);
    CHECK(elementwise(2, 0x44, 1, 1, 2, -128, 127) == 0);
    bad = 0;
    for (int i = 0; i < 64; i++) {
        int v = *s8((uint32_t)(128 + i / 4)) - *s8((uint32_t)i);
        bad += *s8((uint32_t)(512 + i)) != clampi(v / 4, -128, 127); /* C division truncates */
    }
    CHECK(bad == 0);

    /* ADD/SUB s8 in IFM scale modes 1 and 2 (I, unverified): the named operand
     * is R_DBL(x · OPA_SCALE, OPA_SHIFT), the other x · 2^19; then the OFM's
     * (2^30, 49) NATURAL and zp -4. OPA = 0x5A000000, shift 33: s > 31, so
     * floor((p + 2^32 ± 2^30) / 2^33). */
    for (uint32_t mode = 1; mode <= 2; mode++) {
        ifm(S8 | (mode << 8), 0, 4, 4, 4, 1, 3);
        ifm2(S8, 128, 4, 4, 4, 1, -5);
        ofm(S8 | GLOBAL_SCALE | NATURAL, 512, 4, 4, 4, 1, -4);
        c0(0x180, 0);
        c1(0x025, 33, 0x5A000000u);
        c1(0x026, 0, 0);
        c1(0x024, 49, 1u << 30);
        c0(0x006, mode == 1 ? 1 : 2);
        CHECK(run() == 0);
        bad = 0;
        for (int i = 0; i < 64; i++) {
            int64_t a = *s8((uint32_t)i) - 3, b = *s8((uint32_t)(128 + i)) + 5;
            int64_t *scaled = mode == 1 ? &a : &b, *plain = mode == 1 ? &b : &a;
            int64_t p = *scaled * 0x5A000000;
            *scaled = floor_shift(p + ((int64_t)1 << 32) + (p >= 0 ? 1 : -1) * ((int64_t)1 << 30), 33);
            *plain *= (int64_t)1 << 19;
            int64_t v = mode == 1 ? a + b : a - b;
            bad += *s8((uint32_t)(512 + i)) != clampi(floor_shift(v * (1 << 30) + ((int64_t)1 << 48), 49) - 4, -128, 127);
        }
        CHECK(bad == 0);
    }

    /* MIN and MAX with zero points: min(a - 1, b + 2) + 7 */
    for (uint32_t mode = 3; mode <= 4; mode++) {
        ifm(S8, 0, 4, 4, 4, 1, 1);
        ifm2(S8, 128, 4, 4, 4, 1, -2);
        ofm(S8, 512, 4, 4, 4, 1, 7);
        c0(0x180, 0);
        c0(0x006, mode);
        CHECK(run() == 0);
        bad = 0;
        for (int i = 0; i < 64; i++) {
            int a = *s8((uint32_t)i) - 1, b = *s8((uint32_t)(128 + i)) + 2;
            bad += *s8((uint32_t)(512 + i)) != clampi((mode == 3 ? (a < b ? a : b) : (a > b ? a : b)) + 7, -128, 127);
        }
        CHECK(bad == 0);
    }

    /* int32: CLZ; SHR NATURAL and TRUNCATE by IFM2; SHL; MUL shift only; scalar IFM2 */
    const int32_t a32[8] = {0, 1, -1, 0x10000, 1000, -1000, 77, -77};
    const int32_t b32[8] = {0, 1, 2, 3, 4, 5, 6, 3};
    for (int i = 0; i < 8; i++) {
        put32((uint32_t)(4 * i), a32[i]);
        put32((uint32_t)(128 + 4 * i), b32[i]);
    }
    ifm(S32_IN, 0, 8, 1, 1, 4, 0);
    ofm(S32_OUT, 512, 8, 1, 1, 4, 0);
    c0(0x006, 7);
    CHECK(run() == 0);
    const int32_t clz[8] = {32, 31, 0, 15, 22, 0, 25, 0};
    bad = 0;
    for (int i = 0; i < 8; i++) {
        bad += get32((uint32_t)(512 + 4 * i)) != clz[i];
    }
    CHECK(bad == 0);
    for (int round = 0; round < 2; round++) {
        ifm(S32_IN, 0, 8, 1, 1, 4, 0);
        ifm2(S32_IN, 128, 8, 1, 1, 4, 0);
        ofm(S32_OUT | (round ? TRUNCATE : NATURAL), 512, 8, 1, 1, 4, 0);
        c0(0x180, 0);
        c0(0x006, 8);
        CHECK(run() == 0);
        bad = 0;
        for (int i = 0; i < 8; i++) {
            int64_t d = (int64_t)1 << b32[i];
            int64_t want = round ? a32[i] / d : floor_shift(a32[i] + (b32[i] ? d / 2 : 0), (unsigned)b32[i]);
            bad += get32((uint32_t)(512 + 4 * i)) != want;
        }
        CHECK(bad == 0);
    }
    ifm(S32_IN, 0, 8, 1, 1, 4, 0);
    ifm2(S32_IN, 128, 8, 1, 1, 4, 0);
    ofm(S32_OUT, 512, 8, 1, 1, 4, 0);
    c0(0x006, 9);
    CHECK(run() == 0);
    bad = 0;
    for (int i = 0; i < 8; i++) {
        bad += get32((uint32_t)(512 + 4 * i)) != a32[i] * (1 << b32[i]);
    }
    CHECK(bad == 0);
    /* MUL int32 by the scalar -3 (IFM2_BROADCAST[7]), OFM_SCALE (M ignored) shift 1 NATURAL */
    ifm(S32_IN, 0, 8, 1, 1, 4, 0);
    ifm2(S32_IN, 128, 8, 1, 1, 4, 0);
    ofm(S32_OUT | GLOBAL_SCALE | NATURAL, 512, 8, 1, 1, 4, 0);
    c0(0x180, 0x80);
    c0(0x181, (uint32_t)-3);
    c1(0x024, 1, 12345);
    c0(0x006, 0);
    CHECK(run() == 0);
    bad = 0;
    for (int i = 0; i < 8; i++) {
        bad += get32((uint32_t)(512 + 4 * i)) != floor_shift((int64_t)a32[i] * -3 + 1, 1);
    }
    CHECK(bad == 0);
}

static void test_layouts_and_lut(void)
{
    /* NHCWB16 OFM 2x1x20 s8: element (0, x, c) at (c / 16)·STRIDE_C + x·16 + c % 16 */
    for (int i = 0; i < 40; i++) {
        *s8((uint32_t)i) = (int8_t)(i - 20);
    }
    memset(region1 + 512, 0x55, 128);
    ifm(S8, 0, 2, 1, 20, 1, 0);
    ofm(S8 | NHCWB16, 512, 2, 1, 20, 1, 0);
    c1(0x016, 0, 32); /* STRIDE_C = 16·W */
    c1(0x015, 0, 64); /* STRIDE_Y */
    c0(0x180, 0x80);
    c0(0x181, 0);
    c0(0x185, S8);
    c0(0x189, 0);
    c1(0x025, 0, 1);
    c1(0x026, 0, 1);
    c0(0x114, S8 | NHCWB16 | GLOBAL_SCALE);
    c1(0x024, 0, 1);
    c0(0x006, 1);
    CHECK(run() == 0);
    int bad = 0;
    for (int x = 0; x < 2; x++) {
        for (int c = 0; c < 20; c++) {
            bad += *s8((uint32_t)(512 + (c / 16) * 32 + x * 16 + c % 16)) != x * 20 + c - 20;
        }
    }
    CHECK(bad == 0);
    CHECK(region1[512 + 32 + 4] == 0x55 && region1[512 + 48 + 4] == 0x55); /* channels >= 20 untouched */

    /* Two IFM tiles: columns 0..1 in tile 0 at 0, columns 2..3 in tile 1 at 256 */
    for (int i = 0; i < 8; i++) {
        *s8((uint32_t)i) = (int8_t)i;           /* tile 0: 2x2 */
        *s8((uint32_t)(256 + i)) = (int8_t)(100 + i); /* tile 1: 2x2 */
    }
    ifm(S8, 0, 4, 2, 1, 1, 0);
    c1(0x001, 0, 256);
    c0(0x10A, 1); /* WIDTH0 = 2 */
    c1(0x004, 0, 1);
    c1(0x005, 0, 2);
    ofm(S8 | GLOBAL_SCALE, 512, 4, 2, 1, 1, 0);
    c0(0x180, 0x80);
    c0(0x006, 1);
    CHECK(run() == 0);
    const int8_t tiles[8] = {0, 1, 100, 101, 2, 3, 102, 103};
    CHECK(memcmp(region1 + 512, tiles, 8) == 0);

    /* LUT: a 256-entry s8 table DMA'd to TABLE_1 (u55-128: 0x5800 + 256), used
     * by an ADD with the scalar 0: out = table[a + 128] */
    for (int i = 0; i < 256; i++) {
        region0[256 + i] = (uint8_t)(255 - i);
    }
    c0(0x130, 0);
    c0(0x131, 0x103);
    c1(0x030, 0, 256);
    c1(0x031, 0, 0x5800 + 256);
    c1(0x032, 0, 256);
    c0(0x010, 0);
    ifm(S8, 0, 4, 4, 4, 1, 0);
    ofm(S8 | GLOBAL_SCALE, 512, 4, 4, 4, 1, 0);
    c0(0x180, 0x80);
    c0(0x181, 0);
    c1(0x024, 0, 1);
    clamp(-128, 127);
    c0(0x125, 17);
    c0(0x006, 1);
    CHECK(run() == 0);
    bad = 0;
    for (int i = 0; i < 64; i++) {
        bad += region1[512 + i] != (uint8_t)(255 - (*s8((uint32_t)i) + 128));
    }
    CHECK(bad == 0);
}

static void expect_parse_fault(const char *what)
{
    int rc = run();
    const ptec_npu_fault *f = ptec_npu_model_fault(&model);
    if (rc != -1 || !(f->status & PTEC_NPU_STATUS_CMD_PARSE_ERROR) || f->detail == NULL) {
        fprintf(stderr, "%s: rc %d status 0x%x\n", what, rc, f->status);
        test_failures++;
    }
}

static void expect_bus_fault(const char *what, uint32_t channel)
{
    int rc = run();
    const ptec_npu_fault *f = ptec_npu_model_fault(&model);
    if (rc != -1 || !(f->status & PTEC_NPU_STATUS_BUS_STATUS) || (f->status >> 12) != channel) {
        fprintf(stderr, "%s: rc %d status 0x%x\n", what, rc, f->status);
        test_failures++;
    }
}

/* A 4x4x4 s8 IFM and OFM in region 1 (hostile cases vary one register after). */
static void maps(uint32_t ifm_precision, uint32_t ifm_base, uint32_t ofm_base)
{
    ifm(ifm_precision, ifm_base, 4, 4, 4, 1, 0);
    ofm(S8 | GLOBAL_SCALE, ofm_base, 4, 4, 4, 1, 0);
}

static void test_hostile(void)
{
    /* IFM past the end of region 1 (2048 B): the last element reads 2048 */
    maps(S8, 2048 - 63, 0);
    c0(0x180, 0x80);
    c0(0x006, 1);
    expect_bus_fault("IFM read past region", 1);
    /* OFM past the end, via a huge stride */
    maps(S8, 0, 0);
    c1(0x015, 0, 0xFFFFFFFFu);
    c0(0x006, 1);
    expect_bus_fault("OFM stride", 8);
    /* OFM into region 0 */
    maps(S8, 0, 0);
    c0(0x11F, 0);
    c0(0x006, 1);
    expect_bus_fault("OFM in region 0", 8);
    /* IFM2 through region 7 (no base) */
    ifm(S8, 0, 4, 4, 4, 1, 0);
    ifm2(S8, 0, 4, 4, 4, 1, 0);
    ofm(S8 | GLOBAL_SCALE, 512, 4, 4, 4, 1, 0);
    c0(0x18F, 7);
    c0(0x006, 1);
    expect_bus_fault("IFM2 region 7", 1);
    /* not modelled, or reserved: clean parse faults */
    maps(S8, 0, 512);
    c0(0x006, 5);
    expect_parse_fault("LRELU");
    maps(S8, 0, 512);
    c0(0x006, 10);
    expect_parse_fault("elementwise 10");
    maps(S8 | (3u << 8), 0, 512);
    c0(0x006, 1);
    expect_parse_fault("IFM scale mode 3");
    maps(S8, 0, 512);
    c0(0x125, 3);
    c0(0x006, 1);
    expect_parse_fault("TANH");
    maps(S8, 0, 512);
    c0(0x125, 1u << 12);
    c0(0x006, 1);
    expect_parse_fault("clip range 1");
    maps(S8, 0, 512);
    kernel(3, 3, 1, 0);
    c0(0x005, 3);
    expect_parse_fault("pool 3");
    ifm(S8, 0, 4, 4, 4, 1, 0);
    ofm(S8, 512, 2, 2, 4, 1, 0);
    kernel(1, 1, 1, 2);
    c0(0x005, 0);
    expect_parse_fault("pads leave no IFM");
    ifm(S8, 0, 4, 4, 4, 1, 0);
    ofm(S8, 512, 2, 2, 4, 1, 0);
    c0(0x122, 1u << 3); /* dilation x 2 with an even extent */
    c0(0x120, 1);
    c0(0x005, 0);
    expect_parse_fault("extent vs dilation");
    maps(S8, 0, 512);
    c0(0x002, 0);
    CHECK(run() == -1); /* CONV: the stub faults; the real one reads no weights here */
    /* a huge OFM with zero strides spends the budget instead of running for hours */
    model.work_limit = 1u << 20;
    ifm(S8, 0, 1, 1, 1, 1, 0);
    c1(0x004, 0, 0);
    c1(0x005, 0, 0);
    ofm(S8 | GLOBAL_SCALE, 512, 65536, 65536, 1, 1, 0);
    c1(0x014, 0, 0);
    c1(0x015, 0, 0);
    c0(0x180, 0x80);
    c0(0x006, 1);
    expect_parse_fault("budget");
    model.work_limit = PTEC_NPU_DEFAULT_WORK_LIMIT;
}

/* ---- CONV and DEPTHWISE ------------------------------------------------ */

static uint8_t conv_work[16384] __attribute__((aligned(16)));
static const int16_t palette16[16] = {-7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8};
static bit_writer weight_stream;

/* a weight in -7..8 */
static int16_t small_weight(int k)
{
    return (int16_t)(k * 7 % 16 - 7);
}

/* The op's mlw stream (the brick-order values) at region 0 + at, for core 0
 * (WEIGHT_BASE/LENGTH, opcode 0x020) or core 1 (WEIGHT1_*, 0x090). */
static void weights_at(uint32_t at, const int16_t *bricks, uint32_t n, uint32_t base_op)
{
    size_t len = mlw_palette_stream(&weight_stream, palette16, 16, bricks, n);
    CHECK(len != 0u && at + len <= sizeof(region0));
    memcpy(region0 + at, weight_stream.bytes, len);
    c0(0x128, 0);
    c1(base_op, 0, at);
    c1(base_op + 1u, 0, (uint32_t)len);
}

static void scale_record(uint32_t at, int64_t bias, uint32_t scale, uint32_t shift)
{
    for (int i = 0; i < 5; i++) {
        region0[at + (uint32_t)i] = (uint8_t)((uint64_t)bias >> (8 * i));
    }
    memcpy(region0 + at + 5, &scale, 4);
    region0[at + 9] = (uint8_t)shift;
}

/* The expected values are sums written out per spec §5.2: bias +
 * sum (ifm - zp) * w over taps inside the IFM; the brick order of each
 * stream is worked out by hand for its case (spec §4.4). */
static void test_conv(void)
{
    ptec_npu_hw hw;
    CHECK(ptec_npu_hw_from_name("ethos-u55-128", &hw) == 0);
    ptec_npu_model_init(&model, &hw, conv_work, sizeof(conv_work));

    /* A: CONV 2x2 dilation 2 (extent 3), pads 1, IFM 5x5x3 s8 zp 3 -> OFM
     * 5x5x3, per-channel records, NATURAL. Depth-first, u55-128: IFM block
     * 32 unclipped, 4 elements x 4 IFM micro-blocks x 8 OFM x 8 IFM = 1024
     * values; (o, ky, kx, i) is brick (ky*2 + kx)*256 + o*8 + i. */
    static int16_t bricks[1024];
    int16_t wa[3][2][2][3];
    memset(bricks, 0, sizeof(bricks));
    for (int o = 0; o < 3; o++) {
        for (int ky = 0; ky < 2; ky++) {
            for (int kx = 0; kx < 2; kx++) {
                for (int i = 0; i < 3; i++) {
                    wa[o][ky][kx][i] = small_weight(o * 12 + ky * 6 + kx * 3 + i);
                    bricks[(ky * 2 + kx) * 256 + o * 8 + i] = wa[o][ky][kx][i];
                }
            }
        }
    }
    for (int i = 0; i < 75; i++) {
        *s8((uint32_t)i) = (int8_t)((i * 29) % 200 - 100);
    }
    for (int c = 0; c < 3; c++) {
        scale_record(576u + 10u * (uint32_t)c, 100 * c - 50, (1u << 30) + 12345u * (uint32_t)c, 33);
    }
    ifm(S8, 0, 5, 5, 3, 1, 3);
    ofm(S8 | NATURAL, 128, 5, 5, 3, 1, -2);
    kernel(3, 3, 1, 1);
    c0(0x122, 0x18); /* dilation x and y 2 */
    c0(0x117, 7);
    weights_at(0, bricks, 1024, 0x020);
    c0(0x129, 0);
    c1(0x022, 0, 576);
    c1(0x023, 0, 32);
    c0(0x002, 0);
    CHECK(run() == 0);
    int bad = 0;
    for (int oy = 0; oy < 5; oy++) {
        for (int ox = 0; ox < 5; ox++) {
            for (int o = 0; o < 3; o++) {
                int64_t v = 100 * o - 50;
                for (int ky = 0; ky < 2; ky++) {
                    for (int kx = 0; kx < 2; kx++) {
                        int iy = oy - 1 + 2 * ky, ix = ox - 1 + 2 * kx;
                        for (int i = 0; i < 3 && iy >= 0 && iy < 5 && ix >= 0 && ix < 5; i++) {
                            v += (int64_t)(*s8((uint32_t)((iy * 5 + ix) * 3 + i)) - 3) * wa[o][ky][kx][i];
                        }
                    }
                }
                int64_t scale = (1 << 30) + 12345 * o;
                int want = clampi(floor_shift(v * scale + ((int64_t)1 << 32), 33) - 2, -128, 127);
                bad += *s8((uint32_t)(128 + (oy * 5 + ox) * 3 + o)) != want;
            }
        }
    }
    CHECK(bad == 0);
    CHECK(ptec_npu_model_stats(&model)->macs == 25u * 3u * 4u * 3u);

    /* B: DEPTHWISE 3x3 on an s16 IFM 4x4x2 (zp -1000), stride x 3 (KERNEL_STRIDE
     * bit 6) and y 2 (bit 1), pads top 1 right 2 -> OFM 2x2x2, global scale
     * 2^30 >> 40. Brick: 9 elements padded to 12, 8 OFM channels each: (c, ky,
     * kx) is brick (ky*3 + kx)*8 + c, 96 values. */
    int16_t wb[2][3][3];
    memset(bricks, 0, sizeof(bricks));
    for (int c = 0; c < 2; c++) {
        for (int e = 0; e < 9; e++) {
            wb[c][e / 3][e % 3] = small_weight(c * 9 + e + 5);
            bricks[e * 8 + c] = wb[c][e / 3][e % 3];
        }
    }
    for (int i = 0; i < 32; i++) {
        int16_t v = (int16_t)((i * 997) % 3000 - 1500);
        memcpy(region1 + 256 + 2 * i, &v, 2);
    }
    ifm(0x5, 256, 4, 4, 2, 2, -1000); /* s16 */
    ofm(S8 | GLOBAL_SCALE | NATURAL, 384, 2, 2, 2, 1, 5);
    c1(0x024, 40, 1u << 30);
    kernel(3, 3, 1, 0);
    c0(0x122, 0x42);
    c0(0x100, 1);
    c0(0x102, 2);
    c0(0x117, 7);
    weights_at(640, bricks, 96, 0x020);
    c0(0x003, 0);
    CHECK(run() == 0);
    bad = 0;
    for (int oy = 0; oy < 2; oy++) {
        for (int ox = 0; ox < 2; ox++) {
            for (int c = 0; c < 2; c++) {
                int64_t v = 0;
                for (int ky = 0; ky < 3; ky++) {
                    for (int kx = 0; kx < 3; kx++) {
                        int iy = oy * 2 - 1 + ky, ix = ox * 3 + kx;
                        if (iy >= 0 && iy < 4 && ix >= 0 && ix < 4) {
                            int16_t x;
                            memcpy(&x, region1 + 256 + 2 * ((iy * 4 + ix) * 2 + c), 2);
                            v += (int64_t)(x + 1000) * wb[c][ky][kx];
                        }
                    }
                }
                int want = clampi(floor_shift(v * (1 << 30) + ((int64_t)1 << 39), 40) + 5, -128, 127);
                bad += *s8((uint32_t)(384 + (oy * 2 + ox) * 2 + c)) != want;
            }
        }
    }
    CHECK(bad == 0);

    /* C: part-kernel-first CONV 3x1 on u55-32 (OFM micro-block 4), IFM 2x4x2
     * s8 -> OFM 2x2x2, global 2^30 >> 32. IFM block 16 clipped to 2, 3
     * elements padded to 4, 4 OFM x 8 IFM each: (o, ky, i) is brick
     * ky*32 + o*8 + i, 128 values. */
    CHECK(ptec_npu_hw_from_name("ethos-u55-32", &hw) == 0);
    ptec_npu_model_init(&model, &hw, conv_work, sizeof(conv_work));
    int16_t wc[2][3][2];
    memset(bricks, 0, sizeof(bricks));
    for (int o = 0; o < 2; o++) {
        for (int ky = 0; ky < 3; ky++) {
            for (int i = 0; i < 2; i++) {
                wc[o][ky][i] = small_weight(o * 6 + ky * 2 + i + 3);
                bricks[ky * 32 + o * 8 + i] = wc[o][ky][i];
            }
        }
    }
    for (int i = 0; i < 16; i++) {
        *s8(512u + (uint32_t)i) = (int8_t)((i * 13) % 20 - 10);
    }
    ifm(S8, 512, 2, 4, 2, 1, 0);
    ofm(S8 | GLOBAL_SCALE | NATURAL, 640, 2, 2, 2, 1, 0);
    c1(0x024, 32, 1u << 30);
    kernel(1, 3, 1, 0);
    c0(0x122, 1u << 2);
    c0(0x117, 7);
    weights_at(768, bricks, 128, 0x020);
    c0(0x002, 0);
    CHECK(run() == 0);
    bad = 0;
    for (int oy = 0; oy < 2; oy++) {
        for (int ox = 0; ox < 2; ox++) {
            for (int o = 0; o < 2; o++) {
                int64_t v = 0;
                for (int ky = 0; ky < 3; ky++) {
                    for (int i = 0; i < 2; i++) {
                        v += (int64_t)*s8((uint32_t)(512 + ((oy + ky) * 2 + ox) * 2 + i)) * wc[o][ky][i];
                    }
                }
                bad += *s8((uint32_t)(640 + (oy * 2 + ox) * 2 + o)) != clampi(floor_shift(v + 2, 2), -128, 127);
            }
        }
    }
    CHECK(bad == 0);

    /* the stream one value short of the op's bricks: a clean parse fault */
    CHECK(ptec_npu_hw_from_name("ethos-u55-128", &hw) == 0);
    ptec_npu_model_init(&model, &hw, conv_work, sizeof(conv_work));
    ifm(S8, 512, 2, 4, 2, 1, 0);
    ofm(S8 | GLOBAL_SCALE, 640, 2, 2, 2, 1, 0);
    kernel(1, 3, 1, 0);
    c0(0x122, 1u << 2);
    c0(0x117, 7);
    weights_at(768, bricks, 255, 0x020);
    c0(0x002, 0);
    CHECK(run() == -1 && ptec_npu_model_fault(&model)->status == (PTEC_NPU_STATUS_CMD_PARSE_ERROR |
                                                                  PTEC_NPU_STATUS_IRQ_RAISED));
    /* a weight stream that runs past region 0: a bus fault on the weight channel */
    ifm(S8, 512, 2, 4, 2, 1, 0);
    ofm(S8 | GLOBAL_SCALE, 640, 2, 2, 2, 1, 0);
    kernel(1, 3, 1, 0);
    c0(0x122, 1u << 2);
    c0(0x117, 7);
    c0(0x128, 0);
    c1(0x020, 0, 1000);
    c1(0x021, 0, 64);
    c0(0x002, 0);
    CHECK(run() == -1 && ptec_npu_model_fault(&model)->status ==
                             (PTEC_NPU_STATUS_BUS_STATUS | PTEC_NPU_STATUS_IRQ_RAISED |
                              PTEC_NPU_STATUS_FAULTING_INTERFACE |
                              PTEC_NPU_CHANNEL_WEIGHTS << PTEC_NPU_STATUS_FAULTING_CHANNEL_SHIFT));

    /* D: dual-core CONV on the U65-512 (PARALLEL_MODE 1; inferred from Vela,
     * spec §4.3): core 0's streams hold OFM channels 0 and 2, core 1's channel
     * 1, each with block depth 8 / 2 = 4. 1x1, IFM 2x1x2 -> OFM 2x1x3,
     * per-channel records (bias 10c, 2^30 >> 31, NATURAL). Per core,
     * depth-first: (j, i) is brick j*8 + i of 256. */
    CHECK(ptec_npu_hw_from_name("ethos-u65-512", &hw) == 0);
    ptec_npu_model_init(&model, &hw, conv_work, sizeof(conv_work));
    int16_t wd[3][2];
    static int16_t bricks1[256];
    memset(bricks, 0, sizeof(bricks));
    memset(bricks1, 0, sizeof(bricks1));
    for (int o = 0; o < 3; o++) {
        for (int i = 0; i < 2; i++) {
            wd[o][i] = small_weight(o * 2 + i + 1);
            if (o % 2 == 0) {
                bricks[(o / 2) * 8 + i] = wd[o][i];
            } else {
                bricks1[i] = wd[o][i];
            }
        }
    }
    for (int i = 0; i < 4; i++) {
        *s8(700u + (uint32_t)i) = (int8_t)(i * 9 - 20);
    }
    for (int c = 0; c < 3; c++) {
        scale_record(c % 2 == 0 ? 512u + 10u * (uint32_t)(c / 2) : 544u, 10 * c, 1u << 30, 31);
    }
    c0(0x123, 1);
    ifm(S8, 700, 2, 1, 2, 1, 0);
    ofm(S8 | NATURAL, 760, 2, 1, 3, 1, 0);
    kernel(1, 1, 1, 0);
    c0(0x117, 7);
    weights_at(0, bricks, 256, 0x020);
    weights_at(256, bricks1, 256, 0x090);
    c0(0x129, 0);
    c1(0x022, 0, 512);
    c1(0x023, 0, 32);
    c1(0x092, 0, 544);
    c1(0x093, 0, 16);
    c0(0x002, 0);
    CHECK(run() == 0);
    bad = 0;
    for (int ox = 0; ox < 2; ox++) {
        for (int o = 0; o < 3; o++) {
            int64_t v = 10 * o;
            for (int i = 0; i < 2; i++) {
                v += (int64_t)*s8((uint32_t)(700 + ox * 2 + i)) * wd[o][i];
            }
            bad += *s8((uint32_t)(760 + ox * 3 + o)) != clampi(floor_shift(v + 1, 1), -128, 127);
        }
    }
    CHECK(bad == 0);
}

int main(void)
{
    ptec_npu_hw hw;
    CHECK(ptec_npu_hw_from_name("ethos-u55-128", &hw) == 0);
    ptec_npu_model_init(&model, &hw, NULL, 0);
    test_pools();
    test_elementwise();
    test_layouts_and_lut();
    test_hostile();
    test_conv();
    return test_summary("test_npu_ops", 59);
}
