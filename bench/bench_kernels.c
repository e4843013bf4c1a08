/* Runs one DS-CNN keyword-spotting layer (or the whole network) of the
 * cortex_m math layer RUNS times inside bench_region(), so that callgrind
 * can count exactly the instructions the kernels execute
 * (bench/kernels_callgrind.sh). Shapes: /work/shared/targets/qemu.md.
 * Inputs and weights come from a fixed generator; per-channel
 * requantization as a real model has. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptec_nn.h"

enum { CH = 64, IN_H = 49, IN_W = 10, OUT_H = 25, OUT_W = 5, CLASSES = 12, BLOCKS = 4 };

static uint32_t seed = 12345u;

static int8_t random_i8(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (int8_t)(seed >> 24);
}

static void fill(int8_t *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        p[i] = random_i8();
    }
}

/* Weights and quantization of the network, built once. */
static int8_t first_w[10 * 4 * CH], first_w_ohwi[CH * 10 * 4];
static int8_t dw_w[BLOCKS][3 * 3 * CH], pw_w[BLOCKS][CH * CH], fc_w[CLASSES * CH];
static int32_t bias[CH], fc_bias[CLASSES], mults[CH], shifts[CH];
static int8_t input[IN_H * IN_W], act_a[OUT_H * OUT_W * CH], act_b[OUT_H * OUT_W * CH], pooled[CH],
    logits[CLASSES];

static void setup(void)
{
    fill(first_w, sizeof first_w);
    for (int o = 0; o < CH; ++o) { /* the same filter as OHWI [64,10,4,1] */
        for (int t = 0; t < 40; ++t) {
            first_w_ohwi[o * 40 + t] = first_w[t * CH + o];
        }
    }
    for (int b = 0; b < BLOCKS; ++b) {
        fill(dw_w[b], sizeof dw_w[b]);
        fill(pw_w[b], sizeof pw_w[b]);
    }
    fill(fc_w, sizeof fc_w);
    fill(input, sizeof input);
    fill(act_a, sizeof act_a);
    for (int c = 0; c < CH; ++c) {
        bias[c] = (int32_t)random_i8() * 16;
        mults[c] = 1300000000 + (int32_t)random_i8() * 2000000;
        shifts[c] = -8 - (c & 1);
    }
    for (int c = 0; c < CLASSES; ++c) {
        fc_bias[c] = (int32_t)random_i8() * 4;
    }
}

static const ptec_nn_per_channel_quant quant = {mults, shifts};
static uint32_t conv_scratch_words[CH];
static const ptec_nn_buffer conv_scratch = {conv_scratch_words, sizeof conv_scratch_words};
static const ptec_nn_dims image_dims = {1, OUT_H, OUT_W, CH};

static ptec_status first_layer_depthwise(void) /* how the lowering emits it: Cin 1, dm 64 */
{
    const ptec_nn_conv_params p = {{2, 2}, {5, 1}, {1, 1}, -3, -128, {-128, 127}};
    const ptec_nn_dims in = {1, IN_H, IN_W, 1}, f = {1, 10, 4, CH};
    return ptec_nn_depthwise_conv_s8(conv_scratch, &p, CH, &quant, &in, input, &f, first_w, bias, &image_dims,
                                     act_a);
}

static ptec_status first_layer_conv(void) /* the same layer as an ordinary conv */
{
    const ptec_nn_conv_params p = {{2, 2}, {5, 1}, {1, 1}, -3, -128, {-128, 127}};
    const ptec_nn_dims in = {1, IN_H, IN_W, 1}, f = {CH, 10, 4, 1};
    return ptec_nn_convolve_s8(conv_scratch, &p, &quant, &in, input, &f, first_w_ohwi, bias, &image_dims, act_a);
}

static ptec_status depthwise(const int8_t *x, const int8_t *w, int8_t *y)
{
    const ptec_nn_conv_params p = {{1, 1}, {1, 1}, {1, 1}, 128, -128, {-128, 127}};
    const ptec_nn_dims f = {1, 3, 3, CH};
    return ptec_nn_depthwise_conv_s8(conv_scratch, &p, 1, &quant, &image_dims, x, &f, w, bias, &image_dims, y);
}

static ptec_status pointwise(const int8_t *x, const int8_t *w, int8_t *y)
{
    const ptec_nn_conv_params p = {{1, 1}, {0, 0}, {1, 1}, 128, -128, {-128, 127}};
    const ptec_nn_dims f = {CH, 1, 1, CH};
    return ptec_nn_convolve_s8(conv_scratch, &p, &quant, &image_dims, x, &f, w, bias, &image_dims, y);
}

static ptec_status average_pool(void)
{
    const ptec_nn_pool_params p = {{OUT_H, OUT_W}, {OUT_H, OUT_W}, {0, 0}, {-128, 127}};
    const ptec_nn_dims out = {1, 1, 1, CH};
    static uint8_t scratch[4 * CH];
    ptec_nn_buffer buffer = {scratch, ptec_nn_avgpool_s8_buffer_size(&image_dims)};
    return ptec_nn_avgpool_s8(buffer, &p, &image_dims, act_a, &out, pooled);
}

static ptec_status fully_connected(void)
{
    const ptec_nn_fc_params p = {128, 0, 23, {1500406475, -8}, {-128, 127}};
    const ptec_nn_fc_dims d = {1, CH, CLASSES};
    return ptec_nn_fully_connected_s8(&p, &d, pooled, fc_w, fc_bias, NULL, logits);
}

static ptec_status network(void)
{
    ptec_status s = first_layer_depthwise();
    for (int b = 0; b < BLOCKS && s == PTEC_OK; ++b) {
        s = depthwise(act_a, dw_w[b], act_b);
        if (s == PTEC_OK) {
            s = pointwise(act_b, pw_w[b], act_a);
        }
    }
    if (s == PTEC_OK) {
        s = average_pool();
    }
    return s == PTEC_OK ? fully_connected() : s;
}

typedef ptec_status (*layer_fn)(void);

static ptec_status dw_layer(void)
{
    return depthwise(act_a, dw_w[0], act_b);
}

static ptec_status pw_layer(void)
{
    return pointwise(act_a, pw_w[0], act_b);
}

/* The region callgrind counts (--toggle-collect=bench_region). */
__attribute__((noinline)) ptec_status bench_region(layer_fn fn, long runs);
__attribute__((noinline)) ptec_status bench_region(layer_fn fn, long runs)
{
    ptec_status s = PTEC_OK;
    for (long r = 0; r < runs && s == PTEC_OK; ++r) {
        s = fn();
    }
    return s;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        layer_fn fn;
    } layers[] = {{"conv", first_layer_depthwise}, {"conv_as_conv2d", first_layer_conv}, {"dw", dw_layer},
                  {"pw", pw_layer},  {"pool", average_pool}, {"fc", fully_connected}, {"network", network}};
    if (argc < 3) {
        fprintf(stderr, "usage: bench_kernels conv|conv_as_conv2d|dw|pw|pool|fc|network RUNS\n");
        return 2;
    }
    setup();
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; ++i) {
        if (strcmp(argv[1], layers[i].name) == 0) {
            const ptec_status s = bench_region(layers[i].fn, strtol(argv[2], NULL, 10));
            printf("%s: status %d, checksum %d\n", argv[1], (int)s, logits[0] + act_a[7] + act_b[9] + pooled[3]);
            return s == PTEC_OK ? 0 : 1;
        }
    }
    fprintf(stderr, "unknown layer %s\n", argv[1]);
    return 2;
}
