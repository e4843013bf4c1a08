/* Argument checks shared by quantized_decomposed::quantize/dequantize. */
#ifndef PTEC_KERNELS_QUANTIZED_QUANT_PARAMS_H
#define PTEC_KERNELS_QUANTIZED_QUANT_PARAMS_H

#include "ptec/kernel.h"

typedef struct quant_state {
    float scale;      /* dequantize: the scale; quantize: 1/scale in float32 */
    int32_t zero_point;
    int64_t qmin, qmax;
    uint8_t qdtype;   /* the integer side's dtype */
    uint32_t numel;
} quant_state;

/* Reads scale, zero_point, quant_min, quant_max, dtype (args 1..5) and checks
 * them against the integer tensor `q`. */
ptec_status ptec_quant_params_read(ptec_op *op, const ptec_tensor *q, quant_state *s);
int64_t ptec_quant_load(uint8_t dtype, const void *data, uint32_t i);
void ptec_quant_store(uint8_t dtype, void *data, uint32_t i, int64_t v);

#endif
