/* SVDF with an int8 state (ptec_nn.h, docs/kernels.md "SVDF"): the numerics
 * of CMSIS-NN's arm_svdf_s8, the kernel TFLite Micro runs for an int8 SVDF
 * whose time weights are int8, applied to `frames` frames in turn.
 *
 * Bounds (the wrapper's checks, repeated here): input_size <= 2^16, so the
 * feature sum |sum (x + off) * w| <= 2^16 * 255 * 128 < 2^31; rank * memory
 * <= 2^16, so a unit's time sum |sum w_t * s| <= 2^16 * 2^14 = 2^30. Only
 * adding the bias can leave int32: it wraps, as the target's ADD does in
 * CMSIS-NN, here through uint32 so that C has no overflow. */
#include <string.h>

#include "ptec_nn.h"
#include "ptec_nn_math.h"

enum { MAX_INPUT = 1 << 16, MAX_TIME_TAPS = 1 << 16 };

uint32_t ptec_nn_svdf_s8_buffer_size(const ptec_nn_svdf_dims *dims, int32_t rank)
{
    if (dims == NULL || dims->units < 1 || rank < 1 || (int64_t)dims->units * rank > INT32_MAX / 4) {
        return 0;
    }
    return (uint32_t)(dims->units * rank) * 4u;
}

static ptec_status check(const ptec_nn_buffer *scratch, const ptec_nn_svdf_params *p, const ptec_nn_svdf_dims *d)
{
    if (p == NULL || d == NULL || scratch == NULL || d->frames < 0 || d->input_size < 1 ||
        d->input_size > MAX_INPUT || d->units < 1 || d->memory < 1 || p->rank < 1 ||
        (int64_t)p->rank * d->memory > MAX_TIME_TAPS || p->feature_quant.shift < -31 ||
        p->feature_quant.shift > 31 || p->output_quant.shift < -31 || p->output_quant.shift > 31 ||
        p->input_offset < -INT8_MAX || p->input_offset > -INT8_MIN || p->output_offset < INT8_MIN ||
        p->output_offset > INT8_MAX || p->state_activation.min > p->state_activation.max ||
        p->state_activation.min < INT8_MIN || p->state_activation.max > INT8_MAX ||
        p->activation.min > p->activation.max || p->activation.min < INT8_MIN || p->activation.max > INT8_MAX) {
        return PTEC_INVALID_ARGUMENT;
    }
    const uint32_t need = ptec_nn_svdf_s8_buffer_size(d, p->rank);
    if (need == 0 || scratch->buf == NULL || scratch->size < need ||
        (int64_t)d->units * p->rank > INT32_MAX / d->memory) {
        return PTEC_INVALID_ARGUMENT;
    }
    return PTEC_OK;
}

/* The feature filter of one frame into the state's newest column. */
static void feature_step(const ptec_nn_svdf_params *p, const ptec_nn_svdf_dims *d, int32_t rows, const int8_t *x,
                         const int8_t *weights_feature, int8_t *state)
{
    for (int32_t f = 0; f < rows; f++) {
        const int8_t *w = weights_feature + (size_t)f * (size_t)d->input_size;
        int32_t acc = 0;
        for (int32_t i = 0; i < d->input_size; i++) {
            acc += ((int32_t)x[i] + p->input_offset) * (int32_t)w[i];
        }
        state[(size_t)f * (size_t)d->memory + (size_t)(d->memory - 1)] =
            ptec_nn_requantize_s8(acc, p->feature_quant.multiplier, p->feature_quant.shift, 0,
                                  p->state_activation.min, p->state_activation.max);
    }
}

ptec_status ptec_nn_svdf_s8(const ptec_nn_buffer *scratch, const ptec_nn_svdf_params *params,
                            const ptec_nn_svdf_dims *dims, const int8_t *input, const int8_t *weights_feature,
                            const int8_t *weights_time, const int32_t *bias, int8_t *state, int8_t *output)
{
    ptec_status status = check(scratch, params, dims);
    if (status != PTEC_OK) {
        return status;
    }
    if (dims->frames == 0) {
        return PTEC_OK;
    }
    if (input == NULL || weights_feature == NULL || weights_time == NULL || state == NULL || output == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const int32_t rows = dims->units * params->rank;
    const size_t memory = (size_t)dims->memory;
    const size_t state_len = (size_t)rows * memory;
    int32_t *row_sums = (int32_t *)scratch->buf;
    for (int32_t t = 0; t < dims->frames; t++) {
        /* One column older: each row's values move one place to the front
         * (the last value of a row takes the next row's first, and is then
         * overwritten by the new column). */
        if (state_len > 1) {
            memmove(state, state + 1, state_len - 1);
        }
        feature_step(params, dims, rows, input + (size_t)t * (size_t)dims->input_size, weights_feature, state);
        for (int32_t f = 0; f < rows; f++) {
            const int8_t *s = state + (size_t)f * memory;
            const int8_t *w = weights_time + (size_t)f * memory;
            int32_t acc = 0;
            for (size_t m = 0; m < memory; m++) {
                acc += (int32_t)w[m] * (int32_t)s[m];
            }
            row_sums[f] = acc;
        }
        int8_t *out = output + (size_t)t * (size_t)dims->units;
        for (int32_t u = 0; u < dims->units; u++) {
            int32_t sum = 0;
            for (int32_t r = 0; r < params->rank; r++) {
                sum += row_sums[u * params->rank + r];
            }
            const uint32_t wrapped = (uint32_t)sum + (uint32_t)(bias != NULL ? bias[u] : 0);
            const int32_t v = wrapped > (uint32_t)INT32_MAX ? -(int32_t)(~wrapped) - 1 : (int32_t)wrapped;
            out[u] = ptec_nn_requantize_s8(v, params->output_quant.multiplier, params->output_quant.shift,
                                           params->output_offset, params->activation.min, params->activation.max);
        }
    }
    return PTEC_OK;
}
