"""The fp32 and data-movement portable kernels (src/kernels/portable), one
program per case built with ProgramBuilder, run on the C runtime (ptec-run
via ptec.host_runtime) and by ptec's interpreter, and compared with PyTorch.

C runtime vs interpreter: bit-identical for every op whose float sum order
the interpreter repeats (convolution, linear, pools, mean, batch-norm, clamp
family, sub/div, data movement); softmax, sigmoid and tanh use the C
library's expf/tanhf against numpy's exp/tanh, so they are compared with a
tolerance of a few ulps. C runtime vs PyTorch: close (PyTorch sums in other
orders)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ptec import host_runtime, interpreter
from ptec.pte import ScalarType, serialize_program
from ptec.pte.program_builder import CHANNELS_LAST, ProgramBuilder

rng = np.random.default_rng(2024)
F32 = ScalarType.FLOAT
TRANSCENDENTAL = {"aten::_softmax.out", "aten::_log_softmax.out", "aten::sigmoid.out", "aten::tanh.out"}


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def run_both(b, inputs):
    """Runs the built program on the C runtime and the interpreter."""
    prog = b.build()
    c = host_runtime.run(prog, serialize_program(prog), inputs)
    py = interpreter.run_program(prog, inputs)
    return c, py


def check(key, b, inputs, want, atol=1e-5, rtol=1e-5):
    c, py = run_both(b, inputs)
    for got_c, got_py, w in zip(c, py, want if isinstance(want, (list, tuple)) else [want]):
        w = np.asarray(w)
        assert got_c.shape == w.shape, (got_c.shape, w.shape)
        if key in TRANSCENDENTAL:
            np.testing.assert_allclose(got_c, got_py, rtol=1e-6, atol=1e-7)
        else:
            assert np.array_equal(got_c, got_py), np.abs(got_c.astype(np.float64) - got_py).max()
        if w.dtype.kind == "f":
            np.testing.assert_allclose(got_c, w, atol=atol, rtol=rtol)
        else:
            assert np.array_equal(got_c, w)


def unary(key, x, order=None, out_order=None, **kw):
    b = ProgramBuilder()
    xi = b.tensor(F32 if x.dtype == np.float32 else ScalarType.CHAR, x.shape, order)
    y = b.tensor(F32 if x.dtype == np.float32 else ScalarType.CHAR, x.shape,
                 out_order if out_order is not None else order)
    b.call(key, self=xi, out=y, **kw)
    b.set_io([xi], [y])
    return b


@pytest.mark.parametrize("order", [None, CHANNELS_LAST])
def test_activations(order):
    x = f32(2, 3, 4, 5) * 3
    t = torch.from_numpy(x)
    cases = [("aten::relu.out", {}, F.relu(t)), ("aten::sigmoid.out", {}, torch.sigmoid(t)),
             ("aten::tanh.out", {}, torch.tanh(t)),
             ("aten::clamp.out", dict(min=-0.5, max=None), torch.clamp(t, min=-0.5)),
             ("aten::clamp.out", dict(min=None, max=1), torch.clamp(t, max=1)),
             ("aten::hardtanh.out", dict(min_val=-1.0, max_val=2.0), F.hardtanh(t, -1.0, 2.0))]
    for key, kw, want in cases:
        check(key, unary(key, x, order, **kw), [x], want.numpy(), atol=1e-6)
    # self and out in different dim orders
    check("aten::relu.out", unary("aten::relu.out", x, None, CHANNELS_LAST), [x], F.relu(t).numpy())


def test_clamp_int8_and_nan():
    x = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    check("aten::clamp.out", unary("aten::clamp.out", x, min=-20, max=300), [x], np.clip(x, -20, 127))
    xf = np.array([np.nan, -3, 0.25, 7], np.float32)
    c, _ = run_both(unary("aten::clamp.out", xf, min=-1.0, max=1.0), [xf])
    assert np.isnan(c[0][0]) and list(c[0][1:]) == [-1.0, 0.25, 1.0]


@pytest.mark.parametrize("key,fn", [("aten::sub.out", lambda a, b: a - 2 * b),
                                    ("aten::div.out", lambda a, b: a / b)])
def test_sub_div_broadcast(key, fn):
    a, bb = f32(2, 3, 4), f32(3, 1) + 3
    b = ProgramBuilder()
    x, y, z = b.tensor(F32, a.shape), b.tensor(F32, bb.shape), b.tensor(F32, a.shape)
    kw = dict(alpha=2) if key == "aten::sub.out" else {}
    b.call(key, self=x, other=y, out=z, **kw)
    b.set_io([x, y], [z])
    check(key, b, [a, bb], fn(torch.from_numpy(a), torch.from_numpy(bb)).numpy())


CONV_CASES = [  # (N, Cin, H, W, Cout, k, stride, padding, dilation, groups, bias)
    (1, 3, 7, 6, 4, (3, 3), (1, 1), (1, 1), (1, 1), 1, True),
    (2, 4, 9, 8, 6, (3, 2), (2, 1), (1, 0), (1, 2), 2, False),
    (1, 4, 5, 5, 8, (3, 3), (1, 1), (2, 2), (2, 2), 4, True),
    (1, 2, 6, 7, 3, (1, 1), (3, 2), (0, 0), (1, 1), 1, True),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("order", [None, CHANNELS_LAST])
def test_convolution(case, order):
    n, cin, h, w, cout, k, s, p, d, g, has_bias = case
    x, wt = f32(n, cin, h, w), f32(cout, cin // g, *k)
    bias = f32(cout) if has_bias else None
    want = F.conv2d(torch.from_numpy(x), torch.from_numpy(wt), None if bias is None else torch.from_numpy(bias),
                    s, p, d, g).numpy()
    b = ProgramBuilder()
    xi, y = b.tensor(F32, x.shape, order), b.tensor(F32, want.shape, order)
    b.call("aten::convolution.out", input=xi, weight=b.constant(wt),
           bias=None if bias is None else b.constant(bias), stride=list(s), padding=list(p),
           dilation=list(d), transposed=False, output_padding=[0, 0], groups=g, out=y)
    b.set_io([xi], [y])
    check("aten::convolution.out", b, [x], want, atol=1e-4)


@pytest.mark.parametrize("case", [  # Cin, Cout, k, stride, padding, output_padding, dilation, groups
    (3, 4, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1),
    (4, 6, (2, 3), (3, 2), (2, 0), (0, 1), (1, 2), 2),
    (2, 2, (3, 3), (1, 1), (0, 0), (0, 0), (1, 1), 1)])
def test_transposed_convolution(case):
    cin, cout, k, s, p, op, d, g = case
    x, wt, bias = f32(1, cin, 5, 4), f32(cin, cout // g, *k), f32(cout)
    want = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(wt), torch.from_numpy(bias), s, p, op, g,
                              d).numpy()
    b = ProgramBuilder()
    xi, y = b.tensor(F32, x.shape, CHANNELS_LAST), b.tensor(F32, want.shape, CHANNELS_LAST)
    b.call("aten::convolution.out", input=xi, weight=b.constant(wt), bias=b.constant(bias), stride=list(s),
           padding=list(p), dilation=list(d), transposed=True, output_padding=list(op), groups=g, out=y)
    b.set_io([xi], [y])
    check("aten::convolution.out", b, [x], want, atol=1e-4)


def test_linear():
    x, wt, bias = f32(3, 2, 17), f32(5, 17), f32(5)
    for bb in (bias, None):
        want = F.linear(torch.from_numpy(x), torch.from_numpy(wt), None if bb is None else torch.from_numpy(bb))
        b = ProgramBuilder()
        xi, y = b.tensor(F32, x.shape), b.tensor(F32, want.shape)
        b.call("aten::linear.out", input=xi, weight=b.constant(wt), bias=None if bb is None else b.constant(bb),
               out=y)
        b.set_io([xi], [y])
        check("aten::linear.out", b, [x], want.numpy(), atol=1e-5)


@pytest.mark.parametrize("shape,dim", [((2, 5, 3, 4), 1), ((2, 5, 3, 4), -1), ((4, 9), 0), ((7,), 0)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_softmax_any_dim(shape, dim, channels_last):
    order = CHANNELS_LAST if channels_last and len(shape) == 4 else None
    x = f32(*shape) * 4
    b = unary("aten::_softmax.out", x, order, dim=dim, half_to_float=False)
    check("aten::_softmax.out", b, [x], torch.softmax(torch.from_numpy(x), dim).numpy(), atol=1e-6)


@pytest.mark.parametrize("shape,dim", [((2, 5, 3, 4), 1), ((2, 5, 3, 4), -1), ((4, 9), 0), ((7,), 0)])
@pytest.mark.parametrize("channels_last", [False, True])
def test_log_softmax_any_dim(shape, dim, channels_last):
    order = CHANNELS_LAST if channels_last and len(shape) == 4 else None
    x = f32(*shape) * 4
    b = unary("aten::_log_softmax.out", x, order, dim=dim, half_to_float=False)
    check("aten::_log_softmax.out", b, [x], torch.log_softmax(torch.from_numpy(x), dim).numpy(), atol=1e-5)


POOL_CASES = [  # k, stride, padding, ceil_mode
    ((3, 3), (2, 2), (1, 1), False), ((3, 3), (2, 2), (1, 1), True), ((2, 3), (1, 2), (1, 0), True),
    ((2, 2), (), (0, 0), False)]


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("order", [None, CHANNELS_LAST])
def test_avg_pool2d(case, order):
    k, s, p, ceil = case
    x = f32(2, 3, 7, 8)
    for cip, div in ((True, None), (False, None), (True, 5)):
        want = F.avg_pool2d(torch.from_numpy(x), k, s or None, p, ceil, cip, div).numpy()
        b = ProgramBuilder()
        xi, y = b.tensor(F32, x.shape, order), b.tensor(F32, want.shape, order)
        b.call("aten::avg_pool2d.out", self=xi, kernel_size=list(k), stride=list(s), padding=list(p),
               ceil_mode=ceil, count_include_pad=cip, divisor_override=div, out=y)
        b.set_io([xi], [y])
        check("aten::avg_pool2d.out", b, [x], want, atol=1e-6)


@pytest.mark.parametrize("case", POOL_CASES + [((3, 2), (2, 1), (1, 1), True)])
@pytest.mark.parametrize("order", [None, CHANNELS_LAST])
def test_max_pool2d_with_indices(case, order):
    k, s, p, ceil = case
    dil = (2, 1) if k == (3, 2) else (1, 1)
    x = f32(2, 3, 9, 8)
    want, idx = F.max_pool2d(torch.from_numpy(x), k, s or None, p, dil, ceil, return_indices=True)
    b = ProgramBuilder()
    xi, y = b.tensor(F32, x.shape, order), b.tensor(F32, want.shape, order)
    ind = b.tensor(ScalarType.LONG, want.shape, order)
    b.call("aten::max_pool2d_with_indices.out", self=xi, kernel_size=list(k), stride=list(s), padding=list(p),
           dilation=list(dil), ceil_mode=ceil, out=y, indices=ind)
    b.set_io([xi], [y, ind])
    check("aten::max_pool2d_with_indices.out", b, [x], [want.numpy(), idx.numpy()])


def test_max_pool2d_int8():
    x = rng.integers(-128, 128, (1, 4, 6, 6), dtype=np.int8)
    want = F.max_pool2d(torch.from_numpy(x.astype(np.float32)), 3, 2, 1, ceil_mode=True).numpy().astype(np.int8)
    b = ProgramBuilder()
    xi, y = b.tensor(ScalarType.CHAR, x.shape, CHANNELS_LAST), b.tensor(ScalarType.CHAR, want.shape, CHANNELS_LAST)
    ind = b.tensor(ScalarType.LONG, want.shape, CHANNELS_LAST)
    b.call("aten::max_pool2d_with_indices.out", self=xi, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1],
           dilation=[1, 1], ceil_mode=True, out=y, indices=ind)
    b.set_io([xi], [y])
    check("aten::max_pool2d_with_indices.out", b, [x], want)


@pytest.mark.parametrize("out_size", [(1, 1), (3, 2), (5, 7)])
def test_adaptive_avg_pool2d(out_size):
    x = f32(1, 3, 7, 9)
    want = F.adaptive_avg_pool2d(torch.from_numpy(x), out_size).numpy()
    b = ProgramBuilder()
    xi, y = b.tensor(F32, x.shape, CHANNELS_LAST), b.tensor(F32, want.shape, CHANNELS_LAST)
    b.call("aten::_adaptive_avg_pool2d.out", self=xi, output_size=list(out_size), out=y)
    b.set_io([xi], [y])
    check("aten::_adaptive_avg_pool2d.out", b, [x], want, atol=1e-6)


@pytest.mark.parametrize("dims,keepdim", [([2, 3], True), ([1], False), ([-1, 0], False), (None, False)])
@pytest.mark.parametrize("order", [None, CHANNELS_LAST])
def test_mean(dims, keepdim, order):
    x = f32(2, 3, 4, 5)
    t = torch.from_numpy(x)
    want = (t.mean() if dims is None else t.mean(dim=dims, keepdim=keepdim)).numpy()
    b = ProgramBuilder()
    xi = b.tensor(F32, x.shape, order)
    y = b.tensor(F32, want.shape, order if want.ndim == 4 else None)
    b.call("aten::mean.out", self=xi, dim=dims, keepdim=keepdim, dtype=None, out=y)
    b.set_io([xi], [y])
    check("aten::mean.out", b, [x], want, atol=1e-6)


def test_batch_norm_no_training():
    x = f32(2, 4, 3)
    mean, var, w, bias = f32(4), np.abs(f32(4)) + 0.1, f32(4), f32(4)
    want = F.batch_norm(torch.from_numpy(x), torch.from_numpy(mean), torch.from_numpy(var), torch.from_numpy(w),
                        torch.from_numpy(bias), False, 0.1, 1e-5).numpy()
    b = ProgramBuilder()
    xi, y = b.tensor(F32, x.shape), b.tensor(F32, x.shape)
    b.call("aten::_native_batch_norm_legit_no_training.out", input=xi, weight=b.constant(w), bias=b.constant(bias),
           running_mean=b.constant(mean), running_var=b.constant(var), momentum=0.1, eps=1e-5, out0=y,
           out1=b.tensor(F32, [0]), out2=b.tensor(F32, [0]))
    b.set_io([xi], [y])
    check("aten::_native_batch_norm_legit_no_training.out", b, [x], want, atol=1e-5)


def layer_norm_program(shape, normalized_shape, affine, out_shape=None, stats=0):
    b = ProgramBuilder()
    xi, y = b.tensor(F32, shape), b.tensor(F32, out_shape or shape)
    w = f32(*normalized_shape) if affine else None
    bias = f32(*normalized_shape) if affine else None
    b.call("aten::native_layer_norm.out", input=xi, normalized_shape=list(normalized_shape),
           weight=b.constant(w) if affine else None, bias=b.constant(bias) if affine else None, eps=1e-5,
           out0=y, out1=b.tensor(F32, [stats]), out2=b.tensor(F32, [stats]))
    b.set_io([xi], [y])
    return b, w, bias


@pytest.mark.parametrize("shape,normalized,affine", [((2, 4, 7), (7,), True), ((3, 5, 6), (5, 6), False),
                                                     ((1, 33), (33,), True), ((2, 3, 2, 4), (3, 2, 4), True)])
def test_layer_norm(shape, normalized, affine):
    x = f32(*shape) * 3 + 1
    b, w, bias = layer_norm_program(shape, normalized, affine)
    want = F.layer_norm(torch.from_numpy(x), list(normalized), None if w is None else torch.from_numpy(w),
                        None if bias is None else torch.from_numpy(bias), 1e-5).numpy()
    check("aten::native_layer_norm.out", b, [x], want, atol=1e-5, rtol=1e-4)


def test_layer_norm_writes_the_row_statistics(tmp_path):
    """out1 and out2 with one float per row receive each row's mean and rstd."""
    from runtime_util import run_program
    from ptec.reference.portable import layer_norm
    x = f32(2, 4, 7) * 2
    b = ProgramBuilder()
    xi, y, mean, rstd = b.tensor(F32, x.shape), b.tensor(F32, x.shape), b.tensor(F32, [2, 4, 1]), b.tensor(F32, [2, 4, 1])
    b.call("aten::native_layer_norm.out", input=xi, normalized_shape=[7], weight=None, bias=None, eps=1e-5,
           out0=y, out1=mean, out2=rstd)
    b.set_io([xi], [y, mean, rstd])
    proc, (got, got_mean, got_rstd) = run_program(b.build(), [x], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert got.tobytes() == layer_norm(x, 1, None, None, 1e-5).tobytes()
    np.testing.assert_allclose(got_mean.ravel(), x.mean(axis=2).ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_rstd.ravel(), 1 / np.sqrt(x.var(axis=2).ravel() + 1e-5), rtol=1e-4)


@pytest.mark.parametrize("normalized,stats,message", [
    ((5,), 0, "normalized_shape must equal the input's last dims"),
    ((2, 3, 4, 7), 0, "normalized_shape must name 1 to rank"),
    ((7,), 5, "out1 and out2 must be empty or hold one float per normalised row")])
def test_layer_norm_refuses_bad_arguments(tmp_path, normalized, stats, message):
    from runtime_util import run_program
    b, _, _ = layer_norm_program((2, 4, 7), normalized, False, stats=stats)
    proc, _ = run_program(b.build(), [f32(2, 4, 7)], tmp_path)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr


DTYPES = [(np.float32, ScalarType.FLOAT), (np.int8, ScalarType.CHAR), (np.int64, ScalarType.LONG)]


def rand(np_dtype, shape):
    if np_dtype == np.float32:
        return f32(*shape)
    return rng.integers(-100, 100, shape).astype(np_dtype)


@pytest.mark.parametrize("np_dtype,st", DTYPES)
def test_data_movement(np_dtype, st):
    x = rand(np_dtype, (2, 3, 4, 5))
    t = torch.from_numpy(x)
    cases = [
        ("aten::view_copy.out", dict(size=[2, -1]), t.reshape(2, -1), CHANNELS_LAST, None),
        ("aten::view_copy.out", dict(size=[6, 20]), t.reshape(6, 20), None, None),
        ("aten::permute_copy.out", dict(dims=[0, 2, 3, 1]), t.permute(0, 2, 3, 1), None, None),
        ("aten::permute_copy.out", dict(dims=[3, -4, 1, 2]), t.permute(3, 0, 1, 2), CHANNELS_LAST, CHANNELS_LAST),
        ("aten::slice_copy.Tensor_out", dict(dim=2, start=-3, end=None, step=2), t[:, :, -3::2], CHANNELS_LAST,
         CHANNELS_LAST),
        ("aten::slice_copy.Tensor_out", dict(dim=3, start=1, end=100, step=1), t[..., 1:], None, None),
        ("aten::unsqueeze_copy.out", dict(dim=-1), t.unsqueeze(-1), CHANNELS_LAST, None),
    ]
    for key, kw, want, order, out_order in cases:
        b = ProgramBuilder()
        xi = b.tensor(st, x.shape, order)
        y = b.tensor(st, list(want.shape), out_order)
        b.call(key, self=xi, out=y, **kw)
        b.set_io([xi], [y])
        check(key, b, [x], want.numpy())
    x1 = rand(np_dtype, (2, 1, 3, 1))
    b = ProgramBuilder()
    xi, y = b.tensor(st, x1.shape), b.tensor(st, [2, 3])
    b.call("aten::squeeze_copy.dims_out", self=xi, dim=[1, 3, 2], out=y)
    b.set_io([xi], [y])
    check("aten::squeeze_copy.dims_out", b, [x1], x1.reshape(2, 3))


@pytest.mark.parametrize("np_dtype,st", DTYPES)
@pytest.mark.parametrize("dim", [1, 2, -1])
def test_cat_mixed_layouts(np_dtype, st, dim):
    parts = [rand(np_dtype, (2, 3, 4, 5)), rand(np_dtype, (2, 3, 4, 5))]
    parts[1] = parts[1].take(range(2 if dim % 4 == dim else 1), axis=dim % 4)
    want = np.concatenate(parts, axis=dim)
    b = ProgramBuilder()
    xs = [b.tensor(st, parts[0].shape, CHANNELS_LAST), b.tensor(st, parts[1].shape, None),
          b.tensor(st, [0], None)]
    y = b.tensor(st, want.shape, CHANNELS_LAST)
    b.call("aten::cat.out", tensors=xs, dim=dim, out=y)
    b.set_io(xs, [y])
    check("aten::cat.out", b, parts + [np.zeros(0, np_dtype)], want)


def test_bad_arguments_fail_at_prepare():
    """A wrong call fails while the method loads, with a message naming it."""
    x = f32(1, 2, 4, 4)
    b = ProgramBuilder()
    xi, y = b.tensor(F32, x.shape), b.tensor(F32, [1, 2, 2, 2])
    b.call("aten::avg_pool2d.out", self=xi, kernel_size=[3, 3], stride=[2, 2], padding=[2, 2], ceil_mode=False,
           count_include_pad=True, divisor_override=None, out=y)
    b.set_io([xi], [y])
    prog = b.build()
    with pytest.raises(host_runtime.RuntimeError_, match="padding must be non-negative and at most half"):
        host_runtime.run(prog, serialize_program(prog), [x])


@pytest.mark.parametrize("dtype,order", [(np.float32, None), (np.int8, CHANNELS_LAST)])
@pytest.mark.parametrize("size,scales", [((8, 10), None), (None, (2.0, 2.0)), ((2, 3), None)])
def test_upsample_nearest2d(dtype, order, size, scales):
    from ptec.reference.portable import upsample_nearest2d
    x = (rng.standard_normal((1, 3, 4, 5)) * 50).astype(dtype)
    out_hw = size if size is not None else (int(4 * scales[0]), int(5 * scales[1]))
    want = F.interpolate(torch.from_numpy(x.astype(np.float32)), size=out_hw, mode="nearest").numpy().astype(dtype)
    assert np.array_equal(upsample_nearest2d(x, out_hw, scales), want)
    b = ProgramBuilder()
    st = ScalarType.FLOAT if dtype == np.float32 else ScalarType.CHAR
    xi, y = b.tensor(st, x.shape, order), b.tensor(st, [1, 3, *out_hw], order)
    b.call("aten::upsample_nearest2d.vec_out", input=xi, output_size=None if size is None else list(size),
           scale_factors=None if scales is None else list(scales), out=y)
    b.set_io([xi], [y])
    check("aten::upsample_nearest2d.vec_out", b, [x], want)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("order", [None, CHANNELS_LAST])
@pytest.mark.parametrize("size,scales", [((8, 10), None), (None, (2.0, 2.5)), ((2, 3), None), ((4, 9), None)])
def test_upsample_bilinear2d(align, order, size, scales):
    """The C kernel equals the numpy reference bit for bit and torch within float rounding;
    given scale factors, align_corners ignores them as upstream does."""
    x = (rng.standard_normal((1, 3, 4, 5)) * 50).astype(np.float32)
    out_hw = size if size is not None else (int(4 * scales[0]), int(5 * scales[1]))
    kw = dict(align_corners=align) if scales is None or align else dict(scale_factor=scales, align_corners=False)
    want = F.interpolate(torch.from_numpy(x), size=None if "scale_factor" in kw else out_hw, mode="bilinear",
                         **kw).numpy()
    b = ProgramBuilder()
    xi, y = b.tensor(ScalarType.FLOAT, x.shape, order), b.tensor(ScalarType.FLOAT, [1, 3, *out_hw], order)
    b.call("aten::upsample_bilinear2d.vec_out", input=xi, output_size=None if size is None else list(size),
           align_corners=align, scale_factors=None if scales is None else list(scales), out=y)
    b.set_io([xi], [y])
    check("aten::upsample_bilinear2d.vec_out", b, [x], want, atol=1e-4)


@pytest.mark.parametrize("size,scales,message", [((8, 9), None, "output_size must be out's [H, W]"),
                                                 (None, (2.0, 3.0), "scale_factors must be positive"),
                                                 ((8, 10), (2.0, 2.0), "give either output_size or two")])
def test_upsample_bilinear2d_refuses_bad_arguments(tmp_path, size, scales, message):
    from runtime_util import run_program
    b = ProgramBuilder()
    xi, y = b.tensor(F32, [1, 3, 4, 5]), b.tensor(F32, [1, 3, 8, 10])
    b.call("aten::upsample_bilinear2d.vec_out", input=xi, output_size=None if size is None else list(size),
           align_corners=False, scale_factors=None if scales is None else list(scales), out=y)
    b.set_io([xi], [y])
    proc, _ = run_program(b.build(), [f32(1, 3, 4, 5)], tmp_path)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("order", [None, CHANNELS_LAST])
@pytest.mark.parametrize("in_hw,size,scales", [((4, 5), (8, 10), None), ((4, 5), None, (2.0, 2.5)),
                                               ((4, 5), (2, 3), None), ((4, 5), (4, 9), None),
                                               ((5, 7), (11, 6), None), ((6, 6), (4, 13), None),
                                               ((5, 7), None, (1.7, 0.6)), ((1, 6), (3, 6), None)])
def test_upsample_bicubic2d(align, order, in_hw, size, scales):
    """The C kernel equals the numpy reference bit for bit, and torch's
    F.interpolate(mode="bicubic") within float rounding (an oracle sharing
    nothing with either); given scale factors, align_corners ignores them."""
    x = (rng.standard_normal((2, 3, *in_hw)) * 50).astype(np.float32)
    out_hw = size if size is not None else (int(in_hw[0] * scales[0]), int(in_hw[1] * scales[1]))
    t = torch.from_numpy(x)
    if scales is None or align:
        want = F.interpolate(t, size=out_hw, mode="bicubic", align_corners=align)
    else:
        want = F.interpolate(t, scale_factor=scales, mode="bicubic", align_corners=False,
                             recompute_scale_factor=False)
    assert tuple(want.shape[2:]) == tuple(out_hw)
    b = ProgramBuilder()
    xi, y = b.tensor(F32, x.shape, order), b.tensor(F32, [2, 3, *out_hw], order)
    b.call("aten::upsample_bicubic2d.vec_out", input=xi, output_size=None if size is None else list(size),
           align_corners=align, scale_factors=None if scales is None else list(scales), out=y)
    b.set_io([xi], [y])
    check("aten::upsample_bicubic2d.vec_out", b, [x], want.numpy(), rtol=1e-5, atol=1e-5 * 50)


@pytest.mark.parametrize("size,scales,message", [((8, 9), None, "output_size must be out's [H, W]"),
                                                 ((8,), None, "output_size must be out's [H, W]"),
                                                 (None, (2.0, 3.0), "scale_factors must be positive"),
                                                 (None, (-2.0, 2.0), "scale_factors must be positive"),
                                                 (None, (2.0, float("nan")), "scale_factors must be positive"),
                                                 (None, (float("inf"), 2.0), "scale_factors must be positive"),
                                                 (None, (2.0,), "give either output_size or two"),
                                                 ((8, 10), (2.0, 2.0), "give either output_size or two")])
def test_upsample_bicubic2d_refuses_bad_arguments(tmp_path, size, scales, message):
    from runtime_util import run_program
    b = ProgramBuilder()
    xi, y = b.tensor(F32, [1, 3, 4, 5]), b.tensor(F32, [1, 3, 8, 10])
    b.call("aten::upsample_bicubic2d.vec_out", input=xi, output_size=None if size is None else list(size),
           align_corners=False, scale_factors=None if scales is None else list(scales), out=y)
    b.set_io([xi], [y])
    proc, _ = run_program(b.build(), [f32(1, 3, 4, 5)], tmp_path)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("size,scales,message", [((8, 9), None, "output_size must be out's [H, W]"),
                                                 (None, (2.0, 3.0), "scale_factors must be positive"),
                                                 ((8, 10), (2.0, 2.0), "give either output_size or two")])
def test_upsample_nearest2d_refuses_bad_arguments(tmp_path, size, scales, message):
    from runtime_util import run_program
    b = ProgramBuilder()
    xi, y = b.tensor(F32, [1, 3, 4, 5]), b.tensor(F32, [1, 3, 8, 10])
    b.call("aten::upsample_nearest2d.vec_out", input=xi, output_size=None if size is None else list(size),
           scale_factors=None if scales is None else list(scales), out=y)
    b.set_io([xi], [y])
    proc, _ = run_program(b.build(), [f32(1, 3, 4, 5)], tmp_path)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr


EDGE_PADS = [("aten::reflection_pad1d.out", (2, 3, 6), [2, 3], "reflect"),
             ("aten::replication_pad1d.out", (2, 3, 4), [5, 1], "replicate"),
             ("aten::reflection_pad2d.out", (1, 3, 4, 5), [1, 4, 3, 0], "reflect"),
             ("aten::replication_pad2d.out", (1, 3, 4, 5), [6, 0, 2, 7], "replicate")]


@pytest.mark.parametrize("key,shape,pads,mode", EDGE_PADS)
@pytest.mark.parametrize("dtype,channels_last", [(np.float32, False), (np.int8, True), (np.int8, False)])
def test_reflection_replication_pad(key, shape, pads, mode, dtype, channels_last):
    """Both dim orders, float and int8, against torch (the oracle) and the
    interpreter; the C kernel reads and writes through physical strides."""
    x = (rng.standard_normal(shape) * 50).astype(dtype)
    want = F.pad(torch.from_numpy(x.astype(np.float32)), pads, mode=mode).numpy().astype(dtype)
    order = CHANNELS_LAST if channels_last and len(shape) == 4 else None
    st = ScalarType.FLOAT if dtype == np.float32 else ScalarType.CHAR
    b = ProgramBuilder()
    xi, y = b.tensor(st, x.shape, order), b.tensor(st, list(want.shape), order)
    b.call(key, self=xi, padding=pads, out=y)
    b.set_io([xi], [y])
    check(key, b, [x], want)


@pytest.mark.parametrize("key,shape,pads,out_shape,message", [
    ("aten::reflection_pad2d.out", (1, 2, 4, 5), [5, 0, 0, 0], (1, 2, 4, 10), "smaller than the padded dim"),
    ("aten::reflection_pad1d.out", (1, 2, 4), [1, -1], (1, 2, 4), "must not be negative"),
    ("aten::replication_pad2d.out", (1, 2, 4, 5), [1, 1], (1, 2, 4, 7), "padding must be [left, right, top, bottom]"),
    ("aten::replication_pad1d.out", (1, 2, 4), [1, 1], (1, 2, 7), "out's size is not the padded size"),
    ("aten::replication_pad2d.out", (2, 4, 5), [1, 1, 1, 1], (2, 6, 7), "must be 4-D [N, C, H, W]")])
def test_reflection_replication_pad_refuses_bad_arguments(tmp_path, key, shape, pads, out_shape, message):
    from runtime_util import run_program
    b = ProgramBuilder()
    xi, y = b.tensor(F32, list(shape)), b.tensor(F32, list(out_shape))
    b.call(key, self=xi, padding=pads, out=y)
    b.set_io([xi], [y])
    proc, _ = run_program(b.build(), [f32(*shape)], tmp_path)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr
