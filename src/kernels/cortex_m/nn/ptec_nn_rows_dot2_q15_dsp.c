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
 * When every channel's pair allows it (stage->fast_requant) and there are
 * at least two rows, the outputs take the short requantization of
 * ptec_nn_dsp.h and, for an activation over the whole int8 range, one SSAT;
 * an odd last row is then computed as the pair (rows - 2, rows - 1), row
 * rows - 2 being stored twice with the same value. Otherwise each output
 * takes ptec_nn_requantize_dsp. */
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

/* The fast form: rows >= 2, every pair with shift <= -2 and a multiplier
 * other than -2^31. */
static inline __attribute__((always_inline)) void rows_fast(const uint32_t *pair, const int8_t *w, int32_t k,
                                                            int32_t rows, const ptec_nn_out_stage *stage,
                                                            int8_t *y0, int8_t *y1, int full_range)
{
    const int32_t *base = stage->base;
    const int32_t *multipliers = stage->multipliers;
    const int32_t *shifts = stage->shifts;
    const int32_t offset = stage->output_offset;
    const int32_t lo = stage->activation.min, hi = stage->activation.max;
    /* Without a second column, its results (equal or not) go to y0 first
     * and are overwritten by column 0's. */
    int8_t *const y1s = y1 != NULL ? y1 : y0;
    int32_t o = 0;
    for (;;) {
        const int8_t *w0 = w + (size_t)o * (size_t)k;
        int32_t acc[4];
        dot2x2(pair, w0, w0 + k, k, acc);
        const ptec_nn_requant_fast r0 = ptec_nn_requant_fast_make(multipliers[o], shifts[o]);
        const ptec_nn_requant_fast r1 = ptec_nn_requant_fast_make(multipliers[o + 1], shifts[o + 1]);
        const int32_t b0 = base[o], b1 = base[o + 1];
        y1s[o] = ptec_nn_output_small(ptec_nn_requantize_fast(ptec_nn_wrap_add(acc[1], b0), r0.multiplier, r0.high,
                                                               r0.shift),
                                      offset, lo, hi, full_range);
        y1s[o + 1] = ptec_nn_output_small(ptec_nn_requantize_fast(ptec_nn_wrap_add(acc[3], b1), r1.multiplier,
                                                                   r1.high, r1.shift),
                                          offset, lo, hi, full_range);
        y0[o] = ptec_nn_output_small(ptec_nn_requantize_fast(ptec_nn_wrap_add(acc[0], b0), r0.multiplier, r0.high,
                                                              r0.shift),
                                     offset, lo, hi, full_range);
        y0[o + 1] = ptec_nn_output_small(ptec_nn_requantize_fast(ptec_nn_wrap_add(acc[2], b1), r1.multiplier,
                                                                  r1.high, r1.shift),
                                         offset, lo, hi, full_range);
        o += 2;
        if (o >= rows) {
            break;
        }
        if (o > rows - 2) {
            o = rows - 2; /* an odd last row, with the one before it */
        }
    }
}

static void __attribute__((noinline)) rows_fast_full(const uint32_t *pair, const int8_t *w, int32_t k, int32_t rows,
                                                     const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    rows_fast(pair, w, k, rows, stage, y0, y1, 1);
}

static void __attribute__((noinline)) rows_fast_clamp(const uint32_t *pair, const int8_t *w, int32_t k, int32_t rows,
                                                      const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    rows_fast(pair, w, k, rows, stage, y0, y1, 0);
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

void ptec_nn_rows_dot2_q15_dsp(const uint32_t *pair, const int8_t *w, int32_t k, int32_t rows,
                               const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    if (stage->fast_requant && rows >= 2) {
        if (stage->activation.min == -128 && stage->activation.max == 127) {
            rows_fast_full(pair, w, k, rows, stage, y0, y1);
        } else {
            rows_fast_clamp(pair, w, k, rows, stage, y0, y1);
        }
    } else {
        rows_general(pair, w, k, rows, stage, y0, y1);
    }
}

#else
typedef int ptec_nn_rows_dot2_dsp_unused; /* a translation unit must not be empty */
#endif
