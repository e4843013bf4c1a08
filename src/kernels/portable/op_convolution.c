/* aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
 *     SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
 *     SymInt groups, *, Tensor(a!) out)
 *
 * 2-D float32 convolution, plain or transposed, any groups. Every tensor is
 * addressed through its own dim order, so NCHW and NHWC activations (and
 * weights in either order) work alike. Each output is one float32 sum over
 * (input channel of the group, kernel row, kernel column) in that order,
 * taps outside the input skipped, then + bias: the order ptec's interpreter
 * repeats bit for bit. A transposed convolution gathers: an output pixel sums
 * the taps whose input position (o + pad - k * dilation) / stride is whole. */
#include <string.h>

#include "kernels/portable/portable_args.h"
#include "kernels/portable/strides.h"

#define MAX_EXTENT (1 << 30) /* bound on window arithmetic, keeps it inside int32 */

typedef struct conv_state {
    int32_t stride[2], padding[2], dilation[2];
    int32_t groups;
    uint8_t transposed;
    uint8_t has_bias;
} conv_state;

static ptec_status check_out_size(ptec_op *op, const conv_state *s, const ptec_tensor *in, const ptec_tensor *w,
                                  const ptec_tensor *out, const int32_t *output_padding)
{
    int64_t cout = s->transposed ? (int64_t)w->sizes[1] * s->groups : w->sizes[0];
    if (cout > INT32_MAX) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1, PTEC_MSG("too many output channels"));
    }
    int32_t want[4] = {in->sizes[0], (int32_t)cout, 0, 0};
    for (int a = 0; a < 2; ++a) {
        int64_t extent = (int64_t)s->dilation[a] * (w->sizes[2 + a] - 1);
        int64_t size;
        if (s->transposed) {
            size = ((int64_t)in->sizes[2 + a] - 1) * s->stride[a] - 2 * (int64_t)s->padding[a] + extent +
                   output_padding[a] + 1;
        } else {
            int64_t span = (int64_t)in->sizes[2 + a] + 2 * (int64_t)s->padding[a] - extent - 1;
            size = span < 0 ? 0 : span / s->stride[a] + 1;
        }
        if (size <= 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, -1, PTEC_MSG("kernel larger than the padded input"));
        }
        if (size > MAX_EXTENT || extent + 2 * (int64_t)s->padding[a] + (int64_t)in->sizes[2 + a] * s->stride[a] > MAX_EXTENT) {
            return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("window arithmetic exceeds 2^30"));
        }
        want[2 + a] = (int32_t)size;
    }
    return ptec_portable_expect_sizes(op, (int)op->argc - 2, out, want, 4,
                                      PTEC_MSG("out must be [N, Cout, OH, OW] as the convolution gives"));
}

static ptec_status check_params(ptec_op *op, conv_state *s, const int32_t *output_padding)
{
    for (int a = 0; a < 2; ++a) {
        if (s->stride[a] <= 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 3, PTEC_MSG("stride must be positive"));
        }
        if (s->padding[a] < 0 || s->padding[a] > MAX_EXTENT) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 4, PTEC_MSG("padding must be in [0, 2^30]"));
        }
        if (s->dilation[a] <= 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 5, PTEC_MSG("dilation must be positive"));
        }
        if (s->transposed && (output_padding[a] < 0 ||
                              (output_padding[a] >= s->stride[a] && output_padding[a] >= s->dilation[a]))) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 7,
                                PTEC_MSG("output_padding must be non-negative and below stride or dilation"));
        }
        if (!s->transposed && output_padding[a] != 0) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 7, PTEC_MSG("output_padding must be 0 unless transposed"));
        }
    }
    return PTEC_OK;
}

