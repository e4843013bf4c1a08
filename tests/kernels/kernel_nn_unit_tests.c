/* Hand-checked cases for the cortex_m math layer: small inputs whose
 * results are worked out in the comments, one or more per operator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptec_nn.h"
#include "ptec_nn_lstm_s16.h"
#include "ptec_nn_math.h"

static int failures;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++failures;                                                    \
        }                                                                  \
    } while (0)

#define CHECK_BYTES(got, expected, n) CHECK(memcmp((got), (expected), (n)) == 0)

static const ptec_nn_buffer no_scratch = {NULL, 0};
static uint32_t scratch_words[64];
static const ptec_nn_buffer conv_scratch = {scratch_words, sizeof scratch_words};
static const int32_t unit_multiplier[4] = {1 << 30, 1 << 30, 1 << 30, 1 << 30};
static const int32_t unit_shift[4] = {1, 1, 1, 1}; /* 2^30 * 2^(1-31) = 1.0 */

static void test_primitives(void)
{
    /* spec §1.6 examples */
    CHECK(ptec_nn_requantize(3, 1 << 30, 0) == 2);   /* 1.5 rounds up */
    CHECK(ptec_nn_requantize(-3, 1 << 30, 0) == -1); /* -1.5 rounds up */
    CHECK(ptec_nn_round_shift(-6, 2) == -2);
    CHECK(ptec_nn_round_shift(-5, 2) == -1);
    CHECK(ptec_nn_round_shift(6, 2) == 2);
    CHECK(ptec_nn_round_shift(-10, 2) == -3); /* -2.5 away from zero */
    /* 100 * 0.5 * 2^-1: h = floor(101/2) = 50, then 50/2 = 25 */
    CHECK(ptec_nn_requantize(100, 1 << 30, -1) == 25);
    /* left shift 31 wraps 1 to INT32_MIN, times 0.5 */
    CHECK(ptec_nn_requantize(1, 1 << 30, 31) == -(1 << 30));
    /* two roundings: 5 * 0.5 = 2.5 -> 3 (h), then 3 / 2 = 1.5 -> 2 */
    CHECK(ptec_nn_requantize(5, 1 << 30, -1) == 2);
    /* negative ties, both roundings: -3 * 0.5 * 0.5: h = floor(-1.5 + 0.5) = -1, then
     * -1 / 2 = -0.5 -> -1 (away from zero); -6 * 0.5 * 0.5: h = -3, -1.5 -> -2 */
    CHECK(ptec_nn_requantize(-3, 1 << 30, -1) == -1);
    CHECK(ptec_nn_requantize(-6, 1 << 30, -1) == -2);
    CHECK(ptec_nn_requantize(-10, 1 << 30, -2) == -1); /* h = -5 (-4.5 up), -5/4 = -1.25 -> -1 */
    CHECK(ptec_nn_round_shift(-1, 1) == -1);           /* -0.5 away from zero */
    CHECK(ptec_nn_round_shift(INT32_MIN, 32) == -1);
    CHECK(ptec_nn_round_shift(INT32_MAX, 33) == 0);
    /* output stage clamps before adding, so huge values do not overflow */
    CHECK(ptec_nn_output_stage(INT32_MAX, 100, -128, 127) == 127);
    CHECK(ptec_nn_output_stage(INT32_MIN, -100, -128, 127) == -128);
    CHECK(ptec_nn_output_stage(20, -5, -128, 127) == 15);

    /* saturating high multiply (§3.15 formula) */
    CHECK(ptec_nn_doubling_high_mult(INT32_MIN, INT32_MIN) == INT32_MAX);
    CHECK(ptec_nn_doubling_high_mult(1 << 30, 1 << 30) == 1 << 29);
    CHECK(ptec_nn_doubling_high_mult(3, 1 << 30) == 2);   /* 1.5 -> 2 */
    CHECK(ptec_nn_doubling_high_mult(-3, 1 << 30) == -1); /* the nudge 1 - 2^30 gives -1 */
    CHECK(ptec_nn_doubling_high_mult(-5, 1 << 30) == -2); /* -2.5 -> -2 */

    /* exp(0) = 1, exp(-1) = 0.367879 * 2^31 = 790015084.4, exp(-1/4),
     * exp(-1/2): the 4th-order polynomial is good to about 3e-7. */
    CHECK(ptec_nn_exp_on_negative(0) == INT32_MAX);
    CHECK(abs(ptec_nn_exp_on_negative(-(1 << 26)) - 790015084) <= 1000);
    CHECK(abs(ptec_nn_exp_on_negative(-(1 << 24)) - 1672461947) <= 1000);
    CHECK(abs(ptec_nn_exp_on_negative(-(1 << 25)) - 1302514674) <= 1000);
    /* 1/(1+0) saturates to 1.0; 1/(1+0.5) = 2/3 * 2^31 = 1431655765 */
    CHECK(ptec_nn_one_over_one_plus_x(0) == INT32_MAX);
    CHECK(abs(ptec_nn_one_over_one_plus_x(1 << 30) - 1431655765) <= 4);
}

static void test_quantize(void)
{
    /* scale 0.5, zp 3: x*2 = 2.5 -> 2 (ties to even) -> 5; 3.5 -> 4 -> 7;
     * -200 + 3 clamps to -128; NaN counts as 0; +inf saturates. */
    const float x[6] = {1.25f, 1.75f, -100.0f, NAN, INFINITY, -0.25f};
    const ptec_nn_quantize_params p = {0.5f, 3, -128, 127};
    int8_t q[6];
    const int8_t expected[6] = {5, 7, -128, 3, 127, 3}; /* -0.5 -> -0 -> 3 */
    CHECK(ptec_nn_quantize_f32_s8(x, q, 6, &p) == PTEC_OK);
    CHECK_BYTES(q, expected, 6);

    int16_t q16[2];
    const float big[2] = {1000.0f, -20000.0f};
    const ptec_nn_quantize_params p16 = {0.5f, 0, -32768, 32767};
    CHECK(ptec_nn_quantize_f32_s16(big, q16, 2, &p16) == PTEC_OK);
    CHECK(q16[0] == 2000 && q16[1] == -32768);

    /* dequantize: (5 - 3) * 0.5 = 1.0, (-128 - 3) * 0.5 = -65.5 */
    const int8_t in[2] = {5, -128};
    float y[2];
    CHECK(ptec_nn_dequantize_s8_f32(in, y, 2, &p) == PTEC_OK);
    CHECK(y[0] == 1.0f && y[1] == -65.5f);
    const int16_t in16[1] = {-32768};
    CHECK(ptec_nn_dequantize_s16_f32(in16, y, 1, &p16) == PTEC_OK);
    CHECK(y[0] == -16384.0f);
}

static void test_add_mul(void)
{
    /* s1 = s2 = s_out: input multipliers 0.5 (2^30, 0), output
     * 2 / 2^20 = 0.5 * 2^-18. (15 - 5) + 20 = 30; the second element
     * clamps at activation max 40: 30 + 20 = 50. */
    const int8_t large[2] = {15, 35};
    const int8_t small[2] = {20, 20};
    ptec_nn_add_params p = {-5, 0, {1 << 30, 0}, {1 << 30, 0}, 20, 0, {1 << 30, -18}, {-128, 40}};
    int8_t y[2];
    CHECK(ptec_nn_add_s8(large, small, 2, 2, y, &p) == PTEC_OK);
    CHECK(y[0] == 30 && y[1] == 40);

    /* channel broadcast: [1,1,2,2] + [2] */
    const int8_t image[4] = {5, 5, 6, 6};
    const int8_t channel[2] = {1, 2};
    p.activation.max = 127;
    int8_t z[4];
    CHECK(ptec_nn_add_s8(image, channel, 4, 2, z, &p) == PTEC_OK);
    const int8_t expected[4] = {1, 2, 2, 3}; /* (x - 5) + c */
    CHECK_BYTES(z, expected, 4);

    /* mul: (4 - 1) * (-6 + 2) = -12, times 0.5: h = floor(-5.5) = -6, plus 10 */
    const int8_t a[1] = {4}, b[1] = {-6};
    const ptec_nn_mul_params m = {-1, 2, 10, {1 << 30, 0}, {-128, 127}};
    CHECK(ptec_nn_mul_s8(a, b, 1, 1, y, &m) == PTEC_OK);
    CHECK(y[0] == 4);
}

static void test_div_lut(void)
{
    /* (10 - 1) / (4 - 2) = 4.5 -> 5 (roundf); zero denominator -> 0 + zp */
    const int8_t num[2] = {10, 10}, den[2] = {4, 2};
    const ptec_nn_div_params p = {1, 2, -3, 1.0f};
    int8_t y[2];
    CHECK(ptec_nn_div_s8(num, den, y, 2, &p) == PTEC_OK);
    CHECK(y[0] == 2 && y[1] == -3);
    const int16_t n16[1] = {30000}, d16[1] = {3};
    int16_t y16[1];
    const ptec_nn_div_params p16 = {0, 0, 0, 2.0f}; /* 10000 * 2 = 20000 */
    CHECK(ptec_nn_div_s16(n16, d16, y16, 1, &p16) == PTEC_OK);
    CHECK(y16[0] == 20000);

    int8_t lut[256];
    for (int i = 0; i < 256; ++i) {
        lut[i] = (int8_t)(127 - i); /* lut[x + 128] = -1 - x */
    }
    const int8_t x[3] = {-128, 0, 127};
    int8_t z[3];
    CHECK(ptec_nn_lut_s8(x, lut, z, 3) == PTEC_OK);
    CHECK(z[0] == 127 && z[1] == -1 && z[2] == -128);
}

