/* Helium kernel of the matrix-multiply convolution for two pixels: two
 * columns of k int8 values against `rows` filter rows, four rows at a
 * time, as two passes of a 2x2 tile: each 16-byte column block is loaded
 * once per pass for two VMLADAVA, each weight block once for both
 * columns. A k that is not a multiple of 16 ends each pass with one
 * predicated block. The last rows % 4 rows go through
 * ptec_nn_rows_dot_s8_mve, once per pixel.
 *
 * A four-row group is one assembly block (GCC 12 reloads its pointers
 * and counts from the stack around each loop and moves the sums through
 * memory into vectors, 80 instructions of a group's 170 for k = 64): the
 * first pass takes rows 0 and 2, the second rows 1 and 3, so that each
 * pass fills the lanes (0, 2) or (1, 3) of both pixels' vectors with
 * one VMOV of two core registers each. The sums start from the
 * channels' bases (bias and input offset share, ptec_nn_variants.h), so
 * no vector add is left for them.
 *
 * The four sums of a pixel are requantized as one vector, the
 * per-channel loads shared by both pixels; when every channel has a
 * right shift of at least 1 and no multiplier is -2^31
 * (stage->fast_requant, set by ptec_nn_conv_gemm_s8), in four
 * instructions: ptec_nn_requantize_short_mve. */
#include "ptec_nn_variants.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"

/* One pass: sums a<pixel><row> over the nb full blocks, then (TAIL) one
 * block of t < 16 bytes, the inactive lanes loading 0 and reading nothing.
 * The pointers are left after the full blocks. */
#define PASS(loop, done, tail)                                                                                     \
    "wls lr, %[nb], " done "f\n"                                                                                  \
    loop ":\n\t"                                                                                                   \
    "vldrb.8 %q[u], [%[xa]], #16\n\t"                                                                             \
    "vldrb.8 %q[v], [%[xb]], #16\n\t"                                                                             \
    "vldrb.8 %q[r], [%[p0]], #16\n\t"                                                                             \
    "vmladava.s8 %[a00], %q[u], %q[r]\n\t"                                                                        \
    "vmladava.s8 %[a10], %q[v], %q[r]\n\t"                                                                        \
    "vldrb.8 %q[r], [%[p1]], #16\n\t"                                                                             \
    "vmladava.s8 %[a01], %q[u], %q[r]\n\t"                                                                        \
    "vmladava.s8 %[a11], %q[v], %q[r]\n\t"                                                                        \
    "le lr, " loop "b\n" done ":\n\t" tail

#define TAIL_BLOCK                                                                                                 \
    "vctp.8 %[t]\n\t"                                                                                              \
    "vpstttt\n\t"                                                                                                  \
    "vldrbt.8 %q[u], [%[xa]]\n\t"                                                                                  \
    "vldrbt.8 %q[v], [%[xb]]\n\t"                                                                                  \
    "vldrbt.8 %q[r], [%[p0]]\n\t"                                                                                  \
    "vldrbt.8 %q[s], [%[p1]]\n\t"                                                                                  \
    "vmladava.s8 %[a00], %q[u], %q[r]\n\t"                                                                        \
    "vmladava.s8 %[a10], %q[v], %q[r]\n\t"                                                                        \
    "vmladava.s8 %[a01], %q[u], %q[s]\n\t"                                                                        \
    "vmladava.s8 %[a11], %q[v], %q[s]\n\t"

/* Sums of rows 0 and 2 (p0 = w, p1 = w + 2k) go to lanes 0 and 2, then
 * the pointers step by t to rows 1 and 3 (w + 16 nb + t = w + k), the
 * columns back by 16 nb, for lanes 1 and 3. */
#define GROUP(tail)                                                                                                \
    "ldr %[a00], [%[base]]\n\t"                                                                                    \
    "ldr %[a01], [%[base], #8]\n\t"                                                                                \
    "mov %[a10], %[a00]\n\t"                                                                                       \
    "mov %[a11], %[a01]\n\t" PASS("1", "2", tail)                                                                  \
    "vmov %q[y0][2], %q[y0][0], %[a00], %[a01]\n\t"                                                               \
    "vmov %q[y1][2], %q[y1][0], %[a10], %[a11]\n\t"                                                               \
    "add %[p0], %[p0], %[t]\n\t"                                                                                   \
    "add %[p1], %[p1], %[t]\n\t"                                                                                   \
    "sub %[xa], %[xa], %[nb], lsl #4\n\t"                                                                          \
    "sub %[xb], %[xb], %[nb], lsl #4\n\t"                                                                          \
    "ldr %[a00], [%[base], #4]\n\t"                                                                                \
    "ldr %[a01], [%[base], #12]\n\t"                                                                               \
    "mov %[a10], %[a00]\n\t"                                                                                       \
    "mov %[a11], %[a01]\n\t" PASS("3", "4", tail)                                                                  \
    "vmov %q[y0][3], %q[y0][1], %[a00], %[a01]\n\t"                                                               \
    "vmov %q[y1][3], %q[y1][1], %[a10], %[a11]\n\t"

#define GROUP_OPERANDS                                                                                             \
    : [y0] "=&w"(*y0), [y1] "=&w"(*y1), [u] "=&w"(u), [v] "=&w"(v), [r] "=&w"(r), [s] "=&w"(s),                  \
      [a00] "=&Te"(a00), [a01] "=&Te"(a01), [a10] "=&Te"(a10), [a11] "=&Te"(a11), [xa] "+r"(xa), [xb] "+r"(xb), \
      [p0] "+r"(p0), [p1] "+r"(p1)                                                                                 \
    : [nb] "r"(nb), [t] "r"(t), [base] "r"(base)                                                                   \
    : "memory", "lr"

