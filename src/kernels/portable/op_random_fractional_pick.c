/* ptec::random_fractional_pick.out(Tensor windows, int[] kernel_size,
 *     int seed, Tensor(a!) out)
 *
 * The last step of nn.FractionalMaxPool2d / 3d without _random_samples:
 * windows[n, c, a, b] (2-D; [n, c, t, a, b] in 3-D) holds the max of the
 * kernel-sized window starting at (a, b) of the input (stride-1 max pools
 * made it), so the input is windows' size + kernel - 1 along each spatial
 * dim. Per (n, c) plane, in row-major order, the kernel draws that plane's
 * samples as torch does (torch.rand(N, C, dims)): sample[0] for W and [1]
 * for H in 2-D, sample[0] T, [1] H, [2] W in 3-D, then starts the windows
 * along a dim of input size n, kernel k and output size m at
 * int((i + u) * alpha) - int(u * alpha), alpha = (n - k) / (m - 1), for
 * i < m - 1 and at n - k for the last, in float32 as ATen's
 * FractionalMaxPool2d.cpp / 3d.cpp do, and copies the windows at those
 * starts into out (a copy: exact in int8, on the input's grid). Every start
 * is checked against windows before it is used. The generator
 * (ptec_random.h) lives in the prepared state, seeded at prepare. */
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/ptec_random.h"
#include "kernels/portable/strides.h"

enum { ARG_WINDOWS, ARG_KERNEL, ARG_SEED, ARG_OUT, ARG_COUNT };

/* dims as T, H, W; a 2-D pick has T of one window (sizes 1, stride 0) */
typedef struct pick_state {
    ptec_random rng;
    int dims;                        /* spatial dims: 2 or 3 */
    int32_t full[3], m[3];           /* window starts (windows' sizes), outputs */
    float alpha[3];                  /* (n - k) / (m - 1) in float32 */
    int32_t sx[3], sy[3];            /* spatial element strides of windows and out */
    int32_t plane_x[2], plane_y[2];  /* strides of N and C */
    int32_t planes[2];               /* N, C */
    uint32_t esize;
} pick_state;

static ptec_status prepare(ptec_op *op)
{
    pick_state *s = op->state;
    ptec_tensor *win, *out;
    int64_t seed, kernel[3];
    size_t nk = 0;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, ARG_COUNT + 1)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, ARG_WINDOWS, &win)) != PTEC_OK ||
        (st = ptec_op_get_int_list(op, ARG_KERNEL, kernel, 3, &nk, false)) != PTEC_OK ||
        (st = ptec_op_get_int(op, ARG_SEED, &seed)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (win->dtype != PTEC_DTYPE_FLOAT && win->dtype != PTEC_DTYPE_CHAR) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_WINDOWS, PTEC_MSG("windows must be float32 or int8"));
    }
    if (win->rank != 4 && win->rank != 5) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_WINDOWS, PTEC_MSG("windows must be 4-D or 5-D"));
    }
    int dims = (int)win->rank - 2;
    if ((int)nk != dims) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_KERNEL,
                            PTEC_MSG("kernel_size needs one item a spatial dim"));
    }
    if (out->dtype != win->dtype || out->rank != win->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have windows' dtype and rank"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, ARG_OUT, PTEC_MSG("out must not be a constant tensor"));
    }
    if (out->sizes[0] != win->sizes[0] || out->sizes[1] != win->sizes[1]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT, PTEC_MSG("out must have windows' N and C"));
    }
    int32_t sx[PTEC_MAX_RANK], sy[PTEC_MAX_RANK];
    ptec_physical_strides(win, sx);
    ptec_physical_strides(out, sy);
    s->dims = dims;
    s->full[0] = s->m[0] = 1;
    s->sx[0] = s->sy[0] = 0;
    s->alpha[0] = 0.0f;
    for (int i = 0; i < dims; ++i) {
        int slot = 3 - dims + i, d = 2 + i;
        int32_t full = win->sizes[d], m = out->sizes[d];
        if (kernel[i] < 1 || kernel[i] > INT32_MAX - (int64_t)full) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_KERNEL, PTEC_MSG("kernel_size out of range"));
        }
        if (full < 1 || m < 1 || m > full) {
            /* torch's check: output + kernel - 1 <= input, i.e. m <= windows */
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, ARG_OUT,
                                PTEC_MSG("each spatial out size must be in [1, windows' size]"));
        }
        s->full[slot] = full;
        s->m[slot] = m;
        /* n - k = full - 1 */
        s->alpha[slot] = m > 1 ? (float)(full - 1) / (float)(m - 1) : 0.0f;
        s->sx[slot] = sx[d];
        s->sy[slot] = sy[d];
    }
    for (int i = 0; i < 2; ++i) {
        s->planes[i] = win->sizes[i];
        s->plane_x[i] = sx[i];
        s->plane_y[i] = sy[i];
    }
    s->esize = (uint32_t)ptec_dtype_size(win->dtype);
    /* the starts of one plane: at most 3 dims of m <= windows' size each */
    uint64_t scratch = ((uint64_t)s->m[0] + (uint64_t)s->m[1] + (uint64_t)s->m[2]) * sizeof(int32_t);
    if (scratch > UINT32_MAX) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, ARG_OUT, PTEC_MSG("output too large"));
    }
    op->scratch_bytes = (uint32_t)scratch;
    ptec_random_seed(&s->rng, (uint64_t)seed);
    return PTEC_OK;
}