static void test_min_max(void)
{
    /* [2,1] against [1,3] broadcasts to [2,3] */
    const int8_t a[2] = {0, 10};
    const int8_t b[3] = {-5, 5, 20};
    const int32_t a_dims[4] = {1, 1, 2, 1}, b_dims[4] = {1, 1, 1, 3}, out_dims[4] = {1, 1, 2, 3};
    int8_t y[6];
    CHECK(ptec_nn_minimum_s8(a, a_dims, b, b_dims, y, out_dims) == PTEC_OK);
    const int8_t expected_min[6] = {-5, 0, 0, -5, 5, 10};
    CHECK_BYTES(y, expected_min, 6);
    CHECK(ptec_nn_maximum_s8(a, a_dims, b, b_dims, y, out_dims) == PTEC_OK);
    const int8_t expected_max[6] = {0, 5, 20, 10, 10, 20};
    CHECK_BYTES(y, expected_max, 6);
    /* the pattern the pinned CMSIS-NN mis-indexes: [3,4,3,1] vs [3,4,1,1] */
    int8_t big[36], col[12], out[36];
    for (int i = 0; i < 36; ++i) {
        big[i] = (int8_t)i;
    }
    for (int i = 0; i < 12; ++i) {
        col[i] = (int8_t)(3 * i + 1); /* the middle element of each row of 3 */
    }
    const int32_t big_dims[4] = {3, 4, 3, 1}, col_dims[4] = {3, 4, 1, 1};
    CHECK(ptec_nn_maximum_s8(big, big_dims, col, col_dims, out, big_dims) == PTEC_OK);
    int ok = 1;
    for (int i = 0; i < 36; ++i) {
        const int expected = i % 3 == 2 ? i : 3 * (i / 3) + 1;
        ok &= out[i] == expected;
    }
    CHECK(ok);
    const int32_t bad_dims[4] = {1, 1, 1, 2};
    CHECK(ptec_nn_maximum_s8(big, big_dims, col, bad_dims, out, big_dims) == PTEC_INVALID_ARGUMENT);
}

static void test_fully_connected(void)
{
    /* x + 1 = (2, 3); rows (1, 1) and (2, -1); bias (10, 0):
     * 10 + 5 = 15 and 4 - 3 = 1, scale 1.0, output offset -1 */
    const int8_t x[2] = {1, 2};
    const int8_t w[4] = {1, 1, 2, -1};
    const int32_t bias[2] = {10, 0};
    const ptec_nn_fc_params p = {1, 0, -1, {1 << 30, 1}, {-128, 127}};
    const ptec_nn_fc_dims d = {1, 2, 2};
    int8_t y[2];
    CHECK(ptec_nn_fully_connected_s8(&p, &d, x, w, bias, NULL, y) == PTEC_OK);
    CHECK(y[0] == 14 && y[1] == 0);
    /* kernel_sum = bias + input_offset * row sum = (12, 1) gives the same */
    const int32_t kernel_sum[2] = {12, 1};
    memset(y, 0, sizeof y);
    CHECK(ptec_nn_fully_connected_s8(&p, &d, x, w, NULL, kernel_sum, y) == PTEC_OK);
    CHECK(y[0] == 14 && y[1] == 0);
}

static void test_conv(void)
{
    /* 3x3 image 1..9, 2x2 kernel of ones */
    const int8_t x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const int8_t w[4] = {1, 1, 1, 1};
    const ptec_nn_per_channel_quant q = {unit_multiplier, unit_shift};
    const ptec_nn_dims in = {1, 3, 3, 1}, filter = {1, 2, 2, 1}, out = {1, 2, 2, 1};
    ptec_nn_conv_params p = {{1, 1}, {0, 0}, {1, 1}, 0, 0, {-128, 127}};
    int8_t y[4];
    CHECK(ptec_nn_convolve_s8(conv_scratch, &p, &q, &in, x, &filter, w, NULL, &out, y) == PTEC_OK);
    const int8_t expected[4] = {12, 16, 24, 28};
    CHECK_BYTES(y, expected, 4);
    /* padding 1, stride 2: windows start at -1; padded taps add nothing */
    p.stride.h = p.stride.w = 2;
    p.padding.h = p.padding.w = 1;
    CHECK(ptec_nn_convolve_s8(conv_scratch, &p, &q, &in, x, &filter, w, NULL, &out, y) == PTEC_OK);
    const int8_t expected_padded[4] = {1, 5, 11, 28};
    CHECK_BYTES(y, expected_padded, 4);
    /* input offset 1 with padding: only in-bounds taps get the offset */
    p.input_offset = 1;
    CHECK(ptec_nn_convolve_s8(conv_scratch, &p, &q, &in, x, &filter, w, NULL, &out, y) == PTEC_OK);
    const int8_t expected_offset[4] = {2, 7, 13, 32};
    CHECK_BYTES(y, expected_offset, 4);
    /* two groups of one channel: [1,1,1,2] x -> channel c times weight c */
    const int8_t x2[2] = {3, 4};
    const int8_t w2[2] = {2, -1};
    const int32_t bias2[2] = {1, 0};
    const ptec_nn_dims in2 = {1, 1, 1, 2}, filter2 = {2, 1, 1, 1}, out2 = {1, 1, 1, 2};
    const ptec_nn_conv_params p2 = {{1, 1}, {0, 0}, {1, 1}, 0, 0, {-128, 127}};
    CHECK(ptec_nn_convolve_s8(conv_scratch, &p2, &q, &in2, x2, &filter2, w2, bias2, &out2, y) == PTEC_OK);
    CHECK(y[0] == 7 && y[1] == -4);
}

/* Packed 4-bit weights: element 2i in the low nibble of byte i, 2i+1 in
 * the high nibble, rows not padded (CMSIS-NN's s4 order). The rows
 * (1, -2, 7) and (-8, 3, -1) are the nibbles 1, E, 7, 8, 3, F: bytes
 * E1, 87, F3, and the second row starts in the high nibble of byte 1. */
static const int8_t packed_rows[3] = {(int8_t)0xE1, (int8_t)0x87, (int8_t)0xF3};

static void test_packed_s4(void)
{
    /* x + 1 = (3, 6, 0): 3 - 12 + 0 + 10 = 1 and -24 + 18 + 0 = -6 */
    const int8_t x[6] = {2, 5, -1, 0, 1, 2};
    const int32_t bias[2] = {10, 0};
    ptec_nn_fc_params p = {1, 0, 0, {1 << 30, 1}, {-128, 127}};
    const ptec_nn_fc_dims d = {2, 3, 2};
    int8_t y[4];
    /* second batch, x + 1 = (1, 2, 3): 1 - 4 + 21 + 10 = 28 and -8 + 6 - 3 = -5 */
    CHECK(ptec_nn_fully_connected_s4(&p, &d, x, packed_rows, bias, y) == PTEC_OK);
    const int8_t expected[4] = {1, -6, 28, -5};
    CHECK_BYTES(y, expected, 4);
    p.filter_offset = 1; /* 4-bit weights are symmetric */
    CHECK(ptec_nn_fully_connected_s4(&p, &d, x, packed_rows, bias, y) == PTEC_INVALID_ARGUMENT);
    p.filter_offset = 0;
    CHECK(ptec_nn_fully_connected_s4(&p, &d, NULL, packed_rows, bias, y) == PTEC_INVALID_ARGUMENT);

    /* The same rows as a 1x1 convolution over two pixels. */
    const ptec_nn_per_channel_quant q = {unit_multiplier, unit_shift};
    const ptec_nn_dims in = {1, 1, 2, 3}, filter = {2, 1, 1, 3}, out = {1, 1, 2, 2};
    const ptec_nn_conv_params cp = {{1, 1}, {0, 0}, {1, 1}, 1, 0, {-128, 127}};
    CHECK(ptec_nn_convolve_s4_buffer_size(&in, &filter) == ptec_nn_convolve_s8_buffer_size(&in, &filter));
    memset(y, 0, sizeof y);
    CHECK(ptec_nn_convolve_s4(conv_scratch, &cp, &q, &in, x, &filter, packed_rows, bias, &out, y) == PTEC_OK);
    CHECK_BYTES(y, expected, 4);
    const ptec_nn_buffer small = {scratch_words, ptec_nn_convolve_s4_buffer_size(&in, &filter) - 1};
    CHECK(ptec_nn_convolve_s4(small, &cp, &q, &in, x, &filter, packed_rows, bias, &out, y) == PTEC_INVALID_ARGUMENT);

    /* Two groups of one channel, weights (2, -1) in one byte F2: channel
     * 1's only weight is the high nibble, as with the int8 groups case */
    const int8_t x2[2] = {3, 4};
    const int8_t w2[1] = {(int8_t)0xF2};
    const int32_t bias2[2] = {1, 0};
    const ptec_nn_dims in2 = {1, 1, 1, 2}, filter2 = {2, 1, 1, 1}, out2 = {1, 1, 1, 2};
    const ptec_nn_conv_params p2 = {{1, 1}, {0, 0}, {1, 1}, 0, 0, {-128, 127}};
    CHECK(ptec_nn_convolve_s4(conv_scratch, &p2, &q, &in2, x2, &filter2, w2, bias2, &out2, y) == PTEC_OK);
    CHECK(y[0] == 7 && y[1] == -4);

    /* 3x1 kernel of (7, -8, 7), padding 1 on a 3-pixel column 1, 2, 3:
     * the padded taps add nothing: -8 + 14 = 6, 7 - 16 + 21 = 12,
     * 14 - 24 = -10; the nibbles 7, 8, 7 are bytes 87, 07 */
    const int8_t x3[3] = {1, 2, 3};
    const int8_t w3[2] = {(int8_t)0x87, 0x07};
    const ptec_nn_dims in3 = {1, 3, 1, 1}, filter3 = {1, 3, 1, 1}, out3 = {1, 3, 1, 1};
    const ptec_nn_conv_params p3 = {{1, 1}, {1, 0}, {1, 1}, 0, 0, {-128, 127}};
    CHECK(ptec_nn_convolve_s4(conv_scratch, &p3, &q, &in3, x3, &filter3, w3, NULL, &out3, y) == PTEC_OK);
    const int8_t expected3[3] = {6, 12, -10};
    CHECK_BYTES(y, expected3, 3);
}

/* Packed 4-bit depthwise weights: the IHWO filter [1, KH, KW, Cout]
 * flattened, two elements per byte (CMSIS-NN's arm_depthwise_conv_s4). */