/* The sums of four rows (w, stride k) and two columns plus base[0..3]:
 * *y0 for column x0, *y1 for x1, lane i for row i. */
static inline __attribute__((always_inline)) void group(const int8_t *x0, const int8_t *x1, const int8_t *w,
                                                        int32_t k, const int32_t *base, int tail, int32x4_t *y0,
                                                        int32x4_t *y1)
{
    const int32_t nb = k >> 4, t = k & 15;
    const int8_t *xa = x0, *xb = x1, *p0 = w, *p1 = w + 2 * k;
    int32_t a00, a01, a10, a11;
    int8x16_t u, v, r, s;
    if (tail) {
        __asm__(GROUP(TAIL_BLOCK) GROUP_OPERANDS);
    } else {
        __asm__(GROUP("") GROUP_OPERANDS);
    }
}

enum { REQUANT_SHORT, REQUANT_GENERAL, REQUANT_EXACT };

static inline __attribute__((always_inline)) void rows4(const int8_t *x0, const int8_t *x1, const int8_t *w,
                                                        int32_t k, int32_t groups, const ptec_nn_out_stage *stage,
                                                        int8_t *y0, int8_t *y1, int tail, int requant)
{
    /* Locals, not stage->...: every byte store could alias the struct. */
    const int32_t *base = stage->base;
    const int32_t *multipliers = stage->multipliers;
    const int32_t *shifts = stage->shifts;
    const int32_t offset = stage->output_offset;
    const int32x4_t lo = vdupq_n_s32(stage->activation.min), hi = vdupq_n_s32(stage->activation.max);
    /* Without a second pixel, its results go to y0 first and are
     * overwritten by pixel 0's. */
    int8_t *y1s = y1 != NULL ? y1 : y0;
    const size_t step = 4 * (size_t)k;
    for (int32_t g = 0; g < groups; ++g, w += step, base += 4, multipliers += 4, shifts += 4, y0 += 4, y1s += 4) {
        int32x4_t a, b;
        group(x0, x1, w, k, base, tail, &a, &b);
        const int32x4_t multiplier = vld1q_s32(multipliers);
        const int32x4_t shift = vld1q_s32(shifts);
        if (requant == REQUANT_SHORT) {
            a = ptec_nn_requantize_short_mve(a, multiplier, shift);
            b = ptec_nn_requantize_short_mve(b, multiplier, shift);
            /* |a| <= 2^30 after a right shift: the plain add cannot wrap. */
            vstrbq_s32(y1s, vminq_s32(vmaxq_s32(vaddq_n_s32(b, offset), lo), hi));
            vstrbq_s32(y0, vminq_s32(vmaxq_s32(vaddq_n_s32(a, offset), lo), hi));
        } else {
            if (requant == REQUANT_EXACT) {
                a = ptec_nn_requantize_any_mve(a, multiplier, shift);
                b = ptec_nn_requantize_any_mve(b, multiplier, shift);
            } else {
                a = ptec_nn_requantize_mve(a, multiplier, shift);
                b = ptec_nn_requantize_mve(b, multiplier, shift);
            }
            vstrbq_s32(y1s, vminq_s32(vmaxq_s32(vqaddq_n_s32(b, offset), lo), hi));
            vstrbq_s32(y0, vminq_s32(vmaxq_s32(vqaddq_n_s32(a, offset), lo), hi));
        }
    }
}

static void __attribute__((noinline)) rows4_short(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t k,
                                                  int32_t groups, const ptec_nn_out_stage *stage, int8_t *y0,
                                                  int8_t *y1)
{
    rows4(x0, x1, w, k, groups, stage, y0, y1, 0, REQUANT_SHORT);
}

static void __attribute__((noinline)) rows4_short_tail(const int8_t *x0, const int8_t *x1, const int8_t *w,
                                                       int32_t k, int32_t groups, const ptec_nn_out_stage *stage,
                                                       int8_t *y0, int8_t *y1)
{
    rows4(x0, x1, w, k, groups, stage, y0, y1, 1, REQUANT_SHORT);
}

static void __attribute__((noinline)) rows4_general(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t k,
                                                    int32_t groups, const ptec_nn_out_stage *stage, int8_t *y0,
                                                    int8_t *y1)
{
    if (stage->any_min_multiplier) {
        rows4(x0, x1, w, k, groups, stage, y0, y1, 1, REQUANT_EXACT);
    } else {
        rows4(x0, x1, w, k, groups, stage, y0, y1, 1, REQUANT_GENERAL);
    }
}

void ptec_nn_rows_dot2_s8_mve(const int8_t *x0, const int8_t *x1, const int8_t *w, int32_t k, int32_t rows,
                              const ptec_nn_out_stage *stage, int8_t *y0, int8_t *y1)
{
    const int32_t groups = rows >> 2;
    if (groups > 0) {
        if (!stage->fast_requant) {
            rows4_general(x0, x1, w, k, groups, stage, y0, y1);
        } else if ((k & 15) != 0) {
            rows4_short_tail(x0, x1, w, k, groups, stage, y0, y1);
        } else {
            rows4_short(x0, x1, w, k, groups, stage, y0, y1);
        }
    }
    const int32_t o = groups << 2;
    if (o < rows) {
        ptec_nn_out_stage rest = *stage;
        rest.base += o;
        rest.multipliers += o;
        rest.shifts += o;
        w += (size_t)o * (size_t)k;
        ptec_nn_rows_dot_s8_mve(x0, w, k, rows - o, &rest, y0 + o);
        if (y1 != NULL) {
            ptec_nn_rows_dot_s8_mve(x1, w, k, rows - o, &rest, y1 + o);
        }
    }
}

#else
typedef int ptec_nn_rows_dot2_mve_unused; /* a translation unit must not be empty */
#endif
