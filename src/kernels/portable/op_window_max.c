/* ptec::window_max.out(Tensor self, Tensor windows, *, Tensor(a!) out)
 *
 * A max pool over windows listed one by one: the pools whose windows are no
 * one kernel and stride (adaptive pools, whose windows differ in size;
 * fractional pools, whose starts differ per channel and per batch element)
 * and the regular ones alike. self is [N, C, S...] with 1 to 3 spatial
 * dims, float32 or int8 (a max picks a byte, so int8 is exact on self's
 * grid), any dim order. out is [N, C, O...]: self's dtype for the maxima,
 * or int64 for their positions, each the flat index of the maximum in its
 * input plane (d * H * W + h * W + w), as torch's return_indices gives.
 * Windows are scanned in row-major order and the first maximum wins; a NaN
 * beats every number, a later NaN an earlier one (torch's CPU loop).
 *
 * windows is a constant int32 [N' (1 or N), C' (1 or C), sum(O), 3]: row
 * off_d + o of plane (n', c') is [start, end, step] of output o along
 * spatial dim d, off_d the sum of the output sizes before d. Every row is
 * checked at load: 0 <= start < end <= the input's size, step >= 1, so a
 * window never reads outside self and never is empty. */
#include <math.h>
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

enum { MAX_SPATIAL = 3, W_SELF = 0, W_WINDOWS = 1, W_OUT = 2 };

typedef struct window_max_state {
    uint8_t spatial;    /* spatial dims: 1 to 3 */
    uint8_t indices;    /* out holds int64 positions (else the maxima) */
    uint8_t per_batch;  /* windows has N planes (else 1) */
    uint8_t per_chan;   /* windows has C planes (else 1) */
    int32_t rows;       /* windows' rows per plane: sum of the output sizes */
} window_max_state;

static bool is_contiguous(const ptec_tensor *t)
{
    for (int d = 0; d < (int)t->rank; ++d) {
        if (t->dim_order[d] != d) {
            return false;
        }
    }
    return true;
}

static ptec_status check_windows(ptec_op *op, const ptec_tensor *self, const ptec_tensor *out,
                                 const ptec_tensor *w, int spatial)
{
    const int32_t *rows = w->data;
    int32_t per_plane = w->sizes[2];
    uint32_t planes = (uint32_t)w->sizes[0] * (uint32_t)w->sizes[1];
    for (uint32_t p = 0; p < planes; ++p) {
        int32_t row = 0;
        for (int d = 0; d < spatial; ++d) {
            int32_t size = self->sizes[2 + d];
            for (int32_t o = 0; o < out->sizes[2 + d]; ++o, ++row) {
                const int32_t *r = rows + ((size_t)p * (size_t)per_plane + (size_t)row) * 3u;
                if (r[0] < 0 || r[0] >= r[1] || r[1] > size || r[2] < 1) {
                    return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, W_WINDOWS,
                                        PTEC_MSG("a window is empty or outside self"));
                }
            }
        }
    }
    return PTEC_OK;
}

static ptec_status prepare(ptec_op *op)
{
    window_max_state *s = op->state;
    ptec_tensor *self, *windows, *out;
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 4)) != PTEC_OK || (st = ptec_op_get_tensor(op, W_SELF, &self)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, W_WINDOWS, &windows)) != PTEC_OK || (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    if (self->rank < 3 || self->rank > 2 + MAX_SPATIAL || out->rank != self->rank) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, W_SELF, PTEC_MSG("self and out must be [N, C, 1 to 3 dims]"));
    }
    if (self->dtype != PTEC_DTYPE_FLOAT && self->dtype != PTEC_DTYPE_CHAR) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, W_SELF, PTEC_MSG("self must be float32 or int8"));
    }
    if (out->dtype != self->dtype && out->dtype != PTEC_DTYPE_LONG) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, W_OUT, PTEC_MSG("out must be self's dtype or int64"));
    }
    if (out->flags & PTEC_TENSOR_CONSTANT) {
        return ptec_op_fail(op, PTEC_INVALID_PROGRAM, W_OUT, PTEC_MSG("out must not be a constant tensor"));
    }
    int spatial = (int)self->rank - 2;
    int64_t rows = 0; /* three int32 sizes: no overflow in int64 */
    for (int d = 0; d < spatial; ++d) {
        if (out->sizes[2 + d] < 1 || self->sizes[2 + d] < 1) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, W_OUT, PTEC_MSG("empty spatial dims"));
        }
        rows += out->sizes[2 + d];
    }
    if (out->sizes[0] != self->sizes[0] || out->sizes[1] != self->sizes[1]) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, W_OUT, PTEC_MSG("out must keep self's N and C"));
    }
    if (!(windows->flags & PTEC_TENSOR_CONSTANT) || windows->data == NULL) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, W_WINDOWS, PTEC_MSG("windows must be a constant tensor"));
    }
    if (windows->dtype != PTEC_DTYPE_INT || windows->rank != 4 || !is_contiguous(windows) ||
        (windows->sizes[0] != 1 && windows->sizes[0] != self->sizes[0]) ||
        (windows->sizes[1] != 1 && windows->sizes[1] != self->sizes[1]) || (int64_t)windows->sizes[2] != rows ||
        windows->sizes[3] != 3) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, W_WINDOWS,
                            PTEC_MSG("windows must be contiguous int32 [1 or N, 1 or C, sum of out's sizes, 3]"));
    }
    if ((st = check_windows(op, self, out, windows, spatial)) != PTEC_OK) {
        return st;
    }
    s->spatial = (uint8_t)spatial;
    s->indices = out->dtype == PTEC_DTYPE_LONG;
    s->per_batch = windows->sizes[0] != 1;
    s->per_chan = windows->sizes[1] != 1;
    s->rows = windows->sizes[2];
    return PTEC_OK;
}