static void test_depthwise_s4(void)
{
    const ptec_nn_per_channel_quant q = {unit_multiplier, unit_shift};
    int8_t y[9];
    /* One pixel of 3 channels, weights (1, -2, 3): nibbles 1, E, 3 are
     * bytes E1, 03. x + 1 = (6, 7, 8): 6, -14 + 10 = -4, 24 - 4 = 20 */
    const int8_t x1[3] = {5, 6, 7};
    const int8_t w1[2] = {(int8_t)0xE1, 0x03};
    const int32_t bias1[3] = {0, 10, -4};
    const ptec_nn_dims in1 = {1, 1, 1, 3}, filter1 = {1, 1, 1, 3}, out1 = {1, 1, 1, 3};
    const ptec_nn_conv_params p1 = {{1, 1}, {0, 0}, {1, 1}, 1, 0, {-128, 127}};
    CHECK(ptec_nn_depthwise_conv_s4_buffer_size(&in1, &filter1) <= sizeof scratch_words);
    CHECK(ptec_nn_depthwise_conv_s4(conv_scratch, &p1, 1, &q, &in1, x1, &filter1, w1, bias1, &out1, y) == PTEC_OK);
    const int8_t expected1[3] = {6, -4, 20};
    CHECK_BYTES(y, expected1, 3);

    /* One input channel, multiplier 3, a 3x1 kernel with padding 1 over
     * the column 1, 2, 3. Taps (1, -1, 2), (-8, 7, 0), (3, 1, -2): nine
     * nibbles 1 F 2 8 7 0 3 1 E, bytes F1 82 07 13 0E (the last high
     * nibble unused). Row 0: 1 * tap 1 + 2 * tap 2 = (-2, 9, -4); row 1:
     * (1 - 16 + 9, -1 + 14 + 3, 2 + 0 - 6); row 2: 2 * tap 0 + 3 * tap 1. */
    const int8_t x2[3] = {1, 2, 3};
    const int8_t w2[5] = {(int8_t)0xF1, (int8_t)0x82, 0x07, 0x13, 0x0E};
    const ptec_nn_dims in2 = {1, 3, 1, 1}, filter2 = {1, 3, 1, 3}, out2 = {1, 3, 1, 3};
    const ptec_nn_conv_params p2 = {{1, 1}, {1, 0}, {1, 1}, 0, 0, {-128, 127}};
    const uint32_t need = ptec_nn_depthwise_conv_s4_buffer_size(&in2, &filter2);
    CHECK(need <= sizeof scratch_words);
    CHECK(ptec_nn_depthwise_conv_s4(conv_scratch, &p2, 3, &q, &in2, x2, &filter2, w2, NULL, &out2, y) == PTEC_OK);
    const int8_t expected2[9] = {-2, 9, -4, -6, 16, -4, -22, 19, 4};
    CHECK_BYTES(y, expected2, 9);
    if (need > 0) { /* the DSP and Helium builds unpack into the scratch */
        const ptec_nn_buffer small = {scratch_words, need - 1};
        CHECK(ptec_nn_depthwise_conv_s4(small, &p2, 3, &q, &in2, x2, &filter2, w2, NULL, &out2, y) ==
              PTEC_INVALID_ARGUMENT);
    }
    CHECK(ptec_nn_depthwise_conv_s4(conv_scratch, &p2, 2, &q, &in2, x2, &filter2, w2, NULL, &out2, y) ==
          PTEC_INVALID_ARGUMENT); /* Cout != Cin * multiplier */
}

static void test_depthwise(void)
{
    /* 2x2 image, 2 channels; weights 1 for channel 0 and -1 for channel 1 */
    const int8_t x[8] = {1, 10, 2, 20, 3, 30, 4, 40};
    const int8_t w[8] = {1, -1, 1, -1, 1, -1, 1, -1};
    const ptec_nn_per_channel_quant q = {unit_multiplier, unit_shift};
    const ptec_nn_dims in = {1, 2, 2, 2}, filter = {1, 2, 2, 2}, out = {1, 1, 1, 2};
    const ptec_nn_conv_params p = {{1, 1}, {0, 0}, {1, 1}, 0, 0, {-128, 127}};
    int8_t y[4];
    CHECK(ptec_nn_depthwise_conv_s8(conv_scratch, &p, 1, &q, &in, x, &filter, w, NULL, &out, y) == PTEC_OK);
    CHECK(y[0] == 10 && y[1] == -100);
    /* depth multiplier 2 on one channel: outputs 0 and 1 both read channel 0 */
    const int8_t x1[1] = {5};
    const int8_t w1[2] = {2, -3};
    const ptec_nn_dims in1 = {1, 1, 1, 1}, filter1 = {1, 1, 1, 2}, out1 = {1, 1, 1, 2};
    CHECK(ptec_nn_depthwise_conv_s8(conv_scratch, &p, 2, &q, &in1, x1, &filter1, w1, NULL, &out1, y) ==
          PTEC_OK);
    CHECK(y[0] == 10 && y[1] == -15);

    /* 16 channels with an input offset outside the operators' [-127, 128]
     * (the math layer takes any): (127 + 300) * -128 = -54,656 does not
     * fit in 16 bits, so the 16-lane host path must not take it. Scale
     * 2^30 * 2^(-9-31) = 2^-10: -54,656 / 1024 = -53.375 -> -53. */
    int8_t x16[16], w16[16], y16[16], expected16[16];
    int32_t m16[16], s16[16];
    for (int c = 0; c < 16; ++c) {
        x16[c] = 127;
        w16[c] = -128;
        m16[c] = 1 << 30;
        s16[c] = -9;
        expected16[c] = -53;
    }
    const ptec_nn_per_channel_quant q16 = {m16, s16};
    const ptec_nn_dims in16 = {1, 1, 1, 16}, filter16 = {1, 1, 1, 16}, out16 = {1, 1, 1, 16};
    const ptec_nn_conv_params wide = {{1, 1}, {0, 0}, {1, 1}, 300, 0, {-128, 127}};
    CHECK(ptec_nn_depthwise_conv_s8(conv_scratch, &wide, 1, &q16, &in16, x16, &filter16, w16, NULL, &out16, y16) ==
          PTEC_OK);
    CHECK_BYTES(y16, expected16, 16);
}

static void test_layer_norm(void)
{
    /* Row [0, 0, 1], zero point 0, n = 3: s1 = 1, s2 = 1, V = 3*1 - 1 + 7 = 9
     * with eps_term 7, r = 3. t_i = (3*d_i - 1) * 2^16 / 3: -21845.33 ->
     * -21845 for i = 0, 1 and 43690.67 -> 43691 for i = 2 (half away from
     * zero; truncation would give 43690). Multiplier 2^30, shift 1 is 1.0,
     * so the output is t_i + bias_i: with biases 21845 and -43690, 0 0 1. */
    const int8_t x[3] = {0, 0, 1};
    const int32_t mults[3] = {1 << 30, 1 << 30, 1 << 30}, shifts[3] = {1, 1, 1};
    const int32_t bias[3] = {21845, 21845, -43690};
    const ptec_nn_layer_norm_params p = {0, 0, 7, {-128, 127}};
    int8_t y[3];
    CHECK(ptec_nn_layer_norm_s8(x, 1, 3, &p, mults, shifts, bias, y) == PTEC_OK);
    CHECK(y[0] == 0 && y[1] == 0 && y[2] == 1);
    /* A constant row with eps_term 0: V = 0, divided by 1, so every t is 0. */
    const int8_t flat[3] = {9, 9, 9};
    const ptec_nn_layer_norm_params p0 = {0, 5, 0, {-128, 127}};
    const int32_t zero_bias[3] = {0, 0, 0};
    CHECK(ptec_nn_layer_norm_s8(flat, 1, 3, &p0, mults, shifts, zero_bias, y) == PTEC_OK);
    CHECK(y[0] == 5 && y[1] == 5 && y[2] == 5);
    /* Refused: a row of 65537 values, a negative eps_term. */
    CHECK(ptec_nn_layer_norm_s8(x, 1, 65537, &p, mults, shifts, bias, y) == PTEC_INVALID_ARGUMENT);
    const ptec_nn_layer_norm_params negative = {0, 0, -1, {-128, 127}};
    CHECK(ptec_nn_layer_norm_s8(x, 1, 3, &negative, mults, shifts, bias, y) == PTEC_INVALID_ARGUMENT);
}

/* CMSIS-NN's arm_nn_activation_s16 and one LSTM cell, worked by hand from
 * the sigmoid table (T[k] ~ 65536 sigmoid(k / 24)): docs/kernels.md, "LSTM". */
