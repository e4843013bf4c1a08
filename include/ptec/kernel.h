/* The interface between the runtime and an operator implementation.
 *
 * Each operator is a ptec_kernel in a static table. At load time the
 * runtime calls prepare() once per instruction: it checks the arguments,
 * fills the op's private state (state_size bytes) and sets scratch_bytes.
 * At execute time run() does only the math. run() may read only its
 * Tensor, TensorList and OptionalTensorList arguments (and whether a Tensor?
 * argument is None): the method keeps no other value after the load, so
 * any other argument reads as None by then. Keep what prepare read from
 * ints, doubles, bools and lists in the op's state.
 *
 * prepare() is also called once before any memory exists, to compute the
 * method's exact requirements. In that call planned tensors have
 * data == NULL and state points to a temporary buffer: prepare must not read
 * planned tensor data, and must be deterministic. */
#ifndef PTEC_KERNEL_H
#define PTEC_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "ptec/config.h"
#include "ptec/status.h"
#include "ptec/types.h"


/* Error-message strings cost flash. A build with PTEC_ERROR_MESSAGES=0 keeps
 * status codes, instruction indices and operator names, and drops the prose:
 * wrap every message literal in PTEC_MSG(). */
#if PTEC_ERROR_MESSAGES
#define PTEC_MSG(text) (text)
#else
#define PTEC_MSG(text) ("")
#endif

typedef struct ptec_op ptec_op;
struct ptec_exec_ctx; /* runtime-private */

typedef struct ptec_kernel {
    const char *name; /* "namespace::op.overload", e.g. "aten::add.out" */
    /* The state's bytes, optionally | PTEC_PREPARED_ARGS(bits): read both
     * through the macros below. */
    uint32_t state_size;
    ptec_status (*prepare)(ptec_op *op);
    ptec_status (*run)(ptec_op *op);
} ptec_kernel;

/* Optional, in a kernel's state_size (bits 16 to 31). Bit i (i < 16): run()
 * never reads argument i; prepare kept what the run needs of it (a
 * tensor's data pointer) in the state. The load then keeps no header for a
 * value that only such arguments name (a constant weight, say) and points
 * the argument at an inert None (or Null) once prepare returns. Such an
 * argument must be a constant or planned tensor, an empty one or a Null:
 * the load refuses a caller-bound input or output there, whose data
 * pointer changes after the load, and a MoveCall's destination (the run
 * would not see the move). A bit at or past the call's argument count is
 * refused at load. Kernels without it: every argument as before. */
#define PTEC_PREPARED_ARGS(bits) ((uint32_t)(bits) << 16)
#define PTEC_KERNEL_STATE_BYTES(k) ((k)->state_size & 0xFFFFu)
#define PTEC_KERNEL_PREPARED_ARGS(k) ((k)->state_size >> 16)
/* The state's bytes share state_size with those bits: config.h may raise
 * the limit, never past the low 16 bits. */
_Static_assert(PTEC_MAX_KERNEL_STATE <= 0xFFFFu, "PTEC_MAX_KERNEL_STATE must fit in state_size's low 16 bits");

struct ptec_op {
    ptec_value *const *argv;  /* argc values, in schema order, then out, then the return slot */
    void *state;              /* state_size bytes, 8-byte aligned */
    void *scratch;            /* at run: scratch_bytes of temporary memory, or NULL */
    uint32_t scratch_bytes;   /* prepare sets it; contents do not survive between ops */
    uint16_t argc;
    const ptec_kernel *kernel;
    struct ptec_exec_ctx *ctx;
};

/* Records why prepare or run failed (in the method's error detail: ptec_method_error)
 * and returns `status`. `arg` is the argument index, or -1 for none.
 * `message` must be a string literal or otherwise outlive the call. */
ptec_status ptec_op_fail(ptec_op *op, ptec_status status, int arg, const char *message);

/* Checked argument access for prepare(). Each fails with a detail naming
 * the argument when its kind is wrong. */
