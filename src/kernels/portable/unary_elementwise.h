/* The engine behind the element-wise activations (relu, sigmoid, tanh,
 * clamp, hardtanh) and the float32 math of one tensor (exp, log, sin, ...,
 * op_float_unary_math.c): out has self's sizes, each tensor is addressed
 * through its own dim order. */
#ifndef PTEC_KERNELS_PORTABLE_UNARY_ELEMENTWISE_H
#define PTEC_KERNELS_PORTABLE_UNARY_ELEMENTWISE_H

#include "ptec/kernel.h"

typedef enum unary_kind {
    UNARY_CLAMP, UNARY_SIGMOID, UNARY_TANH,
    UNARY_MATH    /* float32 math (op_float_unary_math.c): run by ptec_unary_run_float with its own function */
} unary_kind;

typedef struct unary_state {
    uint8_t kind;    /* unary_kind; relu and hardtanh are clamps */
    uint8_t dtype;
    uint8_t rank;
    uint8_t flat;    /* self and out share one layout */
    uint8_t has_lo, has_hi;
    uint32_t numel;
    float lo, hi;    /* float32 bounds */
    int32_t lo_int, hi_int; /* integer bounds, saturated to the dtype */
} unary_state;

/* Checks self (arg 0) and out, fills the state; bounds are set after by the
 * caller through ptec_unary_set_bounds. */
ptec_status ptec_unary_prepare(ptec_op *op, unary_kind kind, size_t argc);
/* lo/hi NULL for an open end. Fails for a non-integral bound on an integer tensor. */
ptec_status ptec_unary_set_bounds(ptec_op *op, int lo_arg, const double *lo, int hi_arg, const double *hi);
ptec_status ptec_unary_run(ptec_op *op);

/* A float32 function of one value. */
typedef float (*ptec_float_fn)(float);
/* run() of a float32 math kernel (prepared as UNARY_MATH): out = fn(self)
 * element by element in each tensor's layout, every NaN result the one
 * quiet NaN 0x7FC00000. Each kernel passes its own function, so a build
 * links the libm functions of the kernels it keeps, not all of them. */
ptec_status ptec_unary_run_float(ptec_op *op, ptec_float_fn fn);

#endif