static void test_lstm(void)
{
    /* Sigmoid, left shift 0: v = 3x, index v >> 9, fraction v & 511.
     * x = 0: T[0] << 9 = 2^24, (2^24 + 512) >> 10 = 16384.
     * x = 1000: v = 3000, index 5, fraction 440: r = 36169 * 512 +
     * 440 * (36843 - 36169) = 18815088, (r + 512) >> 10 = 18374.
     * x = -1000: (2^25 - r + 511) >> 10 = 14394 (18374 + 14394 = 2^15).
     * x = 32767: v = 98301, index 191, fraction 509: r = 65513 * 512 + 509,
     * (r + 512) >> 10 = 32757 (the table, not the saturation). */
    CHECK(ptec_nn_sigmoid_s16(0, 0) == 16384);
    CHECK(ptec_nn_sigmoid_s16(1000, 0) == 18374);
    CHECK(ptec_nn_sigmoid_s16(-1000, 0) == 14394);
    CHECK(ptec_nn_sigmoid_s16(32767, 0) == 32757);
    /* Left shift 1: v = 6x; index >= 255 saturates at 0x7FFF << 10, 32767 on
     * the positive side, (2^25 - (0x7FFF << 10) + 511) >> 10 = 1 below. */
    CHECK(ptec_nn_sigmoid_s16(32767, 1) == 32767);
    CHECK(ptec_nn_sigmoid_s16(-32768, 1) == 1);
    /* Tanh: index v >> 8, fraction v & 255. x = 1000: index 11, fraction
     * 184: r = 40149 * 256 + 184 * 645 = 10396824, (r - 2^23 + 128) >> 8 =
     * 7845; x = -1000: (2^23 - r + 127) >> 8 = floor(-7844.1) = -7845.
     * Saturation 0xFFFF << 8: 32767 and floor(-32766.5) = -32767. */
    CHECK(ptec_nn_tanh_s16(0, 0) == 0);
    CHECK(ptec_nn_tanh_s16(1000, 0) == 7845);
    CHECK(ptec_nn_tanh_s16(-1000, 0) == -7845);
    CHECK(ptec_nn_tanh_s16(32767, 0) == 32767);
    CHECK(ptec_nn_tanh_s16(-32768, 0) == -32767);
    /* Left shift -1: v = (3x + 1) >> 1, floored. x = 1001: v = 1502, index
     * 5, fraction 222: r = 36169 * 256 + 222 * 674 = 9408892 -> 3985.
     * x = -1001: v = -1501 (not -1502), fraction 221: r = 9408218,
     * (2^23 - r + 127) >> 8 = floor(-3982.4) = -3983. */
    CHECK(ptec_nn_tanh_s16(1001, -1) == 3985);
    CHECK(ptec_nn_tanh_s16(-1001, -1) == -3983);

    /* One unit, one input, two steps. Weights 0, so every gate is its
     * effective bias (gate multipliers 2^30 with shift 1 are 1.0, and the
     * hidden side adds rq(0) = 0): i = sigmoid(1000) = 18374, f =
     * sigmoid(2000) = 20306 (v = 6000, index 11, fraction 368), g =
     * tanh(1000) = 7845, o = sigmoid(-1000) = 14394. Cell 2^-12 (tanh's
     * left shift 0), forget_to_cell and input_to_cell 2^-15 (2^30, -14),
     * output 2^-23 (2^30, -22), zero point 3.
     * t = 0: c = rq(18374 * 7845 = 144144030) = round(4398.93) = 4399;
     * tanh(4399): index 51, fraction 141, (58544 + 141) * 256 -> 25917;
     * h = rq(14394 * 25917 = 373049298) = 44 (44.47) + 3 = 47.
     * t = 1: f * c = 20306 * 4399 -> 2726 (2726.02), c = 2726 + 4399 = 7125;
     * tanh(7125): index 83, fraction 127, r = 63536 * 256 + 127 * 79 ->
     * 30807; h = rq(14394 * 30807) = 53 (52.86) + 3 = 56.
     * With cell_clip 5000, c = 5000 at t = 1: tanh -> 27520 (index 58,
     * fraction 152), h = rq(396122880) = 47 (47.22) + 3 = 50. */
    const int8_t x[2] = {1, 1};
    const int8_t w[4] = {0, 0, 0, 0};
    const int32_t bx[4] = {1000, 2000, 1000, -1000}, bh[4] = {0, 0, 0, 0};
    ptec_nn_lstm_params p;
    memset(&p, 0, sizeof(p));
    p.time_steps = 2;
    p.batches = 1;
    p.input_size = 1;
    p.hidden_size = 1;
    for (int k = 0; k < 4; ++k) {
        p.gate_input[k] = (ptec_nn_quant){1 << 30, 1};
        p.gate_hidden[k] = (ptec_nn_quant){1 << 30, 1};
    }
    p.forget_to_cell = (ptec_nn_quant){1 << 30, -14};
    p.input_to_cell = (ptec_nn_quant){1 << 30, -14};
    p.output = (ptec_nn_quant){1 << 30, -22};
    p.cell_scale_power = -12;
    p.output_offset = 3;
    int16_t scratch_buf[3];
    ptec_nn_buffer scratch = {scratch_buf, sizeof(scratch_buf)};
    CHECK(ptec_nn_lstm_s8_buffer_size(1) == sizeof(scratch_buf));
    int8_t y[2] = {0, 0};
    CHECK(ptec_nn_lstm_s8(scratch, &p, x, w, w, bx, bh, y) == PTEC_OK);
    CHECK(y[0] == 47 && y[1] == 56);
    p.cell_clip = 5000;
    CHECK(ptec_nn_lstm_s8(scratch, &p, x, w, w, bx, bh, y) == PTEC_OK);
    CHECK(y[0] == 47 && y[1] == 50);
    /* Refused: a scratch one byte short, a cell scale outside [-27, 2]. */
    scratch.size -= 1;
    CHECK(ptec_nn_lstm_s8(scratch, &p, x, w, w, bx, bh, y) == PTEC_INVALID_ARGUMENT);
    scratch.size += 1;
    p.cell_scale_power = 3;
    CHECK(ptec_nn_lstm_s8(scratch, &p, x, w, w, bx, bh, y) == PTEC_INVALID_ARGUMENT);

    /* The streaming form: the state after t = 0 above (h 47, c 4399) given,
     * one step. Streamed, the second step gives 56 again and leaves
     * (56, 7125). With the o row's hidden weight 10 (the hidden term, not
     * skipped at t = 0 with a state: rq(10 * 47) = 470), o's sum is -530:
     * v = -1590, index 3, fraction 54, r = 34813 * 512 + 54 * 680 =
     * 17860976, (2^25 - r + 511) >> 10 = 15326; c is 7125 as before, so
     * h = rq(15326 * 30807 = 472148082) = 56 (56.28) + 3 = 59 (56 if the
     * given h were ignored). */
    p.cell_scale_power = -12;
    p.cell_clip = 0;
    p.time_steps = 1;
    int8_t h_state = 47;
    int16_t c_state = 4399;
    CHECK(ptec_nn_lstm_s8_stateful(scratch, &p, x, w, w, bx, bh, y, &h_state, &c_state) == PTEC_OK);
    CHECK(y[0] == 56 && h_state == 56 && c_state == 7125);
    const int8_t wh[4] = {0, 0, 0, 10};
    h_state = 47;
    c_state = 4399;
    CHECK(ptec_nn_lstm_s8_stateful(scratch, &p, x, w, wh, bx, bh, y, &h_state, &c_state) == PTEC_OK);
    CHECK(y[0] == 59 && h_state == 59 && c_state == 7125);
    /* No step leaves the state as it is; h without c is refused. */
    p.time_steps = 0;
    CHECK(ptec_nn_lstm_s8_stateful(scratch, &p, x, w, wh, bx, bh, y, &h_state, &c_state) == PTEC_OK);
    CHECK(h_state == 59 && c_state == 7125);
    p.time_steps = 1;
    CHECK(ptec_nn_lstm_s8_stateful(scratch, &p, x, w, wh, bx, bh, y, &h_state, NULL) == PTEC_INVALID_ARGUMENT);
}

/* The int16 LSTM (docs/kernels.md "int16 LSTM"): one unit, one input, two
 * steps, x = 500 both times. The input side's multipliers 2^30 with shift
 * 1 are 1.0 in the 64-bit requantization (reduced to 2^14, v * 2^14 /
 * 2^14); the hidden side's 2^30 with shift -2 are 1/8, rounded half up.
 * Input weights (i, f, g, o) 1, 2, 1, -1 and biases 500, 1000, 500, -500
 * give the gates of the int8 test at t = 0: i = sigmoid(1000) = 18374,
 * f = sigmoid(2000) = 20306, g = tanh(1000) = 7845, o = sigmoid(-1000) =
 * 14394. Cell 2^-12, forget_to_cell, input_to_cell and output 2^-15
 * (2^30, -14): the output is Q0.15.
 * t = 0: c = 4399 (144144030 / 2^15 = 4398.93); tanh(4399) = 25917;
 * h = 14394 * 25917 / 2^15 = 11384.56 -> 11385.
 * t = 1: hidden weights 1, -1, 0, -2, hidden biases 0, 5, 0, 6:
 * i: 11385 / 8 = 1423.1 -> 1423, i = sigmoid(2423) = 21094 (v = 7269,
 * index 14, fraction 101); f: -11380 / 8 = -1422.5 -> -1422 (half up),
 * f = sigmoid(578) = 17538; g: 0, g = 7845; o: -22764 / 8 = -2845.5 ->
 * -2845 (half up; -2846 away from zero would give 8729 below), o =
 * sigmoid(-3845) = 9213 (|v| = 11535, index 22, fraction 271).
 * c = 17538 * 4399 / 2^15 -> 2354, + 21094 * 7845 / 2^15 -> 5050: 7404;
 * tanh(7404) = 31051 (v = 22212, index 86, fraction 196);
 * h = 9213 * 31051 / 2^15 = 8730.2 -> 8730.
 * With cell_clip 5000: c = 5000 at t = 1, tanh(5000) = 27520,
 * h = 9213 * 27520 / 2^15 = 7737.4 -> 7737.
 * An output-gate bias of 2^50 saturates to 2^48 - 1, requantizes far past
 * int16 and clamps: o = sigmoid(32767) = 32757, h(0) = 32757 * 25917 /
 * 2^15 = 25908.3 -> 25908. */
static void test_lstm_s16(void)
{
    const int16_t x[2] = {500, 500};
    const int8_t wx[4] = {1, 2, 1, -1}, wh[4] = {1, -1, 0, -2};
    int64_t bx[4] = {500, 1000, 500, -500};
    const int64_t bh[4] = {0, 5, 0, 6};
    ptec_nn_lstm_params p;
    memset(&p, 0, sizeof(p));
    p.time_steps = 2;
    p.batches = 1;
    p.input_size = 1;
    p.hidden_size = 1;
    for (int k = 0; k < 4; ++k) {
        p.gate_input[k] = (ptec_nn_quant){1 << 30, 1};
        p.gate_hidden[k] = (ptec_nn_quant){1 << 30, -2};
    }
    p.forget_to_cell = (ptec_nn_quant){1 << 30, -14};
    p.input_to_cell = (ptec_nn_quant){1 << 30, -14};
    p.output = (ptec_nn_quant){1 << 30, -14};
    p.cell_scale_power = -12;
    int16_t scratch_buf[3];
    ptec_nn_buffer scratch = {scratch_buf, sizeof(scratch_buf)};
    CHECK(ptec_nn_lstm_s16_buffer_size(1) == sizeof(scratch_buf));
    int16_t y[2] = {0, 0};
    CHECK(ptec_nn_lstm_s16(scratch, &p, x, wx, wh, bx, bh, y) == PTEC_OK);
    CHECK(y[0] == 11385 && y[1] == 8730);
    p.cell_clip = 5000;
    CHECK(ptec_nn_lstm_s16(scratch, &p, x, wx, wh, bx, bh, y) == PTEC_OK);
    CHECK(y[0] == 11385 && y[1] == 7737);
    p.cell_clip = 0;
    bx[3] = (int64_t)1 << 50;
    CHECK(ptec_nn_lstm_s16(scratch, &p, x, wx, wh, bx, bh, y) == PTEC_OK);
    CHECK(y[0] == 25908);
    bx[3] = -500;
    /* Refused: a scratch one byte short, a gate shift above 7, a cell
     * scale outside [-27, 2]. */
    scratch.size -= 1;
    CHECK(ptec_nn_lstm_s16(scratch, &p, x, wx, wh, bx, bh, y) == PTEC_INVALID_ARGUMENT);
    scratch.size += 1;
    p.gate_hidden[2].shift = 8;
    CHECK(ptec_nn_lstm_s16(scratch, &p, x, wx, wh, bx, bh, y) == PTEC_INVALID_ARGUMENT);
    p.gate_hidden[2].shift = -2;
    p.cell_scale_power = 3;
    CHECK(ptec_nn_lstm_s16(scratch, &p, x, wx, wh, bx, bh, y) == PTEC_INVALID_ARGUMENT);
}