ptec_status ptec_op_expect_argc(ptec_op *op, size_t argc);
ptec_status ptec_op_get_tensor(ptec_op *op, size_t i, ptec_tensor **out);
/* A Null argument gives *out = NULL. */
ptec_status ptec_op_get_optional_tensor(ptec_op *op, size_t i, ptec_tensor **out);
/* The out tensor at argc-2; checks that the return slot repeats it. */
ptec_status ptec_op_get_out(ptec_op *op, ptec_tensor **out);
ptec_status ptec_op_get_int(ptec_op *op, size_t i, int64_t *out);
/* Like get_int, and fails unless the value fits in int32. */
ptec_status ptec_op_get_int32(ptec_op *op, size_t i, int32_t *out);
ptec_status ptec_op_get_double(ptec_op *op, size_t i, double *out);
ptec_status ptec_op_get_bool(ptec_op *op, size_t i, bool *out);
/* A Double or an Int, as a double (PyTorch "Scalar" arguments). */
ptec_status ptec_op_get_scalar(ptec_op *op, size_t i, double *out);
/* Resolves a (boxed) int list into out[0..*count). Fails when it holds more
 * than `max` items, or when an item is not an Int value. A Null argument
 * gives *count = 0 only when allow_null is true. */
ptec_status ptec_op_get_int_list(ptec_op *op, size_t i, int64_t *out, size_t max,
                                 size_t *count, bool allow_null);
/* Int list whose items must fit in int32. */
ptec_status ptec_op_get_int32_list(ptec_op *op, size_t i, int32_t *out, size_t max,
                                   size_t *count, bool allow_null);
/* An OptionalTensorList argument (aten::index's indices, Tensor?[]): its
 * length, and item j as a tensor or NULL for None (decoded into *temp while
 * measuring, as ptec_op_get_tensor_list_item). */
ptec_status ptec_op_get_optional_tensor_list(ptec_op *op, size_t i, size_t *count);
ptec_status ptec_op_get_optional_tensor_list_item(ptec_op *op, size_t i, size_t j, ptec_tensor *temp,
                                                  ptec_tensor **out);
/* Whether argument i is Null (None). */
bool ptec_op_arg_is_null(const ptec_op *op, size_t i);
/* A TensorList argument (aten::cat's inputs, a multi-output call's return
 * slot): its length. */
ptec_status ptec_op_get_tensor_list(ptec_op *op, size_t i, size_t *count);
/* Item j of TensorList argument i, checked to be a tensor. While the method's
 * requirements are measured there are no loaded values yet: the item is then
 * decoded into *temp, so the pointer is valid as long as temp is. */
ptec_status ptec_op_get_tensor_list_item(ptec_op *op, size_t i, size_t j, ptec_tensor *temp,
                                         ptec_tensor **out);

/* Fast access for run(): no checks, prepare already made them. */
static inline ptec_tensor *ptec_op_tensor(const ptec_op *op, size_t i)
{
    return op->argv[i]->u.tensor;
}

/* For run() of a kernel whose out is bound-dynamic (aten::masked_select):
 * sets a resizable tensor's current sizes (same rank, each between 0 and
 * its bound) and recomputes numel and nbytes. PTEC_INVALID_ARGUMENT for a
 * tensor that is not resizable (static, or decoded while measuring), another
 * rank or a size past the bound; the tensor is then unchanged. */
ptec_status ptec_tensor_resize(ptec_tensor *t, const int32_t *sizes, size_t rank);

/* Item j of TensorList (or OptionalTensorList) argument i, for run(): no
 * checks, prepare made them (an optional item must not be None). */
ptec_tensor *ptec_op_tensor_list_item(const ptec_op *op, size_t i, size_t j);

/* The static operator table (all built-in kernels, or the selection a
 * build made). */
size_t ptec_kernel_count(void);
const ptec_kernel *ptec_kernel_at(size_t index);
/* Looks a kernel up by its full name; NULL when the build lacks it. */
const ptec_kernel *ptec_kernel_find(const char *name, size_t name_len);
/* The same for "name" + "." + "overload" given apart (as a program names
 * its operators), or just "name" when overload_len is 0. */
const ptec_kernel *ptec_kernel_find_overload(const char *name, size_t name_len, const char *overload,
                                             size_t overload_len);

#endif
