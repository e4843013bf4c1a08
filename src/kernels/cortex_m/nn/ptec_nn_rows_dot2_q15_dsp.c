/* DSP kernel of the matrix-multiply convolution: two widened columns
 * (ptec_nn_widen2_q15_dsp) against `rows` filter rows, two rows at a time.
 * Each weight word is split once by SXTB16 into two int16 pairs that serve
 * both columns, so four weight bytes cost one load and two SXTB16 and feed
 * four SMLAD (eight multiply-adds). SMLAD's sum wraps modulo 2^32, as the
 * reference's accumulator does.
 *
 * The block loop is written in assembly: its 14 live values (four
 * accumulators, the four pair words of a block, which one LDM brings, the
 * weight word and its even half, three pointers and the count) are every
 * register the core has, and compiled C spills some of them. Four blocks
 * per iteration.
 *
 * When every channel's pair allows it (stage->fold_offset: the short
 * requantization of ptec_nn_dsp.h with the output offset folded in), the
 * output offset and bounds are int8 values (always, from the wrappers) and
 * there are at least two rows, all row pairs run in one assembly function
 * (rows2_asm); otherwise each output takes ptec_nn_requantize_dsp, in C.
 * A C copy of the short form beside the assembly would not fit the i.MX93
 * M33's code TCM; the layers it would serve (a shift below -24, a scale
 * under 2^-25) are rare. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_DSP)
#include "ptec_nn_dsp.h"
#include "ptec_nn_math.h"

/* One block: four pair words against rows w0 and w1. */
#define BLOCK                                                                                                      \
    "ldm %[xp]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t"                                                             \
    "ldr %[wv], [%[p0]], #4\n\t"                                                                                  \
    "sxtb16 %[we], %[wv]\n\t"                                                                                     \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                                             \
    "smlad %[a00], %[x0e], %[we], %[a00]\n\t"                                                                     \
    "smlad %[a10], %[x1e], %[we], %[a10]\n\t"                                                                     \
    "smlad %[a00], %[x0o], %[wv], %[a00]\n\t"                                                                     \
    "smlad %[a10], %[x1o], %[wv], %[a10]\n\t"                                                                     \
    "ldr %[wv], [%[p1]], #4\n\t"                                                                                  \
    "sxtb16 %[we], %[wv]\n\t"                                                                                     \
    "sxtb16 %[wv], %[wv], ror #8\n\t"                                                                             \
    "smlad %[a01], %[x0e], %[we], %[a01]\n\t"                                                                     \
    "smlad %[a11], %[x1e], %[we], %[a11]\n\t"                                                                     \
    "smlad %[a01], %[x0o], %[wv], %[a01]\n\t"                                                                     \
    "smlad %[a11], %[x1o], %[wv], %[a11]\n\t"