static void test_svdf(void)
{
    /* 1 unit of rank 2 (rows 0 and 1), 2 features, memory 3, input_offset 1.
     * weights_feature [[1, 2], [-1, 1]], weights_time [[1, 2, 3], [2, 0, -1]],
     * bias 10; the feature requantization is 1.0 (2^30, shift 1), the
     * output's a half (2^30, shift 0: floor((v + 1) / 2)), offset -3.
     * Frames [2, 0], [-1, 3], [0, 0] are [3, 1], [0, 4], [1, 1] with the
     * offset, so the new columns are (5, -2), (8, 4), (3, 0). States and sums:
     *   t0: [0 0 5] [0 0 -2]: 15 + 2 = 17, + 10 = 27 -> 14 - 3 = 11
     *   t1: [0 5 8] [0 -2 4]: 34 - 4 = 30, + 10 = 40 -> 20 - 3 = 17 -> 16 (max)
     *   t2: [5 8 3] [-2 4 0]: 30 - 4 = 26, + 10 = 36 -> 18 - 3 = 15 */
    const int8_t x[6] = {2, 0, -1, 3, 0, 0};
    const int8_t wf[4] = {1, 2, -1, 1}, wt[6] = {1, 2, 3, 2, 0, -1};
    int32_t bias[1] = {10};
    ptec_nn_svdf_params p = {2, 1, -3, {1 << 30, 1}, {1 << 30, 0}, {-128, 127}, {-128, 16}};
    const ptec_nn_svdf_dims d3 = {3, 2, 1, 3}, d1 = {1, 2, 1, 3}, d2 = {2, 2, 1, 3};
    int8_t state[6] = {0}, y[3] = {0};
    CHECK(ptec_nn_svdf_s8_buffer_size(&d3, 2) == 8);
    CHECK(ptec_nn_svdf_s8(&conv_scratch, &p, &d3, x, wf, wt, bias, state, y) == PTEC_OK);
    CHECK(y[0] == 11 && y[1] == 16 && y[2] == 15);
    CHECK(state[0] == 5 && state[1] == 8 && state[2] == 3 && state[3] == -2 && state[4] == 4 && state[5] == 0);
    /* Streaming: frame 0, then frames 1 and 2 from the state it left. */
    memset(state, 0, sizeof state);
    CHECK(ptec_nn_svdf_s8(&conv_scratch, &p, &d1, x, wf, wt, bias, state, y) == PTEC_OK && y[0] == 11);
    CHECK(ptec_nn_svdf_s8(&conv_scratch, &p, &d2, x + 2, wf, wt, bias, state, y) == PTEC_OK);
    CHECK(y[0] == 16 && y[1] == 15);
    /* int32 wraps as on the target: bias 2^31 - 6 plus frame 0's 17 is
     * -2^31 + 11, halved to -2^30 + 6: clamped to -128 (saturating would
     * have given 16). */
    memset(state, 0, sizeof state);
    bias[0] = INT32_MAX - 5;
    CHECK(ptec_nn_svdf_s8(&conv_scratch, &p, &d1, x, wf, wt, bias, state, y) == PTEC_OK && y[0] == -128);
    /* The state saturates at int8: 100 * (2 + 1) = 300 -> 127; weight 1,
     * no bias, output scale 1.0: 127. */
    const int8_t x1[1] = {2}, w100[1] = {100}, one[1] = {1};
    const ptec_nn_svdf_params p1 = {1, 1, 0, {1 << 30, 1}, {1 << 30, 1}, {-128, 127}, {-128, 127}};
    const ptec_nn_svdf_dims single = {1, 1, 1, 1};
    int8_t s1[1] = {0};
    CHECK(ptec_nn_svdf_s8(&conv_scratch, &p1, &single, x1, w100, one, NULL, s1, y) == PTEC_OK);
    CHECK(s1[0] == 127 && y[0] == 127);
    /* Refused: rank * memory over 2^16, a scratch too small for the rows. */
    const ptec_nn_svdf_dims long_memory = {1, 2, 1, 40000};
    CHECK(ptec_nn_svdf_s8(&conv_scratch, &p, &long_memory, x, wf, wt, bias, state, y) == PTEC_INVALID_ARGUMENT);
    const ptec_nn_buffer small = {scratch_words, 4};
    CHECK(ptec_nn_svdf_s8(&small, &p, &d3, x, wf, wt, bias, state, y) == PTEC_INVALID_ARGUMENT);
}

static void test_transpose_conv(void)
{
    /* 1x2 input (1, 2), 1x3 kernel (1, 10, 100), stride 2: the input pixels
     * land at columns 0..2 and 2..4: (1, 10, 102, 20, 200). Scale 1/4 as
     * (2^30, -1) rounds twice: h = floor((v + 1) / 2), then h / 2 with ties
     * away from zero: 1 -> 1, 10 -> 3, 102 -> 26, 20 -> 5, 200 -> 50. */
    const int8_t x[2] = {1, 2};
    const int8_t w[3] = {1, 10, 100};
    const int32_t half_multiplier[1] = {1 << 30}, half_shift[1] = {-1};
    const ptec_nn_per_channel_quant q = {half_multiplier, half_shift};
    const ptec_nn_dims in = {1, 1, 2, 1}, filter = {1, 1, 3, 1};
    ptec_nn_conv_params p = {{1, 2}, {0, 0}, {1, 1}, 0, 0, {-128, 127}};
    const ptec_nn_dims out = {1, 1, 5, 1};
    int8_t y[5];
    CHECK(ptec_nn_transpose_conv_s8(no_scratch, &p, &q, &in, x, &filter, w, NULL, &out, y) == PTEC_OK);
    const int8_t expected[5] = {1, 3, 26, 5, 50};
    CHECK_BYTES(y, expected, 5);
    /* padding 1 (pw % sw != 0, the case the pinned CMSIS-NN gets wrong)
     * crops one column on each side */
    p.padding.w = 1;
    const ptec_nn_dims out_padded = {1, 1, 3, 1};
    CHECK(ptec_nn_transpose_conv_s8(no_scratch, &p, &q, &in, x, &filter, w, NULL, &out_padded, y) ==
          PTEC_OK);
    const int8_t expected_padded[3] = {3, 26, 5};
    CHECK_BYTES(y, expected_padded, 3);
}

static void test_batch_matmul(void)
{
    /* [[1,2],[3,4]] times the identity (given transposed) */
    const int8_t lhs[4] = {1, 2, 3, 4};
    const int8_t rhs_t[4] = {1, 0, 0, 1};
    const ptec_nn_bmm_params p = {0, 0, 0, {1 << 30, 1}, {-128, 127}};
    const ptec_nn_bmm_dims d = {1, 2, 2, 2};
    int8_t y[4];
    CHECK(ptec_nn_batch_matmul_s8(no_scratch, &p, &d, lhs, rhs_t, y) == PTEC_OK);
    CHECK_BYTES(y, lhs, 4);
    /* offsets are added: (1+1)*(1+1) + (2+1)*(0+1) = 7 for out[0][0] */
    const ptec_nn_bmm_params q = {1, 1, -7, {1 << 30, 1}, {-128, 127}};
    CHECK(ptec_nn_batch_matmul_s8(no_scratch, &q, &d, lhs, rhs_t, y) == PTEC_OK);
    CHECK(y[0] == 0);
}

static void test_pools(void)
{
    const int8_t x[4] = {1, 2, 3, 5};
    const int8_t neg[4] = {-1, -2, -3, -5};
    const ptec_nn_dims in = {1, 2, 2, 1}, out1 = {1, 1, 1, 1}, out2 = {1, 2, 2, 1};
    ptec_nn_pool_params p = {{2, 2}, {1, 1}, {0, 0}, {-128, 127}};
    int8_t y[4];
    /* 11 / 4 = 2.75 -> (11 + 2) / 4 = 3; -11 / 4 -> (-11 - 2) / 4 = -3 */
    CHECK(ptec_nn_avgpool_s8(no_scratch, &p, &in, x, &out1, y) == PTEC_OK);
    CHECK(y[0] == 3);
    CHECK(ptec_nn_avgpool_s8(no_scratch, &p, &in, neg, &out1, y) == PTEC_OK);
    CHECK(y[0] == -3);
    /* padding 1, stride 2: each window holds one real pixel, the count
     * excludes the padding */
    p.stride.h = p.stride.w = 2;
    p.padding.h = p.padding.w = 1;
    CHECK(ptec_nn_avgpool_s8(no_scratch, &p, &in, x, &out2, y) == PTEC_OK);
    CHECK_BYTES(y, x, 4);
    /* a window entirely in the padding is an error */
    p.padding.h = p.padding.w = 2;
    CHECK(ptec_nn_avgpool_s8(no_scratch, &p, &in, x, &out2, y) == PTEC_INVALID_ARGUMENT);

    ptec_nn_pool_params m = {{2, 2}, {1, 1}, {0, 0}, {-128, 4}};
    CHECK(ptec_nn_maxpool_s8(&m, &in, x, &out1, y) == PTEC_OK);
    CHECK(y[0] == 4); /* max 5 clamped to the activation max */
    CHECK(ptec_nn_maxpool_s8(&m, &in, neg, &out1, y) == PTEC_OK);
    CHECK(y[0] == -1);
    /* an empty window gives activation.min */
    m.stride.h = m.stride.w = 2;
    m.padding.h = m.padding.w = 2;
    m.activation.min = -7;
    CHECK(ptec_nn_maxpool_s8(&m, &in, x, &out2, y) == PTEC_OK);
    CHECK(y[0] == -7);
}

