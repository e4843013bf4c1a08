/* Element types, layout predicates and run-time sizes of bound-dynamic tensors. */
#include "ptec/kernel.h"
#include "runtime/checked_math.h"

size_t ptec_dtype_size(int dtype)
{
    switch (dtype) {
    case PTEC_DTYPE_BYTE: case PTEC_DTYPE_CHAR: case PTEC_DTYPE_BOOL: case PTEC_DTYPE_QINT8:
    case PTEC_DTYPE_QUINT8: case PTEC_DTYPE_QUINT4X2: case PTEC_DTYPE_QUINT2X4:
    case PTEC_DTYPE_FLOAT8E5M2: case PTEC_DTYPE_FLOAT8E4M3FN: case PTEC_DTYPE_FLOAT8E5M2FNUZ:
    case PTEC_DTYPE_FLOAT8E4M3FNUZ:
        return 1;
    case PTEC_DTYPE_SHORT: case PTEC_DTYPE_HALF: case PTEC_DTYPE_BFLOAT16: case PTEC_DTYPE_BITS16:
    case PTEC_DTYPE_UINT16:
        return 2;
    case PTEC_DTYPE_INT: case PTEC_DTYPE_FLOAT: case PTEC_DTYPE_QINT32: case PTEC_DTYPE_UINT32:
        return 4;
    case PTEC_DTYPE_LONG: case PTEC_DTYPE_DOUBLE: case PTEC_DTYPE_UINT64:
        return 8;
    default:
        return 0;
    }
}

const char *ptec_dtype_name(int dtype)
{
    switch (dtype) {
    case PTEC_DTYPE_BYTE: return "uint8";
    case PTEC_DTYPE_CHAR: return "int8";
    case PTEC_DTYPE_SHORT: return "int16";
    case PTEC_DTYPE_INT: return "int32";
    case PTEC_DTYPE_LONG: return "int64";
    case PTEC_DTYPE_HALF: return "float16";
    case PTEC_DTYPE_FLOAT: return "float32";
    case PTEC_DTYPE_DOUBLE: return "float64";
    case PTEC_DTYPE_BOOL: return "bool";
    case PTEC_DTYPE_QINT8: return "qint8";
    case PTEC_DTYPE_QUINT8: return "quint8";
    case PTEC_DTYPE_QINT32: return "qint32";
    case PTEC_DTYPE_BFLOAT16: return "bfloat16";
    case PTEC_DTYPE_QUINT4X2: return "quint4x2";
    case PTEC_DTYPE_QUINT2X4: return "quint2x4";
    case PTEC_DTYPE_BITS16: return "bits16";
    case PTEC_DTYPE_FLOAT8E5M2: return "float8_e5m2";
    case PTEC_DTYPE_FLOAT8E4M3FN: return "float8_e4m3fn";
    case PTEC_DTYPE_FLOAT8E5M2FNUZ: return "float8_e5m2fnuz";
    case PTEC_DTYPE_FLOAT8E4M3FNUZ: return "float8_e4m3fnuz";
    case PTEC_DTYPE_UINT16: return "uint16";
    case PTEC_DTYPE_UINT32: return "uint32";
    case PTEC_DTYPE_UINT64: return "uint64";
    default: return "invalid";
    }
}

bool ptec_tensor_is_contiguous(const ptec_tensor *t)
{
    /* Size-1 dimensions can sit anywhere in the order without moving bytes. */
    int last = -1;
    for (uint8_t i = 0; i < t->rank; ++i) {
        uint8_t axis = t->dim_order[i];
        if (t->sizes[axis] == 1) {
            continue;
        }
        if ((int)axis < last) {
            return false;
        }
        last = axis;
    }
    return true;
}

bool ptec_tensor_is_channels_last(const ptec_tensor *t)
{
    if (t->rank != 4) {
        return false;
    }
    if (t->sizes[1] == 1 || (t->sizes[2] == 1 && t->sizes[3] == 1)) {
        return true;
    }
    return t->dim_order[0] == 0 && t->dim_order[1] == 2 && t->dim_order[2] == 3 && t->dim_order[3] == 1;
}

bool ptec_tensor_same_shape(const ptec_tensor *a, const ptec_tensor *b)
{
    if (a->rank != b->rank) {
        return false;
    }
    for (uint8_t i = 0; i < a->rank; ++i) {
        if (a->sizes[i] != b->sizes[i]) {
            return false;
        }
    }
    return true;
}

uint32_t ptec_tensor_capacity(const ptec_tensor *t)
{
    if (!(t->flags & PTEC_TENSOR_RESIZABLE)) {
        return t->nbytes;
    }
    /* The bound's product was checked to fit in uint32 when the program was decoded. */
    uint64_t n = ptec_dtype_size(t->dtype);
    for (uint8_t d = 0; d < t->rank; ++d) {
        n *= (uint64_t)t->sizes[t->rank + d];
    }
    return (uint32_t)n;
}

ptec_status ptec_tensor_resize(ptec_tensor *t, const int32_t *sizes, size_t rank)
{
    if (t == NULL || !(t->flags & PTEC_TENSOR_RESIZABLE) || rank != t->rank || (sizes == NULL && rank > 0)) {
        return PTEC_INVALID_ARGUMENT;
    }
    int32_t *current = (int32_t *)(uintptr_t)t->sizes; /* the method's writable copy */
    uint64_t numel = 1, nbytes;
    for (size_t d = 0; d < rank; ++d) {
        if (sizes[d] < 0 || sizes[d] > current[rank + d] ||
            !ptec_mul_u64(numel, (uint64_t)sizes[d], UINT32_MAX, &numel)) {
            return PTEC_INVALID_ARGUMENT;
        }
    }
    if (!ptec_mul_u64(numel, ptec_dtype_size(t->dtype), UINT32_MAX, &nbytes)) {
        return PTEC_INVALID_ARGUMENT;
    }
    for (size_t d = 0; d < rank; ++d) {
        current[d] = sizes[d];
    }
    t->numel = (uint32_t)numel;
    t->nbytes = (uint32_t)nbytes;
    return PTEC_OK;
}
