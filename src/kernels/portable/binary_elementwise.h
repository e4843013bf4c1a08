/* The engine behind aten::add/sub/mul/div.out: NumPy broadcasting over
 * logical indices, with each tensor addressed through its own dim order. */
#ifndef PTEC_KERNELS_PORTABLE_BINARY_ELEMENTWISE_H
#define PTEC_KERNELS_PORTABLE_BINARY_ELEMENTWISE_H

#include "ptec/kernel.h"

typedef enum binary_kind { BINARY_ADD, BINARY_SUB, BINARY_MUL, BINARY_DIV } binary_kind;

typedef struct binary_state {
    uint8_t kind;        /* binary_kind */
    uint8_t dtype;
    uint8_t rank;        /* output rank */
    uint8_t flat;        /* 1: same layout everywhere, 2: other is one element */
    uint32_t numel;
    double alpha;        /* add and sub only */
    int64_t alpha_int;
} binary_state;          /* broadcast strides are derived at run time, kept off the metadata */

/* self = arg 0, other = arg 1, out = argc - 2; alpha_arg < 0 for none. */
ptec_status ptec_binary_prepare(ptec_op *op, binary_kind kind, int alpha_arg);
ptec_status ptec_binary_run(ptec_op *op);

#endif