static void test_softmax(void)
{
    /* scale 1/16: M, S = quantize_multiplier(2^22) = (2^30, 23) */
    const ptec_nn_softmax_params p = {1 << 30, 23, -248};
    /* two equal values: 1/2 -> 128/256 - 128 = 0 */
    const int8_t equal[2] = {7, 7};
    int8_t y[2];
    CHECK(ptec_nn_softmax_s8(equal, 1, 2, &p, y) == PTEC_OK);
    CHECK(y[0] == 0 && y[1] == 0);
    /* one element: probability 1 = 256/256 -> 128, clamped to 127 */
    CHECK(ptec_nn_softmax_s8(equal, 2, 1, &p, y) == PTEC_OK);
    CHECK(y[0] == 127 && y[1] == 127);
    /* below diff_min the element is dropped: the other gets everything */
    const ptec_nn_softmax_params narrow = {1 << 30, 23, -50};
    const int8_t spread[2] = {100, -100};
    CHECK(ptec_nn_softmax_s8(spread, 1, 2, &narrow, y) == PTEC_OK);
    CHECK(y[0] == 127 && y[1] == -128);
    /* diff -16 at scale 1/16 is -1: p = 1/(1+e^-1) = 0.7311 -> 187.2 -> 59,
     * and 0.2689 * 256 = 68.8 -> -59 */
    const int8_t one_apart[2] = {16, 0};
    CHECK(ptec_nn_softmax_s8(one_apart, 1, 2, &p, y) == PTEC_OK);
    CHECK(y[0] == 59 && y[1] == -59);
}

static void test_softmax_masked(void)
{
    /* scale 1/16, as test_softmax. Row 0: {16, 0, 120} with 120 masked:
     * the masked maximum takes no part, so the row is softmax({16, 0}) =
     * {59, -59}, and the masked one has probability 0 -> -128. Row 1 uses
     * mask row 1: {7, 7, 7} with only position 2 masked -> {0, 0, -128}.
     * With mask_rows 1 both rows use mask row 0. */
    const ptec_nn_softmax_params p = {1 << 30, 23, -248};
    const int8_t x[6] = {16, 0, 120, 7, 7, 7};
    const uint8_t mask[6] = {0, 0, 1, 0, 0, 1};
    int8_t y[6];
    CHECK(ptec_nn_softmax_masked_s8(x, 2, 3, mask, 2, &p, y) == PTEC_OK);
    CHECK(y[0] == 59 && y[1] == -59 && y[2] == -128);
    CHECK(y[3] == 0 && y[4] == 0 && y[5] == -128);
    /* every position masked: all -128 (probabilities 0, docs/kernels.md) */
    const uint8_t all[3] = {1, 1, 1};
    CHECK(ptec_nn_softmax_masked_s8(x, 2, 3, all, 1, &p, y) == PTEC_OK);
    for (int i = 0; i < 6; ++i) {
        CHECK(y[i] == -128);
    }
    /* one position left: probability 1 -> 127 */
    const uint8_t one[3] = {1, 0, 1};
    CHECK(ptec_nn_softmax_masked_s8(x, 2, 3, one, 1, &p, y) == PTEC_OK);
    CHECK(y[0] == -128 && y[1] == 127 && y[2] == -128 && y[3] == -128 && y[4] == 127 && y[5] == -128);
    /* a masked 127 above unmasked scores near -128: the maximum is the
     * unmasked -120, so {-120, -120} is {0, 0} */
    const int8_t low[3] = {-120, 127, -120};
    const uint8_t middle[3] = {0, 1, 0};
    CHECK(ptec_nn_softmax_masked_s8(low, 1, 3, middle, 1, &p, y) == PTEC_OK);
    CHECK(y[0] == 0 && y[1] == -128 && y[2] == 0);
    /* mask rows that do not divide the rows, no mask */
    CHECK(ptec_nn_softmax_masked_s8(x, 3, 2, mask, 2, &p, y) == PTEC_INVALID_ARGUMENT);
    CHECK(ptec_nn_softmax_masked_s8(x, 2, 3, NULL, 1, &p, y) == PTEC_INVALID_ARGUMENT);
}

static void test_transpose_pad(void)
{
    const int8_t x[6] = {1, 2, 3, 4, 5, 6};
    const int32_t sizes[2] = {2, 3};
    int8_t y[12];
    const int32_t swap[2] = {1, 0}, identity[2] = {0, 1};
    CHECK(ptec_nn_transpose_s8(x, sizes, 2, swap, y) == PTEC_OK);
    const int8_t expected[6] = {1, 4, 2, 5, 3, 6};
    CHECK_BYTES(y, expected, 6);
    /* perm [0, 1] copies (the pinned CMSIS-NN swaps here) */
    CHECK(ptec_nn_transpose_s8(x, sizes, 2, identity, y) == PTEC_OK);
    CHECK_BYTES(y, x, 6);
    const int32_t bad[2] = {1, 1};
    CHECK(ptec_nn_transpose_s8(x, sizes, 2, bad, y) == PTEC_INVALID_ARGUMENT);
    /* rank 3: [1,2,3] permuted (2,0,1) -> [3,1,2] */
    const int32_t sizes3[3] = {1, 2, 3}, perm3[3] = {2, 0, 1};
    CHECK(ptec_nn_transpose_s8(x, sizes3, 3, perm3, y) == PTEC_OK);
    CHECK_BYTES(y, expected, 6);

    /* [1,1,1,2] padded by one W row before and one C column after, value 9 */
    const int32_t dims[4] = {1, 1, 1, 2}, pre[4] = {0, 0, 1, 0}, post[4] = {0, 0, 0, 1};
    CHECK(ptec_nn_pad_s8(x, dims, pre, post, 9, y) == PTEC_OK);
    const int8_t expected_pad[6] = {9, 9, 9, 1, 2, 9};
    CHECK_BYTES(y, expected_pad, 6);
}