static ptec_status prepare(ptec_op *op)
{
    conv_state *s = op->state;
    ptec_tensor *in, *w, *bias, *out;
    bool transposed;
    int64_t groups;
    int32_t output_padding[2];
    ptec_status st;
    if ((st = ptec_op_expect_argc(op, 11)) != PTEC_OK || (st = ptec_op_get_tensor(op, 0, &in)) != PTEC_OK ||
        (st = ptec_op_get_tensor(op, 1, &w)) != PTEC_OK || (st = ptec_op_get_optional_tensor(op, 2, &bias)) != PTEC_OK ||
        (st = ptec_op_get_out(op, &out)) != PTEC_OK) {
        return st;
    }
    memset(s, 0, sizeof *s);
    if ((st = ptec_portable_pair(op, 3, NULL, s->stride)) != PTEC_OK ||
        (st = ptec_portable_pair(op, 4, NULL, s->padding)) != PTEC_OK ||
        (st = ptec_portable_pair(op, 5, NULL, s->dilation)) != PTEC_OK ||
        (st = ptec_op_get_bool(op, 6, &transposed)) != PTEC_OK ||
        (st = ptec_portable_pair(op, 7, NULL, output_padding)) != PTEC_OK ||
        (st = ptec_op_get_int(op, 8, &groups)) != PTEC_OK) {
        return st;
    }
    if ((st = ptec_portable_expect_float(op, 0, in)) != PTEC_OK || (st = ptec_portable_expect_float(op, 1, w)) != PTEC_OK ||
        (bias != NULL && (st = ptec_portable_expect_float(op, 2, bias)) != PTEC_OK) ||
        (st = ptec_portable_expect_float(op, (int)op->argc - 2, out)) != PTEC_OK) {
        return st;
    }
    if (in->rank != 4 || w->rank != 4) {
        return ptec_op_fail(op, PTEC_NOT_SUPPORTED, -1, PTEC_MSG("only 2-D convolution: input and weight must be 4-D"));
    }
    s->transposed = transposed;
    if ((st = check_params(op, s, output_padding)) != PTEC_OK) {
        return st;
    }
    int32_t cin = in->sizes[1];
    if (groups <= 0 || groups > cin || cin % groups != 0) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 8, PTEC_MSG("groups must be positive and divide the input channels"));
    }
    s->groups = (int32_t)groups;
    if (transposed ? w->sizes[0] != cin : (w->sizes[0] % groups != 0 || (int64_t)w->sizes[1] * groups != cin)) {
        return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 1,
                            transposed ? PTEC_MSG("weight must be [Cin, Cout/groups, KH, KW]")
                                       : PTEC_MSG("weight must be [Cout, Cin/groups, KH, KW], Cout a multiple of groups"));
    }
    if ((st = check_out_size(op, s, in, w, out, output_padding)) != PTEC_OK) {
        return st;
    }
    if (bias != NULL) {
        if (bias->rank != 1 || bias->sizes[0] != out->sizes[1]) {
            return ptec_op_fail(op, PTEC_INVALID_ARGUMENT, 2, PTEC_MSG("bias must be [Cout]"));
        }
        s->has_bias = 1;
    }
    return PTEC_OK;
}

typedef struct conv_geometry {
    const float *x, *w, *b;
    float *y;
    int32_t sx[4], sw[4], sy[4];
    int32_t cin_g, cout_g, ih, iw, kh, kw;
} conv_geometry;

static float direct_sum(const conv_state *s, const conv_geometry *g, int32_t n, int32_t oc, int32_t oh, int32_t ow)
{
    float acc = 0.0f;
    int32_t first_ic = (oc / g->cout_g) * g->cin_g;
    for (int32_t icl = 0; icl < g->cin_g; ++icl) {
        const float *xc = g->x + (size_t)n * g->sx[0] + (size_t)(first_ic + icl) * g->sx[1];
        const float *wc = g->w + (size_t)oc * g->sw[0] + (size_t)icl * g->sw[1];
        for (int32_t kh = 0; kh < g->kh; ++kh) {
            int32_t ih = oh * s->stride[0] - s->padding[0] + kh * s->dilation[0];
            if (ih < 0 || ih >= g->ih) {
                continue;
            }
            for (int32_t kw = 0; kw < g->kw; ++kw) {
                int32_t iw = ow * s->stride[1] - s->padding[1] + kw * s->dilation[1];
                if (iw < 0 || iw >= g->iw) {
                    continue;
                }
                acc += xc[(size_t)ih * g->sx[2] + (size_t)iw * g->sx[3]] *
                       wc[(size_t)kh * g->sw[2] + (size_t)kw * g->sw[3]];
            }
        }
    }
    return acc;
}

