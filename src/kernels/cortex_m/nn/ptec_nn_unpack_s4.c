/* Packed 4-bit elements to int8 bytes (ptec_nn_s4.h), for the kernels
 * whose DSP and Helium loops read int8 weights (ptec_nn_depthwise_conv_s4).
 * Helium: sixteen elements per step, unpacked in registers by
 * ptec_nn_load_s4x16_mve and stored under a tail predicate; elsewhere one
 * byte (two elements) at a time. */
#include "ptec_nn_isa.h"
#include "ptec_nn_s4.h"

#if defined(PTEC_NN_MVE)
#include "ptec_nn_mve.h"
#endif

void ptec_nn_unpack_s4(const int8_t *packed, size_t n, int8_t *out)
{
    size_t i = 0;
#if defined(PTEC_NN_MVE)
    for (; i < n; i += 16) {
        const uint32_t count = n - i < 16 ? (uint32_t)(n - i) : 16u;
        vstrbq_p_s8(out + i, ptec_nn_load_s4x16_mve(packed, i, count), vctp8q(count));
    }
#else
    for (; i + 1 < n; i += 2) {
        const uint32_t byte = (uint8_t)packed[i >> 1];
        out[i] = (int8_t)((int32_t)((byte & 0xFu) ^ 8u) - 8);
        out[i + 1] = (int8_t)((int32_t)((byte >> 4) ^ 8u) - 8);
    }
    if (i < n) {
        out[i] = (int8_t)ptec_nn_s4_at(packed, i);
    }
#endif
}