/* 16-bit activations (docs/kernels.md, "16-bit activations"). */
static void test_a16(void)
{
    /* REDUCE_MULTIPLIER: Q31 to Q15 rounded, the top held at 0x7FFF */
    CHECK(ptec_nn_reduce_multiplier(1 << 30) == 1 << 14);
    CHECK(ptec_nn_reduce_multiplier(0x7FFF0000) == 0x7FFF);
    CHECK(ptec_nn_reduce_multiplier(0x7FFEFFFF) == 0x7FFF); /* 0x7FFEFFFF + 0x8000 = 0x7FFF7FFF */
    CHECK(ptec_nn_reduce_multiplier(INT32_MIN) == -32768);
    CHECK(ptec_nn_reduce_multiplier(0x8000) == 1);  /* 0.5 rounds up */
    CHECK(ptec_nn_reduce_multiplier(0x7FFF) == 0);
    /* v * r / 2^(15 - shift), ties up: 3 * 0.5 = 1.5 -> 2, -1.5 -> -1, -2.5 -> -2 */
    CHECK(ptec_nn_requantize_s64(3, 1 << 14, 0) == 2);
    CHECK(ptec_nn_requantize_s64(-3, 1 << 14, 0) == -1);
    CHECK(ptec_nn_requantize_s64(-5, 1 << 14, 0) == -2);
    CHECK(ptec_nn_requantize_s64(1, 1 << 14, 7) == 64);                   /* 0.5 * 2^7 */
    CHECK(ptec_nn_requantize_s64((int64_t)1 << 47, 1 << 14, -31) == 32768); /* 2^47 * 2^-32 */
    /* the bias sum saturates at +-(2^48 - 1), exactly below it */
    const int64_t huge[3] = {INT64_MAX, INT64_MIN, -((int64_t)1 << 53) - 3};
    CHECK(ptec_nn_add_bias_s64(5, huge, 0) == PTEC_NN_S64_LIMIT);
    CHECK(ptec_nn_add_bias_s64(-5, huge, 1) == -PTEC_NN_S64_LIMIT);
    CHECK(ptec_nn_add_bias_s64((int64_t)1 << 53, huge, 2) == -3);
    CHECK(ptec_nn_add_bias_s64(7, NULL, 0) == 7);

    /* conv 1x1, one output channel, weights [3, 4], bias 5, scale 0.5:
     * 1000*3 - 2000*4 + 5 = -4995 -> -2497.5 -> -2497 (ties up);
     * 32767*3 - 32768*4 + 5 = -32766 -> -16383 */
    const int16_t x[4] = {1000, -2000, 32767, -32768};
    const int8_t w[2] = {3, 4};
    const int64_t bias5[1] = {5};
    const int32_t half_mult[1] = {1 << 30}, zero_shift[1] = {0}, unit_shift1[4] = {1, 1, 1, 1};
    const ptec_nn_per_channel_quant half = {half_mult, zero_shift};
    ptec_nn_conv_s16_params cp = {{1, 1}, {0, 0}, {1, 1}, {INT16_MIN, INT16_MAX}};
    ptec_nn_dims in = {1, 1, 2, 2}, f = {1, 1, 1, 2}, out = {1, 1, 2, 1};
    int16_t y[4] = {0};
    CHECK(ptec_nn_convolve_s16_buffer_size(&in, &f) == 0);
    CHECK(ptec_nn_convolve_s16(no_scratch, &cp, &half, &in, x, &f, w, bias5, &out, y) == PTEC_OK);
    CHECK(y[0] == -2497 && y[1] == -16383);
    /* a shift outside [-31, 7] is refused, not shifted by a negative amount */
    const int32_t bad_shift[1] = {8};
    const ptec_nn_per_channel_quant bad = {half_mult, bad_shift};
    CHECK(ptec_nn_convolve_s16(no_scratch, &cp, &bad, &in, x, &f, w, bias5, &out, y) == PTEC_INVALID_ARGUMENT);
    CHECK(ptec_nn_convolve_s16(no_scratch, &cp, &half, &in, NULL, &f, w, bias5, &out, y) == PTEC_INVALID_ARGUMENT);

    /* 3x3 kernel of ones over a 1x1 input with padding 1: only the centre
     * tap is inside, 7 * 1.0 = 7 (padding is 0 in int16's symmetric domain) */
    const int16_t seven[1] = {7};
    const int8_t ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const ptec_nn_per_channel_quant one = {unit_multiplier, unit_shift1};
    ptec_nn_conv_s16_params padded = {{1, 1}, {1, 1}, {1, 1}, {INT16_MIN, INT16_MAX}};
    ptec_nn_dims in1 = {1, 1, 1, 1}, f3 = {1, 3, 3, 1}, out1 = {1, 1, 1, 1};
    CHECK(ptec_nn_convolve_s16(no_scratch, &padded, &one, &in1, seven, &f3, ones, NULL, &out1, y) == PTEC_OK);
    CHECK(y[0] == 7);

    /* fully connected over 512 products of -32768 * -128 = 2^22: the sum is
     * 2^31 exactly (an int32 accumulator would wrap to -2^31); times
     * 0.5 * 2^-31 it is 0.5, which rounds up to 1 (the wrapped sum: 0) */
    static int16_t xs[512];
    static int8_t ws[512];
    for (int i = 0; i < 512; ++i) {
        xs[i] = INT16_MIN;
        ws[i] = INT8_MIN;
    }
    const ptec_nn_fc_dims fd = {1, 512, 1};
    ptec_nn_fc_s16_params fp = {{1 << 30, -31}, {INT16_MIN, INT16_MAX}};
    CHECK(ptec_nn_fully_connected_s16(&fp, &fd, xs, ws, NULL, y) == PTEC_OK);
    CHECK(y[0] == 1);
    fp.quant.shift = 8;
    CHECK(ptec_nn_fully_connected_s16(&fp, &fd, xs, ws, NULL, y) == PTEC_INVALID_ARGUMENT);

    /* depthwise, multiplier 2: channel 0 (100) feeds outputs 0 and 1, channel
     * 1 (-100) outputs 2 and 3; weights [1, 2, 3, -4], scale 1.0, clamp at -250 */
    const int16_t xd[2] = {100, -100};
    const int8_t wd[4] = {1, 2, 3, -4};
    ptec_nn_conv_s16_params dp = {{1, 1}, {0, 0}, {1, 1}, {-250, INT16_MAX}};
    ptec_nn_dims din = {1, 1, 1, 2}, dfl = {1, 1, 1, 4}, dout = {1, 1, 1, 4};
    CHECK(ptec_nn_depthwise_conv_s16(&dp, 2, &one, &din, xd, &dfl, wd, NULL, &dout, y) == PTEC_OK);
    CHECK(y[0] == 100 && y[1] == 200 && y[2] == -250 && y[3] == 400);
    CHECK(ptec_nn_depthwise_conv_s16(&dp, 3, &one, &din, xd, &dfl, wd, NULL, &dout, y) == PTEC_INVALID_ARGUMENT);

    /* add: 1000 and 2000, each * 2^15 * 0.5, summed (49152000), then * 0.5 *
     * 2^-14 = 2^-15: (1000 + 2000) / 2 = 1500 */
    const int16_t a1[1] = {1000}, a2[1] = {2000};
    ptec_nn_add_s16_params ap = {{1 << 30, 0}, {1 << 30, 0}, 15, {1 << 30, -14}, {INT16_MIN, INT16_MAX}};
    CHECK(ptec_nn_add_s16(a1, a2, 1, 1, y, &ap) == PTEC_OK);
    CHECK(y[0] == 1500);
    ap.left_shift = 17;
    CHECK(ptec_nn_add_s16(a1, a2, 1, 1, y, &ap) == PTEC_INVALID_ARGUMENT);
    ap.left_shift = 15;
    CHECK(ptec_nn_add_s16(a1, a2, 1, 0, y, &ap) == PTEC_INVALID_ARGUMENT);

    /* mul: 300 * -200 = -60000, * 0.5 * 2^-6 = -468.75 -> -469;
     * -32768 * -32768 = 2^30, * 0.5 = 2^29 -> clamped to 32767 */
    const int16_t m1[2] = {300, INT16_MIN}, m2[2] = {-200, INT16_MIN};
    ptec_nn_mul_s16_params mp = {{1 << 30, -6}, {INT16_MIN, INT16_MAX}};
    CHECK(ptec_nn_mul_s16(m1, m2, 2, 2, y, &mp) == PTEC_OK);
    CHECK(y[0] == -469);
    mp.output_quant.shift = 0;
    CHECK(ptec_nn_mul_s16(m1, m2, 2, 2, y, &mp) == PTEC_OK);
    CHECK(y[1] == INT16_MAX);

    /* average pool 2x2 over two channels: {-32768 x3, -32767} sums to -131071,
     * (-131071 - 2) / 4 truncates to -32768; {1, 2, 2, 2}: (7 + 2) / 4 = 2 */
    const int16_t px[8] = {INT16_MIN, 1, INT16_MIN, 2, INT16_MIN, 2, -32767, 2};
    ptec_nn_pool_params pp = {{2, 2}, {1, 1}, {0, 0}, {INT16_MIN, INT16_MAX}};
    ptec_nn_dims pin = {1, 2, 2, 2}, pout = {1, 1, 1, 2};
    CHECK(ptec_nn_avgpool_s16(&pp, &pin, px, &pout, y) == PTEC_OK);
    CHECK(y[0] == INT16_MIN && y[1] == 2);
    /* ties away from zero: (1 + 2) / 2 = 1.5 -> 2, (-1 - 2) / 2 -> -2 */
    const int16_t tx[4] = {1, -1, 2, -2};
    ptec_nn_pool_params tp = {{1, 2}, {1, 1}, {0, 0}, {INT16_MIN, INT16_MAX}};
    ptec_nn_dims tin = {1, 1, 2, 2}, tout = {1, 1, 1, 2};
    CHECK(ptec_nn_avgpool_s16(&tp, &tin, tx, &tout, y) == PTEC_OK);
    CHECK(y[0] == 2 && y[1] == -2);
    /* max pool 2x2 of {-5, 7, 32767, -32768} = 32767, clamped to 1000 */
    const int16_t mx[4] = {-5, 7, INT16_MAX, INT16_MIN};
    ptec_nn_pool_params mpp = {{2, 2}, {1, 1}, {0, 0}, {INT16_MIN, 1000}};
    ptec_nn_dims min4 = {1, 2, 2, 1}, mout = {1, 1, 1, 1};
    CHECK(ptec_nn_maxpool_s16(&mpp, &min4, mx, &mout, y) == PTEC_OK);
    CHECK(y[0] == 1000);
    CHECK(ptec_nn_maxpool_s16(&mpp, &min4, NULL, &mout, y) == PTEC_INVALID_ARGUMENT);

    /* softmax with constant tables: every exp is 1000 (slope 0), the sum
     * 4000 has 20 leading zeros, ((4000 << 19) + 2^13) >> 14 = 128000,
     * recentred 128000 - 98304 = 29696 -> reciprocal 16384; then each
     * (1000 * 16384) >> (30 - 20) = 16000, (16000 + 1) >> 1 = 8000 */
    static int16_t thousand[513], half_lut[513], zeros[513];
    for (int i = 0; i < 513; ++i) {
        thousand[i] = 1000;
        half_lut[i] = 16384;
        zeros[i] = 0;
    }
    const int16_t sx[4] = {5, -7, INT16_MIN, INT16_MAX};
    ptec_nn_softmax_s16_params sp = {1 << 30, 0, thousand, half_lut};
    CHECK(ptec_nn_softmax_s16(sx, 1, 4, &sp, y) == PTEC_OK);
    CHECK(y[0] == 8000 && y[1] == 8000 && y[2] == 8000 && y[3] == 8000);
    /* a row of one value: exp 32767 (slope 0), sum 32767 has 17 leading
     * zeros, ((32767 << 16) + 2^13) >> 14 = 131068; a reciprocal of 16400
     * gives (32767 * 16400) >> 13 = 65599, (65599 + 1) >> 1 = 32800, which
     * saturates to 32767 (CMSIS-NN's narrowing would wrap it to -32736);
     * a reciprocal of -16400 saturates to -32768 */
    static int16_t top_lut[513], over_half[513], under_half[513];
    for (int i = 0; i < 513; ++i) {
        top_lut[i] = INT16_MAX;
        over_half[i] = 16400;
        under_half[i] = -16400;
    }
    const ptec_nn_softmax_s16_params one_p = {1 << 30, 0, top_lut, over_half};
    CHECK(ptec_nn_softmax_s16(sx, 4, 1, &one_p, y) == PTEC_OK);
    CHECK(y[0] == INT16_MAX && y[1] == INT16_MAX && y[2] == INT16_MAX && y[3] == INT16_MAX);
    const ptec_nn_softmax_s16_params neg_p = {1 << 30, 0, top_lut, under_half};
    CHECK(ptec_nn_softmax_s16(sx, 1, 1, &neg_p, y) == PTEC_OK);
    CHECK(y[0] == INT16_MIN);
    /* a table summing to 0 has no normalization: the row is 0 */
    sp.exp_lut = zeros;
    CHECK(ptec_nn_softmax_s16(sx, 1, 4, &sp, y) == PTEC_OK);
    CHECK(y[0] == 0 && y[3] == 0);
    CHECK(ptec_nn_softmax_s16(sx, 1, 65536, &sp, y) == PTEC_INVALID_ARGUMENT);
    sp.exp_lut = NULL;
    CHECK(ptec_nn_softmax_s16(sx, 1, 4, &sp, y) == PTEC_INVALID_ARGUMENT);
}

/* The in-place convolutions refuse what they cannot compute in place, and
 * a scratch one byte short; kernel_vectors.py checks their results. */