/* acc[c + 2 * r] = sum over the k values of column c times row r. */
static inline __attribute__((always_inline)) void dot2x2(const uint32_t *pair, const int8_t *w0, const int8_t *w1,
                                                         int32_t k, int32_t acc[4])
{
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0; /* a<column><row> */
    const int32_t blocks = k >> 2;
    int32_t n = blocks >> 2;
    /* The LDM wants its registers in ascending order. */
    register uint32_t x0e __asm__("r0");
    register uint32_t x0o __asm__("r1");
    register uint32_t x1e __asm__("r2");
    register uint32_t x1o __asm__("r3");
    uint32_t wv, we;
    const uint32_t *xp = pair;
    const int8_t *p0 = w0, *p1 = w1;
    if (n > 0) {
        __asm__ volatile("1:\n\t" BLOCK BLOCK BLOCK BLOCK "subs %[n], %[n], #1\n\t"
                         "bne 1b\n\t"
                         : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [xp] "+r"(xp),
                           [p0] "+r"(p0), [p1] "+r"(p1), [n] "+r"(n), [x0e] "=&r"(x0e), [x0o] "=&r"(x0o),
                           [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [wv] "=&r"(wv), [we] "=&r"(we)
                         :
                         : "memory", "cc");
    }
    n = blocks & 3;
    if (n > 0) {
        __asm__ volatile("2:\n\t" BLOCK "subs %[n], %[n], #1\n\t"
                         "bne 2b\n\t"
                         : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [xp] "+r"(xp),
                           [p0] "+r"(p0), [p1] "+r"(p1), [n] "+r"(n), [x0e] "=&r"(x0e), [x0o] "=&r"(x0o),
                           [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [wv] "=&r"(wv), [we] "=&r"(we)
                         :
                         : "memory", "cc");
    }
    /* The last k % 4 values: one pair word each, column 0 low, column 1 high. */
    for (int32_t t = 0; t < (k & 3); ++t) {
        const int32_t x = (int32_t)xp[t];
        const int32_t v0 = p0[t], v1 = p1[t];
        a00 = __smlabb(x, v0, a00);
        a10 = __smlatb(x, v0, a10);
        a01 = __smlabb(x, v1, a01);
        a11 = __smlatb(x, v1, a11);
    }
    acc[0] = a00;
    acc[1] = a10;
    acc[2] = a01;
    acc[3] = a11;
}

/* Any pairs, any row count. */
static void __attribute__((noinline)) rows_general(const uint32_t *pair, const int8_t *w, int32_t k, int32_t rows,
                                                   const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    /* Locals, not stage->...: every int8 store could alias the struct. */
    const int32_t *base = stage->base;
    const int32_t *multipliers = stage->multipliers;
    const int32_t *shifts = stage->shifts;
    const int32_t offset = stage->output_offset;
    const int32_t lo = stage->activation.min, hi = stage->activation.max;
    for (int32_t o = 0; o < rows; o += 2) {
        const int two_rows = rows - o >= 2;
        const int8_t *w0 = w + (size_t)o * (size_t)k;
        const int8_t *w1 = two_rows ? w0 + k : w0; /* a lone last row is computed twice */
        int32_t acc[4];
        dot2x2(pair, w0, w1, k, acc);
        const ptec_nn_requant_dsp r0 = ptec_nn_requant_dsp_make(multipliers[o], shifts[o]);
        y0[o] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(ptec_nn_wrap_add(acc[0], base[o]), &r0), offset, lo,
                                         hi);
        if (y1 != NULL) {
            y1[o] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(ptec_nn_wrap_add(acc[1], base[o]), &r0), offset,
                                             lo, hi);
        }
        if (two_rows) {
            const ptec_nn_requant_dsp r1 = ptec_nn_requant_dsp_make(multipliers[o + 1], shifts[o + 1]);
            y0[o + 1] = ptec_nn_output_stage_dsp(ptec_nn_requantize_dsp(ptec_nn_wrap_add(acc[2], base[o + 1]), &r1),
                                                 offset, lo, hi);
            if (y1 != NULL) {
                y1[o + 1] = ptec_nn_output_stage_dsp(
                    ptec_nn_requantize_dsp(ptec_nn_wrap_add(acc[3], base[o + 1]), &r1), offset, lo, hi);
            }
        }
    }
}

/* The folded form, one assembly function for all row pairs of a pixel
 * pair: the fast requantization with the output offset in its rounding
 * constant (ptec_nn_requant_fold_ok), four outputs per row pair and no C
 * between them, so the loop state lives in one stack frame that LDM/STRD
 * move in few instructions instead of the compiler's spills around the
 * dot loop (DS-CNN's pointwise layers spent about 100 instructions per
 * row pair outside the 248 of the loop; this takes about 60).
 *
 * rows2_job is that frame's first 64 bytes (offsets in the comments, the
 * assembly's); the function copies it and adds four branch targets: where
 * a row pair starts its dot product (the 4-block loop, or the rest when k
 * < 16), where it goes after the 4-block loop (single blocks, the k % 4
 * values, or the requantization), after the single blocks, and which of
 * the two output stages runs. Each is one LDR PC instead of a test and a
 * branch per row pair. Registers in the dot product: r0-r3 the pair words
 * (LDM), r4-r7 the sums a<column><row> in the order a00, a01, a10, a11,
 * r8/r9 a weight word and its even half, r10 the pair pointer, r11 and
 * r12 the two rows, lr the count. The sums start from the channel bases.
 *
 * Output stages: the whole int8 range is SSAT alone, one STRB per output;
 * otherwise the four SSAT results, packed as two halfwords (column 0's two
 * rows, then column 1's) in one word, take a four-byte max with the low
 * bound and min with the high one (SSUB8 + SEL each; both bounds are in
 * [-128, 127], so after SSAT this is the reference's clamp), then one STRH
 * per column. Column 1's outputs are stored first: without a second column
 * it points at column 0's, whose stores then win. The outputs have no
 * alignment (these cores store unaligned halfwords in one STRH); the
 * bases, multipliers and shifts are int32 arrays (the runtime loads
 * constants aligned to their dtype), which LDRD's word alignment needs. */