static float load(uint8_t dtype, const uint8_t *base, size_t at)
{
    if (dtype == PTEC_DTYPE_CHAR) {
        return (float)(int8_t)base[at];
    }
    float v;
    memcpy(&v, base + at * sizeof v, sizeof v);
    return v;
}

/* Window of output position o: per dim (3 of them, the missing leading ones
 * [0, 1, 1]) its [start, end, step] row. */
typedef struct box {
    int32_t start[MAX_SPATIAL], end[MAX_SPATIAL], step[MAX_SPATIAL];
} box;

static ptec_status run(ptec_op *op)
{
    const window_max_state *s = op->state;
    const ptec_tensor *t_x = ptec_op_tensor(op, W_SELF), *t_w = ptec_op_tensor(op, W_WINDOWS);
    const ptec_tensor *t_y = ptec_op_tensor(op, W_OUT);
    int32_t sx[2 + MAX_SPATIAL], sy[2 + MAX_SPATIAL];
    ptec_physical_strides(t_x, sx);
    ptec_physical_strides(t_y, sy);
    /* every shape as [N, C, D, H, W]: missing spatial dims have size 1 */
    int lead = MAX_SPATIAL - s->spatial;
    int32_t in[MAX_SPATIAL], outn[MAX_SPATIAL], xs[MAX_SPATIAL], ys[MAX_SPATIAL], off[MAX_SPATIAL];
    int32_t row = 0;
    for (int d = 0; d < MAX_SPATIAL; ++d) {
        int k = d - lead;
        in[d] = k < 0 ? 1 : t_x->sizes[2 + k];
        outn[d] = k < 0 ? 1 : t_y->sizes[2 + k];
        xs[d] = k < 0 ? 0 : sx[2 + k];
        ys[d] = k < 0 ? 0 : sy[2 + k];
        off[d] = row;
        row += k < 0 ? 0 : outn[d];
    }
    const uint8_t *x = t_x->data;
    uint8_t *y = t_y->data;
    const int32_t *windows = t_w->data;
    for (int32_t n = 0; n < t_x->sizes[0]; ++n) {
        for (int32_t c = 0; c < t_x->sizes[1]; ++c) {
            size_t plane = (size_t)(s->per_batch ? n : 0) * (size_t)(s->per_chan ? t_x->sizes[1] : 1) +
                           (size_t)(s->per_chan ? c : 0);
            const int32_t *table = windows + plane * (size_t)s->rows * 3u;
            size_t base_x = (size_t)n * (size_t)sx[0] + (size_t)c * (size_t)sx[1];
            size_t base_y = (size_t)n * (size_t)sy[0] + (size_t)c * (size_t)sy[1];
            for (int32_t od = 0; od < outn[0]; ++od) {
                for (int32_t oh = 0; oh < outn[1]; ++oh) {
                    for (int32_t ow = 0; ow < outn[2]; ++ow) {
                        int32_t o[MAX_SPATIAL] = {od, oh, ow};
                        box b;
                        for (int d = 0; d < MAX_SPATIAL; ++d) {
                            if (d < lead) {
                                b.start[d] = 0, b.end[d] = 1, b.step[d] = 1;
                            } else {
                                const int32_t *r = table + (size_t)(off[d] + o[d]) * 3u;
                                b.start[d] = r[0], b.end[d] = r[1], b.step[d] = r[2];
                            }
                        }
                        float best = -INFINITY;
                        int64_t best_at = -1;
                        size_t best_byte = 0;
                        for (int32_t i = b.start[0]; i < b.end[0]; i += b.step[0]) {
                            for (int32_t j = b.start[1]; j < b.end[1]; j += b.step[1]) {
                                for (int32_t k = b.start[2]; k < b.end[2]; k += b.step[2]) {
                                    size_t at = base_x + (size_t)i * (size_t)xs[0] + (size_t)j * (size_t)xs[1] +
                                                (size_t)k * (size_t)xs[2];
                                    float v = load(t_x->dtype, x, at);
                                    /* strictly greater: the first maximum in scan order wins;
                                     * a NaN always replaces (so the last NaN), as torch's loop */
                                    if (best_at < 0 || v > best || isnan(v)) {
                                        best = v;
                                        best_byte = at;
                                        best_at = ((int64_t)i * in[1] + j) * in[2] + k;
                                    }
                                }
                            }
                        }
                        size_t to = base_y + (size_t)od * (size_t)ys[0] + (size_t)oh * (size_t)ys[1] +
                                    (size_t)ow * (size_t)ys[2];
                        if (s->indices) {
                            ((int64_t *)(void *)y)[to] = best_at;
                        } else if (t_x->dtype == PTEC_DTYPE_CHAR) {
                            y[to] = x[best_byte];
                        } else {
                            memcpy(y + to * sizeof(float), x + best_byte * sizeof(float), sizeof(float));
                        }
                    }
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_ptec_window_max_out = {"ptec::window_max.out", sizeof(window_max_state), prepare,
                                                     run};
