#include "kernels/quantized/quant_params.h"

#include <string.h>

static bool integer_range(uint8_t dtype, int64_t *lo, int64_t *hi)
{
    switch (dtype) {
    case PTEC_DTYPE_BYTE: *lo = 0; *hi = UINT8_MAX; return true;
    case PTEC_DTYPE_CHAR: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case PTEC_DTYPE_SHORT: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case PTEC_DTYPE_BITS16: case PTEC_DTYPE_UINT16: *lo = 0; *hi = UINT16_MAX; return true;
    case PTEC_DTYPE_INT: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    default: return false;
    }
}

ptec_status ptec_quant_params_read(ptec_op *op, const ptec_tensor *q, quant_state *s)
{
    double scale;
    int64_t zp, dtype, lo, hi;
    ptec_status st;
    if ((st = ptec_op_get_double(op, 1, &scale)) != PTEC_OK || (st = ptec_op_get_int(op, 2, &zp)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 3, &s->qmin)) != PTEC_OK || (st = ptec_op_get_int(op, 4, &s->qmax)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 5, &dtype)) != PTEC_OK) {
        return st;
    }
    if (dtype != q->dtype) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 5, "dtype differs from the quantized tensor's dtype");
    }
    if (!integer_range(q->dtype, &lo, &hi)) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, 5, "quantized dtype must be uint8, int8, int16, uint16 or int32");
    }
    if (s->qmin < lo || s->qmax > hi || s->qmin > s->qmax) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 3, "quant_min/quant_max outside the dtype's range");
    }
    if (!(scale > 0.0) || zp < INT32_MIN || zp > INT32_MAX) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, "scale must be positive and zero_point fit int32");
    }
    s->scale = (float)scale;
    s->zero_point = (int32_t)zp;
    s->qdtype = q->dtype;
    s->numel = q->numel;
    return PTEC_OK;
}

int64_t ptec_quant_load(uint8_t dtype, const void *data, uint32_t i)
{
    const uint8_t *p = data;
    switch (dtype) {
    case PTEC_DTYPE_BYTE: return p[i];
    case PTEC_DTYPE_CHAR: return (int8_t)p[i];
    case PTEC_DTYPE_SHORT: { int16_t v; memcpy(&v, p + 2u * i, 2); return v; }
    case PTEC_DTYPE_INT: { int32_t v; memcpy(&v, p + 4u * i, 4); return v; }
    default: { uint16_t v; memcpy(&v, p + 2u * i, 2); return v; }
    }
}

void ptec_quant_store(uint8_t dtype, void *data, uint32_t i, int64_t v)
{
    uint8_t *p = data;
    switch (dtype) {
    case PTEC_DTYPE_BYTE: case PTEC_DTYPE_CHAR: p[i] = (uint8_t)v; break;
    case PTEC_DTYPE_INT: { uint32_t t = (uint32_t)v; memcpy(p + 4u * i, &t, 4); break; }
    default: { uint16_t t = (uint16_t)v; memcpy(p + 2u * i, &t, 2); break; }
    }
}