/* The input position a transposed tap reads, or -1 when none. */
static int32_t gather_position(int32_t o, int32_t pad, int32_t k, int32_t dilation, int32_t stride, int32_t size)
{
    int32_t num = o + pad - k * dilation;
    if (num < 0 || num % stride != 0 || num / stride >= size) {
        return -1;
    }
    return num / stride;
}

static float transposed_sum(const conv_state *s, const conv_geometry *g, int32_t n, int32_t oc, int32_t oh,
                            int32_t ow)
{
    float acc = 0.0f;
    int32_t first_ic = (oc / g->cout_g) * g->cin_g;
    int32_t ocl = oc % g->cout_g;
    for (int32_t icl = 0; icl < g->cin_g; ++icl) {
        const float *xc = g->x + (size_t)n * g->sx[0] + (size_t)(first_ic + icl) * g->sx[1];
        const float *wc = g->w + (size_t)(first_ic + icl) * g->sw[0] + (size_t)ocl * g->sw[1];
        for (int32_t kh = 0; kh < g->kh; ++kh) {
            int32_t ih = gather_position(oh, s->padding[0], kh, s->dilation[0], s->stride[0], g->ih);
            if (ih < 0) {
                continue;
            }
            for (int32_t kw = 0; kw < g->kw; ++kw) {
                int32_t iw = gather_position(ow, s->padding[1], kw, s->dilation[1], s->stride[1], g->iw);
                if (iw < 0) {
                    continue;
                }
                acc += xc[(size_t)ih * g->sx[2] + (size_t)iw * g->sx[3]] *
                       wc[(size_t)kh * g->sw[2] + (size_t)kw * g->sw[3]];
            }
        }
    }
    return acc;
}

static ptec_status run(ptec_op *op)
{
    const conv_state *s = op->state;
    const ptec_tensor *in = ptec_op_tensor(op, 0), *w = ptec_op_tensor(op, 1);
    const ptec_tensor *out = ptec_op_tensor(op, op->argc - 2u);
    conv_geometry g;
    g.x = in->data;
    g.w = w->data;
    g.b = s->has_bias ? (const float *)ptec_op_tensor(op, 2)->data : NULL;
    g.y = out->data;
    ptec_physical_strides(in, g.sx);
    ptec_physical_strides(w, g.sw);
    ptec_physical_strides(out, g.sy);
    g.cin_g = in->sizes[1] / s->groups;
    g.cout_g = out->sizes[1] / s->groups;
    g.ih = in->sizes[2];
    g.iw = in->sizes[3];
    g.kh = w->sizes[2];
    g.kw = w->sizes[3];
    for (int32_t n = 0; n < out->sizes[0]; ++n) {
        for (int32_t oc = 0; oc < out->sizes[1]; ++oc) {
            for (int32_t oh = 0; oh < out->sizes[2]; ++oh) {
                for (int32_t ow = 0; ow < out->sizes[3]; ++ow) {
                    float acc = s->transposed ? transposed_sum(s, &g, n, oc, oh, ow) : direct_sum(s, &g, n, oc, oh, ow);
                    if (g.b != NULL) {
                        acc += g.b[oc];
                    }
                    g.y[(size_t)n * g.sy[0] + (size_t)oc * g.sy[1] + (size_t)oh * g.sy[2] + (size_t)ow * g.sy[3]] = acc;
                }
            }
        }
    }
    return PTEC_OK;
}

const ptec_kernel ptec_kernel_aten_convolution_out = {"aten::convolution.out", sizeof(conv_state), prepare, run};