typedef struct rows2_job {
    const int32_t *base;        /* 0, advanced by 2 per row pair */
    const uint32_t *pair;       /* 4 */
    const int8_t *w0;           /* 8, the pair's first row */
    const int8_t *w1;           /* 12, its second row */
    int32_t quads;              /* 16, (k / 4) / 4 */
    const int32_t *multipliers; /* 20 */
    const int32_t *shifts;      /* 24 */
    int8_t *y0;                 /* 28 */
    int8_t *y1;                 /* 32, y0 without a second column */
    int32_t offset2;            /* 36, 2 * output_offset + 1 */
    uint32_t lo4, hi4;          /* 40, 44: the bounds in each byte */
    const int8_t *y0_end;       /* 48, y0 after the last row pair */
    int32_t singles;            /* 52, (k / 4) % 4 */
    int32_t tail;               /* 56, k % 4 */
    int32_t full_range;         /* 60 */
} rows2_job;

_Static_assert(sizeof(void *) != 4 || sizeof(rows2_job) == 64, "rows2_job is the assembly's frame");

#define DOT_BLOCK                                                                                                  \
    "ldm r10!, {r0, r1, r2, r3}\n\t"                                                                               \
    "ldr r8, [r11], #4\n\t"                                                                                        \
    "sxtb16 r9, r8\n\t"                                                                                            \
    "sxtb16 r8, r8, ror #8\n\t"                                                                                    \
    "smlad r4, r0, r9, r4\n\t"                                                                                     \
    "smlad r6, r2, r9, r6\n\t"                                                                                     \
    "smlad r4, r1, r8, r4\n\t"                                                                                     \
    "smlad r6, r3, r8, r6\n\t"                                                                                     \
    "ldr r8, [r12], #4\n\t"                                                                                        \
    "sxtb16 r9, r8\n\t"                                                                                            \
    "sxtb16 r8, r8, ror #8\n\t"                                                                                    \
    "smlad r5, r0, r9, r5\n\t"                                                                                     \
    "smlad r7, r2, r9, r7\n\t"                                                                                     \
    "smlad r5, r1, r8, r5\n\t"                                                                                     \
    "smlad r7, r3, r8, r7\n\t"

/* One output: sum in `acc` (replaced by the SSAT result), multiplier m,
 * starting high word h, shift s; r10-r12 scratch, r11 = 0x40000000. */
#define REQUANT(acc, m, h, s)                                                                                      \
    "eor r10, " acc ", " m "\n\t"                                                                                  \
    "add r12, " h ", r10, asr #31\n\t"                                                                             \
    "bfi r10, r11, #0, #31\n\t"                                                                                    \
    "smlal r10, r12, " acc ", " m "\n\t"                                                                           \
    "asr " acc ", r12, " s "\n\t"                                                                                  \
    "ssat " acc ", #8, " acc "\n\t"