static void test_in_place_refusals(void)
{
    int8_t data[2 * 3 * 4] = {0};
    const int8_t filter[9 * 4] = {0};
    uint8_t buf[256];
    const ptec_nn_dims dims = {1, 2, 3, 4}, dw = {1, 3, 3, 4}, pw = {4, 1, 1, 4};
    const ptec_nn_per_channel_quant quant = {unit_multiplier, unit_shift};
    ptec_nn_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 0, 0, {-128, 127}};
    const uint32_t need = ptec_nn_depthwise_in_place_s8_buffer_size(&p, &dims, &dw);
    CHECK(need == 2u * 3u * 4u); /* padding 1: two pending rows of 3 x 4, the image has two */
    ptec_nn_buffer scratch = {buf, need - 1u};
    CHECK(ptec_nn_depthwise_in_place_s8(scratch, &p, &quant, &dims, data, &dw, filter, NULL) == PTEC_INVALID_ARGUMENT);
    scratch.size = need;
    CHECK(ptec_nn_depthwise_in_place_s8(scratch, &p, &quant, &dims, data, &dw, filter, NULL) == PTEC_OK);
    p.stride.h = 2; /* out would have one row */
    CHECK(!ptec_nn_depthwise_in_place_fits(&p, &dims, &dw));
    CHECK(ptec_nn_depthwise_in_place_s8_buffer_size(&p, &dims, &dw) == 0);
    CHECK(ptec_nn_depthwise_in_place_s8(scratch, &p, &quant, &dims, data, &dw, filter, NULL) == PTEC_INVALID_ARGUMENT);
    p.stride.h = 1;
    p.padding.h = 0; /* out would have no rows */
    CHECK(ptec_nn_depthwise_in_place_s8(scratch, &p, &quant, &dims, data, &dw, filter, NULL) == PTEC_INVALID_ARGUMENT);
    /* A 1x1 conv with padding reads pixels it has written. */
    p.padding.h = 0;
    p.padding.w = 1;
    CHECK(!ptec_nn_pointwise_in_place_fits(&p, &dims, &pw));
    p.padding.w = 0;
    CHECK(ptec_nn_pointwise_in_place_fits(&p, &dims, &pw));
    scratch.size = ptec_nn_pointwise_in_place_s8_buffer_size(&p, &dims, &pw);
    CHECK(scratch.size >= 6u * 4u && scratch.size <= sizeof buf);
    CHECK(ptec_nn_pointwise_in_place_s8(scratch, &p, &quant, &dims, data, &pw, filter, NULL) == PTEC_OK);
    scratch.size -= 1u;
    CHECK(ptec_nn_pointwise_in_place_s8(scratch, &p, &quant, &dims, data, &pw, filter, NULL) == PTEC_INVALID_ARGUMENT);
}

/* The fused expansion + depthwise against its oracle, the two unfused
 * calls on the whole tensors (their math is checked against numpy by
 * kernel_vectors.py), on geometries that take every path of the row
 * window: stride 2 on an odd height, a 1x1 depthwise whose stride skips
 * expanded rows, a dilated 5-tall kernel, two batches; then the refusals. */
static uint32_t fused_seed = 12345u;

static int8_t fused_random(void)
{
    fused_seed = fused_seed * 1664525u + 1013904223u;
    return (int8_t)(fused_seed >> 24);
}

static void test_expand_depthwise(void)
{
    enum { MAX_IN = 2 * 9 * 7 * 4, MAX_E = 8, MAX_EXPANDED = 2 * 9 * 7 * MAX_E, MAX_SCRATCH = 4096 };
    static const struct {
        int32_t n, h, w, cin, e, kh, kw, stride, pad, dilation;
    } shapes[] = {
        {2, 7, 5, 3, 8, 3, 3, 2, 1, 1}, {1, 9, 4, 2, 5, 1, 1, 2, 0, 1}, {1, 6, 6, 4, 4, 5, 3, 1, 4, 2},
        {1, 2, 3, 1, 6, 3, 3, 1, 1, 1}, {1, 9, 7, 4, 8, 3, 3, 1, 1, 1},
    };
    static int8_t input[MAX_IN], expand_filter[MAX_E * 4], filter[5 * 3 * MAX_E];
    static int8_t expanded[MAX_EXPANDED], want[MAX_EXPANDED], got[MAX_EXPANDED];
    static uint32_t math[256], scratch_buf[MAX_SCRATCH / 4];
    int32_t mult[MAX_E], shift[MAX_E], bias[MAX_E], expand_bias[MAX_E];
    for (int32_t c = 0; c < MAX_E; ++c) {
        mult[c] = (1 << 30) + c * 12345;
        shift[c] = -5 - c % 3;
        bias[c] = (c - 4) * 300;
        expand_bias[c] = (3 - c) * 200;
    }
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        ptec_nn_expand_depthwise_args a;
        memset(&a, 0, sizeof a);
        a.input_dims = (ptec_nn_dims){shapes[s].n, shapes[s].h, shapes[s].w, shapes[s].cin};
        a.expand_dims = (ptec_nn_dims){shapes[s].e, 1, 1, shapes[s].cin};
        a.filter_dims = (ptec_nn_dims){1, shapes[s].kh, shapes[s].kw, shapes[s].e};
        a.expand_params = (ptec_nn_conv_params){{1, 1}, {0, 0}, {1, 1}, 5, -7, {-20, 60}};
        a.params = (ptec_nn_conv_params){{shapes[s].stride, shapes[s].stride}, {shapes[s].pad, shapes[s].pad},
                                         {shapes[s].dilation, shapes[s].dilation}, 7, 3, {-100, 110}};
        const int32_t span = shapes[s].dilation * (shapes[s].kh - 1);
        const int32_t oh = (shapes[s].h + 2 * shapes[s].pad - span - 1) / shapes[s].stride + 1;
        const int32_t ow = (shapes[s].w + 2 * shapes[s].pad - shapes[s].dilation * (shapes[s].kw - 1) - 1) /
                               shapes[s].stride + 1;
        a.output_dims = (ptec_nn_dims){shapes[s].n, oh, ow, shapes[s].e};
        const ptec_nn_per_channel_quant quant = {mult, shift};
        a.quant = a.expand_quant = quant;
        a.filter = filter;
        a.expand_filter = expand_filter;
        a.bias = bias;
        a.expand_bias = s % 2 == 0 ? expand_bias : NULL;
        for (size_t i = 0; i < sizeof input; ++i) input[i] = fused_random();
        for (size_t i = 0; i < sizeof expand_filter; ++i) expand_filter[i] = fused_random();
        for (size_t i = 0; i < sizeof filter; ++i) filter[i] = fused_random();
        const ptec_nn_dims e_dims = {shapes[s].n, shapes[s].h, shapes[s].w, shapes[s].e};
        const ptec_nn_buffer math_buf = {math, sizeof math};
        CHECK(ptec_nn_convolve_s8(math_buf, &a.expand_params, &quant, &a.input_dims, input, &a.expand_dims,
                                  expand_filter, a.expand_bias, &e_dims, expanded) == PTEC_OK);
        CHECK(ptec_nn_depthwise_conv_s8(math_buf, &a.params, 1, &quant, &e_dims, expanded, &a.filter_dims, filter,
                                        bias, &a.output_dims, want) == PTEC_OK);
        const uint32_t need = ptec_nn_expand_depthwise_s8_buffer_size(&a);
        CHECK(need > 0u && need <= sizeof scratch_buf);
        ptec_nn_buffer scratch = {scratch_buf, need};
        memset(got, 0x55, sizeof got);
        CHECK(ptec_nn_expand_depthwise_s8(scratch, &a, input, got) == PTEC_OK);
        const size_t out_bytes = (size_t)shapes[s].n * (size_t)oh * (size_t)ow * (size_t)shapes[s].e;
        CHECK_BYTES(got, want, out_bytes);
        CHECK(got[out_bytes] == 0x55); /* nothing past out */
        scratch.size = need - 1u;
        CHECK(ptec_nn_expand_depthwise_s8(scratch, &a, input, got) == PTEC_INVALID_ARGUMENT);
    }
    /* An out row reading only padding, an expansion with padding, a
     * depth multiplier other than 1: refused. */
    ptec_nn_expand_depthwise_args a;
    memset(&a, 0, sizeof a);
    a.input_dims = (ptec_nn_dims){1, 4, 4, 2};
    a.expand_dims = (ptec_nn_dims){4, 1, 1, 2};
    a.filter_dims = (ptec_nn_dims){1, 3, 3, 4};
    a.output_dims = (ptec_nn_dims){1, 4, 4, 4};
    a.expand_params = (ptec_nn_conv_params){{1, 1}, {0, 0}, {1, 1}, 0, 0, {-128, 127}};
    a.params = (ptec_nn_conv_params){{1, 1}, {1, 1}, {1, 1}, 0, 0, {-128, 127}};
    CHECK(ptec_nn_expand_depthwise_fits(&a));
    a.params.padding.h = 3;
    a.output_dims.h = 8;
    CHECK(!ptec_nn_expand_depthwise_fits(&a));
    CHECK(ptec_nn_expand_depthwise_s8_buffer_size(&a) == 0u);
    a.params.padding.h = 1;
    a.output_dims.h = 4;
    a.expand_params.padding.w = 1;
    CHECK(!ptec_nn_expand_depthwise_fits(&a));
    a.expand_params.padding.w = 0;
    a.output_dims.c = a.filter_dims.c = 8; /* E = 4 expanded channels, 8 out */
    CHECK(!ptec_nn_expand_depthwise_fits(&a));
}

int main(void)
{
    test_primitives();
    test_quantize();
    test_add_mul();
    test_div_lut();
    test_min_max();
    test_fully_connected();
    test_conv();
    test_packed_s4();
    test_depthwise_s4();
    test_depthwise();
    test_layer_norm();
    test_svdf();
    test_transpose_conv();
    test_batch_matmul();
    test_pools();
    test_softmax();
    test_softmax_masked();
    test_transpose_pad();
    test_a16();
    test_lstm();
    test_lstm_s16();
    test_in_place_refusals();
    test_expand_depthwise();
    if (failures != 0) {
        fprintf(stderr, "kernel_nn_unit_tests: %d check(s) failed\n", failures);
        return 1;
    }
    printf("kernel_nn_unit_tests: all checks passed\n");
    return 0;
}
