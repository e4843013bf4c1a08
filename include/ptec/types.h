/* Values and tensors as the runtime holds them after load. Shapes and
 * dim orders point into the program bytes (zero copy); only the small
 * headers below live in the caller's metadata buffer, and a value header
 * only for the kinds a run reads (tensors, tensor lists, Bools): kernels'
 * prepare reads the others from headers that do not outlive it. */
#ifndef PTEC_TYPES_H
#define PTEC_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ptec/config.h"


/* Element types: the numbers are the .pte ScalarType codes. */
typedef enum ptec_dtype {
    PTEC_DTYPE_BYTE = 0,   /* uint8 */
    PTEC_DTYPE_CHAR = 1,   /* int8 */
    PTEC_DTYPE_SHORT = 2,  /* int16 */
    PTEC_DTYPE_INT = 3,    /* int32 */
    PTEC_DTYPE_LONG = 4,   /* int64 */
    PTEC_DTYPE_HALF = 5,
    PTEC_DTYPE_FLOAT = 6,
    PTEC_DTYPE_DOUBLE = 7,
    PTEC_DTYPE_BOOL = 11,
    PTEC_DTYPE_QINT8 = 12,
    PTEC_DTYPE_QUINT8 = 13,
    PTEC_DTYPE_QINT32 = 14,
    PTEC_DTYPE_BFLOAT16 = 15,
    PTEC_DTYPE_QUINT4X2 = 16,
    PTEC_DTYPE_QUINT2X4 = 17,
    PTEC_DTYPE_BITS16 = 22,
    PTEC_DTYPE_FLOAT8E5M2 = 23,
    PTEC_DTYPE_FLOAT8E4M3FN = 24,
    PTEC_DTYPE_FLOAT8E5M2FNUZ = 25,
    PTEC_DTYPE_FLOAT8E4M3FNUZ = 26,
    PTEC_DTYPE_UINT16 = 27,
    PTEC_DTYPE_UINT32 = 28,
    PTEC_DTYPE_UINT64 = 29
} ptec_dtype;

/* Bytes per element, or 0 for a code that is not a valid dtype. */
size_t ptec_dtype_size(int dtype);
/* "float32", "int8", ...; "invalid" for an unknown code. */
const char *ptec_dtype_name(int dtype);

enum {
    PTEC_TENSOR_CONSTANT = 1u << 0, /* data points into the program, read-only */
    PTEC_TENSOR_PLANNED = 1u << 1,  /* data lives in a planned buffer */
    PTEC_TENSOR_DYNAMIC = 1u << 2,  /* DYNAMIC_BOUND: sizes are an upper bound */
    PTEC_TENSOR_INITIAL = 1u << 3,  /* planned, with an initial value (state; see ptec_method_reset_state) */
    /* A loaded DYNAMIC tensor: `sizes` is a writable copy in the method's
     * metadata holding 2 * rank entries, the current sizes then the bound
     * (the program's sizes). ptec_tensor_resize changes the current ones. */
    PTEC_TENSOR_RESIZABLE = 1u << 4
};

typedef struct ptec_tensor {
    void *data;                 /* NULL until bound when neither constant nor planned */
    const int32_t *sizes;       /* rank entries, logical (PyTorch) order */
    const uint8_t *dim_order;   /* rank entries, outermost physical dim first */
    uint32_t numel;
    uint32_t nbytes;
    uint8_t dtype;              /* ptec_dtype */
    uint8_t rank;
    uint8_t flags;              /* PTEC_TENSOR_* */
} ptec_tensor;

typedef enum ptec_value_kind {
    PTEC_VALUE_NONE = 0,
    PTEC_VALUE_NULL = 1,
    PTEC_VALUE_INT = 2,
    PTEC_VALUE_BOOL = 3,
    PTEC_VALUE_DOUBLE = 4,
    PTEC_VALUE_TENSOR = 5,
    PTEC_VALUE_STRING = 6,
    PTEC_VALUE_INT_LIST = 7,
    PTEC_VALUE_DOUBLE_LIST = 8,
    PTEC_VALUE_BOOL_LIST = 9,
    PTEC_VALUE_TENSOR_LIST = 10,
    PTEC_VALUE_OPTIONAL_TENSOR_LIST = 11
} ptec_value_kind;

/* One EValue: 8 bytes on a 32-bit target. Nothing is copied out of the
 * program: scalars point at their little-endian bytes there (read them with
 * ptec_value_int/_double/_bool), lists point at their items. The numbers of
 * `kind` are the .pte KernelTypes union tags. INT_LIST items are
 * little-endian int64 *value indices* (boxed ints), DOUBLE_LIST items are
 * float64, BOOL_LIST items are bytes, TENSOR_LIST and OPTIONAL_TENSOR_LIST
 * items are int32 value indices (-1 = None). Kernels read arguments with
 * the accessors in kernel.h. */
typedef struct ptec_value {
    uint32_t kind : 8;
    uint32_t count : 24;         /* list length or string byte length */
    union {
        const uint8_t *scalar;   /* INT, DOUBLE: 8 bytes; BOOL: 1 byte */
        ptec_tensor *tensor;
        const char *string;      /* not NUL-terminated: use count */
        const uint8_t *items;
    } u;
} ptec_value;

#define PTEC_MAX_LIST_COUNT ((1u << 24) - 1u)

static inline int64_t ptec_value_int(const ptec_value *v)
{
    int64_t x;
    memcpy(&x, v->u.scalar, sizeof x);
    return x;
}

static inline double ptec_value_double(const ptec_value *v)
{
    double x;
    memcpy(&x, v->u.scalar, sizeof x);
    return x;
}

static inline bool ptec_value_bool(const ptec_value *v)
{
    return v->u.scalar[0] != 0;
}

/* Whether a tensor's bytes are laid out as in the dim order 0..rank-1. */
bool ptec_tensor_is_contiguous(const ptec_tensor *t);
/* Whether a 4-D tensor's bytes are NHWC: dim order [0,2,3,1], or C == 1,
 * or H == W == 1 (in the last two cases the layouts coincide). */
bool ptec_tensor_is_channels_last(const ptec_tensor *t);
/* Same dtype, rank and sizes. */
bool ptec_tensor_same_shape(const ptec_tensor *a, const ptec_tensor *b);
/* The bytes a tensor may ever hold: nbytes at its bound for a resizable one. */
uint32_t ptec_tensor_capacity(const ptec_tensor *t);

#endif