static void __attribute__((naked, noinline)) rows2_asm(const rows2_job *job __attribute__((unused)))
{
    __asm__(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #80\n\t"
        "ldmia r0!, {r1-r8}\n\t"
        "stmia sp, {r1-r8}\n\t"
        "ldmia r0, {r1-r8}\n\t"
        "add r9, sp, #32\n\t"
        "stmia r9, {r1-r8}\n\t"
        /* The branch targets, Thumb bit set: 64 entry, 68 after the 4-block
         * loop, 72 after the single blocks, 76 the output stage. */
        "ldr r1, [sp, #56]\n\t"
        "adr.w r4, .Lrows2_requant\n\t"
        "cbz r1, 1f\n\t"
        "adr.w r4, .Lrows2_tail\n\t"
        "1: orr r4, r4, #1\n\t"
        "str r4, [sp, #72]\n\t"
        "ldr r1, [sp, #52]\n\t"
        "cbz r1, 2f\n\t"
        "adr.w r4, .Lrows2_singles\n\t"
        "orr r4, r4, #1\n\t"
        "2: str r4, [sp, #68]\n\t"
        "ldr r1, [sp, #16]\n\t"
        "cbz r1, 3f\n\t"
        "adr.w r4, .Lrows2_quads\n\t"
        "orr r4, r4, #1\n\t"
        "3: str r4, [sp, #64]\n\t"
        "ldr r1, [sp, #60]\n\t"
        "adr.w r4, .Lrows2_clamp\n\t"
        "cbz r1, 4f\n\t"
        "adr.w r4, .Lrows2_full\n\t"
        "4: orr r4, r4, #1\n\t"
        "str r4, [sp, #76]\n\t"
        /* One row pair: bases, pointers and count, then its dot product. */
        ".Lrows2_pair:\n\t"
        "ldm sp, {r8, r10, r11, r12, lr}\n\t"
        "ldrd r4, r5, [r8], #8\n\t"
        "str r8, [sp]\n\t"
        "mov r6, r4\n\t"
        "mov r7, r5\n\t"
        "ldr pc, [sp, #64]\n\t"
        ".Lrows2_quads:\n\t" DOT_BLOCK DOT_BLOCK DOT_BLOCK DOT_BLOCK
        "subs lr, lr, #1\n\t"
        "bne .Lrows2_quads\n\t"
        "ldr pc, [sp, #68]\n\t"
        ".Lrows2_singles:\n\t"
        "ldr lr, [sp, #52]\n\t"
        ".Lrows2_single:\n\t" DOT_BLOCK
        "subs lr, lr, #1\n\t"
        "bne .Lrows2_single\n\t"
        "ldr pc, [sp, #72]\n\t"
        /* The last k % 4 values: one pair word each, column 0 low. */
        ".Lrows2_tail:\n\t"
        "ldr lr, [sp, #56]\n\t"
        "5: ldr r0, [r10], #4\n\t"
        "ldrsb r1, [r11], #1\n\t"
        "ldrsb r2, [r12], #1\n\t"
        "smlabb r4, r0, r1, r4\n\t"
        "smlatb r6, r0, r1, r6\n\t"
        "smlabb r5, r0, r2, r5\n\t"
        "smlatb r7, r0, r2, r7\n\t"
        "subs lr, lr, #1\n\t"
        "bne 5b\n\t"
        /* r11 ends at the second row, r12 at the next pair's first, k
         * bytes apart: the next pair's rows. Then the two channels'
         * constants: s = -shift - 1, h = (2 * offset + 1) * 2^(s-1). */
        ".Lrows2_requant:\n\t"
        "sub r0, r12, r11\n\t"
        "add r0, r12, r0\n\t"
        "strd r12, r0, [sp, #8]\n\t"
        "ldrd r8, r9, [sp, #20]\n\t"
        "ldrd r0, r1, [r8], #8\n\t"
        "ldrd r2, r3, [r9], #8\n\t"
        "strd r8, r9, [sp, #20]\n\t"
        "ldr r10, [sp, #36]\n\t"
        "mov r11, #0x40000000\n\t"
        "mvn r2, r2\n\t"
        "mvn r3, r3\n\t"
        "lsl r8, r10, r2\n\t"
        "asr r8, r8, #1\n\t"
        "lsl r9, r10, r3\n\t"
        "asr r9, r9, #1\n\t"
        REQUANT("r4", "r0", "r8", "r2") REQUANT("r6", "r0", "r8", "r2")
        REQUANT("r5", "r1", "r9", "r3") REQUANT("r7", "r1", "r9", "r3")
        "ldr pc, [sp, #76]\n\t"
        ".Lrows2_full:\n\t"
        "ldrd r0, r1, [sp, #28]\n\t"
        "strb r7, [r1, #1]\n\t"
        "strb r6, [r1], #2\n\t"
        "strb r5, [r0, #1]\n\t"
        "strb r4, [r0], #2\n\t"
        "strd r0, r1, [sp, #28]\n\t"
        "ldr r2, [sp, #48]\n\t"
        "cmp r0, r2\n\t"
        "bne .Lrows2_pair\n\t"
        "b .Lrows2_done\n\t"
        ".Lrows2_clamp:\n\t"
        "bfi r4, r5, #8, #8\n\t"
        "bfi r6, r7, #8, #8\n\t"
        "pkhbt r4, r4, r6, lsl #16\n\t"
        "ldrd r2, r3, [sp, #40]\n\t"
        "ssub8 r5, r4, r2\n\t"
        "sel r4, r4, r2\n\t"
        "ssub8 r5, r4, r3\n\t"
        "sel r4, r3, r4\n\t"
        "ldrd r0, r1, [sp, #28]\n\t"
        "lsr r5, r4, #16\n\t"
        "strh r5, [r1], #2\n\t"
        "strh r4, [r0], #2\n\t"
        "strd r0, r1, [sp, #28]\n\t"
        "ldr r2, [sp, #48]\n\t"
        "cmp r0, r2\n\t"
        "bne .Lrows2_pair\n\t"
        ".Lrows2_done:\n\t"
        "add sp, sp, #80\n\t"
        "pop {r4-r11, pc}\n\t");
}

