/* Which taps of a kernel axis fall inside the input, so that the conv and
 * pooling loops never test bounds per tap. */
#ifndef PTEC_NN_WINDOW_H
#define PTEC_NN_WINDOW_H

#include <stdint.h>

#include "ptec_nn.h"

/* Taps k in [*begin, *end) satisfy 0 <= start + k*dilation < size. */
static inline void ptec_nn_tap_range(int32_t start, int32_t dilation, int32_t kernel, int32_t size,
                                     int32_t *begin, int32_t *end)
{
    int32_t first = 0;
    int32_t last = kernel;
    if (start < 0) {
        first = (-start + dilation - 1) / dilation;
    }
    if (start + (kernel - 1) * dilation >= size) {
        const int32_t room = size - start; /* taps with k*dilation < room */
        last = room <= 0 ? 0 : (room + dilation - 1) / dilation;
    }
    *begin = first;
    *end = last > first ? last : first;
}

/* Pooling (no dilation): window `o` covers input positions [begin, end),
 * its start o * stride - padding clipped to the input [0, size). */
typedef struct ptec_nn_span {
    int32_t begin, end;
} ptec_nn_span;

static inline ptec_nn_span ptec_nn_pool_span(int32_t o, int32_t stride, int32_t padding, int32_t kernel,
                                             int32_t size)
{
    const int32_t start = o * stride - padding;
    const ptec_nn_span span = {start < 0 ? 0 : start, start + kernel < size ? start + kernel : size};
    return span;
}

/* The checks both pooling kernels make before any loop: N and C agree
 * and a non-empty output has its buffers. *empty: nothing to write. */
static inline ptec_status ptec_nn_pool_check(const ptec_nn_dims *in, const ptec_nn_dims *out, const void *input,
                                             const void *output, bool *empty)
{
    *empty = (size_t)out->n * (size_t)out->h * (size_t)out->w * (size_t)out->c == 0;
    if (in->n != out->n || in->c != out->c) {
        return PTEC_INVALID_ARGUMENT;
    }
    return *empty || (input != NULL && output != NULL) ? PTEC_OK : PTEC_INVALID_ARGUMENT;
}

/* The int16 average pool's window check, made before the window's outputs
 * are written: a window entirely in the padding is invalid, and one of
 * more than 2^16 positions (whose int32 sum could overflow) is not
 * supported. *count: its positions. */
static inline ptec_status ptec_nn_avgpool_s16_count(ptec_nn_span ys, ptec_nn_span xs, int32_t *count)
{
    if (ys.begin >= ys.end || xs.begin >= xs.end) {
        return PTEC_INVALID_ARGUMENT;
    }
    const int64_t positions = (int64_t)(ys.end - ys.begin) * (xs.end - xs.begin);
    if (positions > ((int64_t)1 << 16)) {
        return PTEC_NOT_SUPPORTED;
    }
    *count = (int32_t)positions;
    return PTEC_OK;
}

#endif
