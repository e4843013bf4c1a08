/* Fuzz target for the NPU model's weight path: mlw_decode (Vela's compressed
 * weight streams) and npu_weights_unpack (brick order -> dense weights).
 *
 * Input: an 8-byte layout header, then the weight stream.
 *   bytes 0-1  OFM depth - 1 (LE, mod 4096)   bytes 2-3  IFM depth - 1 (LE, mod 4096)
 *   byte 4     kernel height - 1 (mod 10)     byte 5     kernel width - 1 (mod 10)
 *   byte 6     OFM block depth - 1 (mod 128)
 *   byte 7     [0] depthwise, [1] part-kernel-first, [2] 16-bit IFM,
 *              [3] dilation x 2, [4] dilation y 2, [5] OFM micro-block 4 (u55-32)
 * Any input must end in a clean 0 or -1 (ASan/UBSan watch every access);
 * the stream is handed over as an exact-size copy so an over-read shows.
 *
 * Built as the libFuzzer binary fuzz_mlw (fuzz preset) and as fuzz_mlw_replay
 * (every preset), which runs the seeds written by make_mlw_seeds.py (every
 * weight stream of person_detect_vela.tflite with its layout) under ctest. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlw_decode.h"
#include "npu_weights.h"

int fuzz_mlw_run(const uint8_t *data, size_t size);

#define HEADER_BYTES 8u
#define VALUE_CAP (1u << 22)

static int16_t dense[1u << 22]; /* larger layouts are refused ("no room") */

static int count_value(void *user, int32_t value)
{
    size_t *n = (size_t *)user;
    if (value < -255 || value > 255 || *n == VALUE_CAP) {
        return -1;
    }
    (*n)++;
    return 0;
}

/* 0: the stream decoded into the layout's weights; -1: a clean refusal */
int fuzz_mlw_run(const uint8_t *data, size_t size)
{
    if (size < HEADER_BYTES) {
        return -1;
    }
    npu_weight_layout l;
    memset(&l, 0, sizeof(l));
    uint32_t flags = data[7];
    l.ofm_depth = 1u + ((uint32_t)data[0] | (uint32_t)data[1] << 8) % 4096u;
    l.depthwise = flags & 1u;
    l.part_kernel_first = l.depthwise ? 0u : (flags >> 1) & 1u;
    l.ifm_depth = l.depthwise ? 1u : 1u + ((uint32_t)data[2] | (uint32_t)data[3] << 8) % 4096u;
    l.kernel_height = 1u + data[4] % 10u;
    l.kernel_width = 1u + data[5] % 10u;
    l.ofm_block_depth = 1u + data[6] % 128u;
    l.ifm_bits = (flags & 4u) ? 16u : 8u;
    l.sub_kernel_width = (flags & 8u) ? 4u : 8u;
    l.sub_kernel_height = (flags & 16u) ? 4u : 8u;
    l.ofm_ublock_depth = (flags & 32u) ? 4u : 8u;
    l.ifm_ublock_depth = 8u;

    size_t length = size - HEADER_BYTES;
    uint8_t *stream = (uint8_t *)malloc(length ? length : 1u);
    if (stream == NULL) {
        return -1;
    }
    memcpy(stream, data + HEADER_BYTES, length);
    size_t values = 0;
    const char *detail = NULL;
    int decoded = mlw_decode(stream, length, count_value, &values, NULL, &detail);
    if (decoded != 0 && detail == NULL) {
        abort(); /* every refusal names its reason */
    }
    int rc = npu_weights_unpack(&l, stream, length, dense, sizeof(dense) / sizeof(dense[0]), &detail);
    free(stream);
    return rc;
}