static int in_int8(int32_t v)
{
    return v >= -128 && v <= 127;
}

/* rows >= 2, stage->fold_offset, offset and bounds in [-128, 127]. An odd
 * last row is computed as the pair (rows - 2, rows - 1), row rows - 2 being
 * stored twice with the same value. */
static void __attribute__((noinline)) rows_folded(const uint32_t *pair, const int8_t *w, int32_t k, int32_t rows,
                                                  const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    const int32_t lo = stage->activation.min, hi = stage->activation.max;
    int8_t *const y1s = y1 != NULL ? y1 : y0;
    rows2_job job;
    job.base = stage->base;
    job.pair = pair;
    job.w0 = w;
    job.w1 = w + k;
    job.quads = (k >> 2) >> 2;
    job.multipliers = stage->multipliers;
    job.shifts = stage->shifts;
    job.y0 = y0;
    job.y1 = y1s;
    job.offset2 = 2 * stage->output_offset + 1;
    job.lo4 = (uint32_t)(uint8_t)lo * 0x01010101u;
    job.hi4 = (uint32_t)(uint8_t)hi * 0x01010101u;
    job.y0_end = y0 + (rows & ~1);
    job.singles = (k >> 2) & 3;
    job.tail = k & 3;
    job.full_range = lo == -128 && hi == 127;
    rows2_asm(&job);
    if (rows & 1) {
        const int32_t o = rows - 2;
        job.base = stage->base + o;
        job.w0 = w + (size_t)o * (size_t)k;
        job.w1 = job.w0 + k;
        job.multipliers = stage->multipliers + o;
        job.shifts = stage->shifts + o;
        job.y0 = y0 + o;
        job.y1 = y1s + o;
        job.y0_end = y0 + o + 2;
        rows2_asm(&job);
    }
}

void ptec_nn_rows_dot2_q15_dsp(const uint32_t *pair, const int8_t *w, int32_t k, int32_t rows,
                               const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    if (stage->fold_offset && rows >= 2 && in_int8(stage->output_offset) && in_int8(stage->activation.min) &&
        in_int8(stage->activation.max)) {
        rows_folded(pair, w, k, rows, stage, y0, y1);
    } else {
        rows_general(pair, w, k, rows, stage, y0, y1);
    }
}

#else
typedef int ptec_nn_rows_dot2_dsp_unused; /* a translation unit must not be empty */
#endif
