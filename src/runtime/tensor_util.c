/* Element types, layout predicates and run-time sizes of bound-dynamic tensors. */
#include <string.h>

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

/* The names by code, in one string: "" for the codes ptec has no dtype for
 * (8-10: the complex types, 18-21). A table of pointers would take 4 bytes
 * a code; only error messages and tools read the names. */
static const char dtype_names[] =
    "uint8\0int8\0int16\0int32\0int64\0float16\0float32\0float64\0\0\0\0"         /* 0-10 */
    "bool\0qint8\0quint8\0qint32\0bfloat16\0quint4x2\0quint2x4\0\0\0\0\0"        /* 11-21 */
    "bits16\0float8_e5m2\0float8_e4m3fn\0float8_e5m2fnuz\0float8_e4m3fnuz\0" /* 22-26 */
    "uint16\0uint32\0uint64";                                              /* 27-29 */

const char *ptec_dtype_name(int dtype)
{
    if (dtype < 0 || dtype > PTEC_DTYPE_UINT64) {
        return "invalid";
    }
    const char *name = dtype_names;
    for (int i = 0; i < dtype; ++i) {
        name += strlen(name) + 1u;
    }
    return *name != '\0' ? name : "invalid";
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
