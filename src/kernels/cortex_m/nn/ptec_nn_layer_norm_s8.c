/* int8 layer norm in integers only (ptec_nn.h, docs/kernels.md "int8 layer
 * norm"). CMSIS-NN has no layer norm; this is ptec's own, so that a
 * transformer's norms need no float round trip.
 *
 * Bounds: |d| <= 255 and row_size <= 2^16, so s1 fits 2^24, s2 and
 * row_size * s2 fit 2^40, V < 2^41 + eps_term, r < 2^31, and
 * |row_size * d - s1| < 2^25: its Q16 form fits int64 and the quotient
 * |(row_size * d - s1) / r| <= sqrt(row_size) * 2^16 fits int32. */
#include "ptec_nn.h"
#include "ptec_nn_math.h"

enum { Q = 16, MAX_ROW = 1 << 16 };

/* floor(sqrt(v)) for v < 2^62, one result bit per step. */
static uint32_t isqrt64(uint64_t v)
{
    uint64_t root = 0;
    for (uint64_t bit = (uint64_t)1 << 62; bit != 0; bit >>= 2) {
        if (v >= root + bit) {
            v -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
    }
    return (uint32_t)root;
}

ptec_status ptec_nn_layer_norm_s8(const int8_t *input, int32_t rows, int32_t row_size,
                                  const ptec_nn_layer_norm_params *params, const int32_t *multipliers,
                                  const int32_t *shifts, const int32_t *bias, int8_t *output)
{
    if (params == NULL || rows < 0 || row_size < 1 || row_size > MAX_ROW || params->eps_term < 0 ||
        params->eps_term > ((int64_t)1 << 60)) {
        return PTEC_INVALID_ARGUMENT;
    }
    if (rows == 0) {
        return PTEC_OK;
    }
    if (input == NULL || output == NULL || multipliers == NULL || shifts == NULL || bias == NULL) {
        return PTEC_INVALID_ARGUMENT;
    }
    const int32_t zp = params->input_zero_point;
    const int64_t n = row_size;
    for (int32_t row = 0; row < rows; ++row) {
        const int8_t *x = input + (size_t)row * (size_t)row_size;
        int8_t *y = output + (size_t)row * (size_t)row_size;
        int64_t s1 = 0, s2 = 0;
        for (int32_t i = 0; i < row_size; ++i) {
            const int64_t d = (int64_t)x[i] - zp;
            s1 += d;
            s2 += d * d;
        }
        /* n * s2 >= s1^2 (Cauchy-Schwarz), so V >= eps_term >= 0. */
        const uint64_t v = (uint64_t)(n * s2 - s1 * s1 + params->eps_term);
        const int64_t r = v == 0 ? 1 : (int64_t)isqrt64(v);
        for (int32_t i = 0; i < row_size; ++i) {
            const int64_t num = (n * ((int64_t)x[i] - zp) - s1) * ((int64_t)1 << Q);
            /* round half away from zero; C division truncates */
            const int64_t t = (num >= 0 ? num + r / 2 : num - r / 2) / r;
            const int32_t q = ptec_nn_requantize((int32_t)t, multipliers[i], shifts[i]);
            const int64_t total = (int64_t)q + bias[i] + params->output_offset;
            y[i] = (int8_t)(total < params->activation.min   ? params->activation.min
                            : total > params->activation.max ? params->activation.max
                                                             : total);
        }
    }
    return PTEC_OK;
}