/* torch's starts along one dim for sample u; false when one is outside the
 * windows (or not representable), which a valid prepare never gives */
static bool starts_of(const pick_state *s, int slot, float u, int32_t *starts)
{
    int32_t m = s->m[slot], full = s->full[slot];
    float alpha = s->alpha[slot];
    float base = u * alpha;
    if (!(base >= 0.0f && base < 2147483648.0f)) {
        return false;
    }
    for (int32_t i = 0; i + 1 < m; ++i) {
        float at = ((float)i + u) * alpha;
        if (!(at >= 0.0f && at < 2147483648.0f)) {
            return false;
        }
        int64_t start = (int64_t)(int32_t)at - (int64_t)(int32_t)base;
        if (start < 0 || start >= full) {
            return false;
        }
        starts[i] = (int32_t)start;
    }
    starts[m - 1] = full - 1;
    return true;
}

static ptec_status run(ptec_op *op)
{
    pick_state *s = op->state; /* the generator advances: state is the kernel's, not shared */
    const ptec_tensor *t_w = ptec_op_tensor(op, ARG_WINDOWS), *t_y = ptec_op_tensor(op, ARG_OUT);
    const uint8_t *x = t_w->data;
    uint8_t *y = t_y->data;
    int32_t *st[3];
    st[0] = op->scratch;
    st[1] = st[0] + s->m[0];
    st[2] = st[1] + s->m[1];
    for (int32_t n = 0; n < s->planes[0]; ++n) {
        for (int32_t c = 0; c < s->planes[1]; ++c) {
            /* the plane's samples in torch's order, per slot (T, H, W):
             * 3-D T = [0], H = [1], W = [2]; 2-D W = [0], H = [1] */
            float us[3] = {0.0f, 0.0f, 0.0f};
            if (s->dims == 3) {
                us[0] = ptec_random_float(&s->rng);
                us[1] = ptec_random_float(&s->rng);
                us[2] = ptec_random_float(&s->rng);
            } else {
                us[2] = ptec_random_float(&s->rng);
                us[1] = ptec_random_float(&s->rng);
            }
            for (int slot = 0; slot < 3; ++slot) {
                if (!starts_of(s, slot, us[slot], st[slot])) {
                    return ptec_op_fail(op, PTEC_INTERNAL, ARG_WINDOWS,
                                        PTEC_MSG("a window start is outside the windows"));
                }
            }
            size_t px = (size_t)n * (size_t)s->plane_x[0] + (size_t)c * (size_t)s->plane_x[1];
            size_t py = (size_t)n * (size_t)s->plane_y[0] + (size_t)c * (size_t)s->plane_y[1];
            for (int32_t t = 0; t < s->m[0]; ++t) {
                for (int32_t i = 0; i < s->m[1]; ++i) {
                    for (int32_t j = 0; j < s->m[2]; ++j) {
                        size_t from = px + (size_t)st[0][t] * (size_t)s->sx[0] + (size_t)st[1][i] * (size_t)s->sx[1] +
                                      (size_t)st[2][j] * (size_t)s->sx[2];
                        size_t to = py + (size_t)t * (size_t)s->sy[0] + (size_t)i * (size_t)s->sy[1] +
                                    (size_t)j * (size_t)s->sy[2];
                        memcpy(y + to * s->esize, x + from * s->esize, s->esize);
                    }
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_random_fractional_pick_out = {"ptec::random_fractional_pick.out",
                                                                 sizeof(pick_state), prepare, run};
