"""The portable fp32 fallback: a graph node on an ATen kernel of
src/kernels/portable, with exactly that kernel's schema
(docs/portable-ops.md). 4-D values are channels-last. Every call keeps
the dim-order rules of upstream's kernel for its operator
(ptec.pte.upstream_rules, docs/compatibility.md): kernels that index their
tensors as contiguous (softmax, cat, permute, broadcasting element-wise ops)
run on the contiguous [N, H, W, C] view of a channels-last value's bytes,
with the dim mapped; kernels that want contiguous inputs (view_copy, mean,
avg-pool, batch-norm, linear) get them, by a view when the bytes already are
in that order, else by a _clone_dim_order. One entry per ATen operator in
CALLS."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from ...ir import FLOAT_MATH, Node, float_math_name, origin
from ...lowered import (Act, as_physical, clone_dim_order, from_physical, layout, needs_relayout,
                        new_act, raw_view, view)
from ...ops import SIGNATURES
from ...pte.program_builder import CHANNELS_LAST, ProgramBuilder
from ...pte.schema import ScalarType

# graph op -> ATen kernel; any other op `x` is tried as aten::x.out
ATEN_KEYS = {
    "conv2d": "aten::convolution.out", "linear": "aten::linear.out",
    # the portable convolution is torch's, transposed too (its weight [Cin, Cout / groups, KH, KW]); without
    # this key an fp32 conv_transpose2d (nn.Fold, F.fold marked fp32) fell to a kernel no runtime has
    "conv_transpose2d": "aten::convolution.out",
    "add": "aten::add.out", "sub": "aten::sub.out", "mul": "aten::mul.out",
    "div": "aten::div.out", "sigmoid": "aten::sigmoid.out", "tanh": "aten::tanh.out",
    "softmax": "aten::_softmax.out", "log_softmax": "aten::_log_softmax.out", "clamp": "aten::clamp.out",
    "avg_pool2d": "aten::avg_pool2d.out", "max_pool2d": "aten::max_pool2d_with_indices.out",
    "cat": "aten::cat.out", "mean": "aten::mean.out", "reshape": "aten::view_copy.out",
    "permute": "aten::permute_copy.out",
    "batch_norm": "aten::_native_batch_norm_legit_no_training.out",
    "layer_norm": "aten::native_layer_norm.out",
    "group_norm": "aten::native_group_norm.out",
    "upsample_nearest": "aten::upsample_nearest2d.vec_out",
    "upsample_bilinear": "aten::upsample_bilinear2d.vec_out",
    "upsample_bicubic": "aten::upsample_bicubic2d.vec_out",
    "grid_sample": "aten::grid_sampler_2d.out",
    "roi_align": "ptec::roi_align.out",
    "slice": "aten::slice_copy.Tensor_out",
    "adaptive_avg_pool2d": "aten::_adaptive_avg_pool2d.out",
    "random_dropout": "ptec::random_dropout.out",
    "random_fractional_pick": "ptec::random_fractional_pick.out",
    "svdvals": "ptec::linalg_svdvals.out",
    "eigvalsh": "ptec::linalg_eigvalsh.out",
    "linalg_det": "ptec::linalg_det.out",
    "linalg_solve": "ptec::linalg_solve.out",
    "linalg_cholesky": "ptec::linalg_cholesky.out",
    "linalg_cholesky_info": "ptec::linalg_cholesky_info.out",
    "view_dtype": "ptec::view_dtype.out",
    "nms": "ptec::nms.out",
    "batched_nms": "ptec::batched_nms.out",
    "histc": "aten::histc.out",
    "linalg_eigh_vectors": "ptec::linalg_eigh_vectors.out",
    "linalg_svd": "ptec::linalg_svd.out",
    "linalg_qr": "ptec::linalg_qr.out",
    "linalg_eigvals": "ptec::linalg_eigvals.out",
    "linalg_eig_vectors": "ptec::linalg_eig_vectors.out",
    "linalg_lu": "ptec::linalg_lu.out",
    "linalg_lu_pivots": "ptec::linalg_lu.out",
    "linalg_ldl": "ptec::linalg_ldl_factor.out",
    "linalg_ldl_int": "ptec::linalg_ldl_factor.out",
    "linalg_triangular_solve": "ptec::linalg_triangular_solve.out",
    "frexp_mantissa": "aten::frexp.Tensor_out", "frexp_exponent": "aten::frexp.Tensor_out",
}


def _const(b: ProgramBuilder, v):
    return None if v is None else b.constant(np.asarray(v, np.float32))


def _convolution(b, key, n, ins, out):
    a = n.attrs
    transposed = n.op == "conv_transpose2d"
    b.call(key, input=ins[0].value, weight=_const(b, a["weight"]), bias=_const(b, a.get("bias")),
           stride=list(a["stride"]), padding=list(a["padding"]),
           dilation=list(a["dilation"]), transposed=transposed,
           output_padding=[int(p) for p in a["output_padding"]] if transposed else [0, 0],
           groups=int(a["groups"]), out=out.value)


def _binary_alpha(b, key, n, ins, out):
    b.call(key, self=ins[0].value, other=ins[1].value, alpha=1, out=out.value)


def _binary(b, key, n, ins, out):
    b.call(key, self=ins[0].value, other=ins[1].value, out=out.value)


def _pow(b, key, n, ins, out):
    b.call(key, self=ins[0].value, exponent=ins[1].value, out=out.value)


# binary_math's functions (ir.BINARY_MATH) -> their float32 kernels
BINARY_MATH = {"pow": "aten::pow.Tensor_Tensor_out", "atan2": "aten::atan2.out", "hypot": "aten::hypot.out",
               "fmod": "aten::fmod.Tensor_out", "remainder": "aten::remainder.Tensor_out",
               "copysign": "aten::copysign.out", "igamma": "aten::igamma.out", "igammac": "aten::igammac.out",
               "zeta": "aten::special_zeta.out", "nextafter": "aten::nextafter.out",
               "fmin": "aten::fmin.out", "fmax": "aten::fmax.out"}

BINARY = {"aten::add.out": _binary_alpha, "aten::sub.out": _binary_alpha,
          "aten::mul.out": _binary, "aten::div.out": _binary,
          # minimum / maximum nodes (torch.minimum / maximum, torch.min / max of two tensors) in fp32
          "aten::minimum.out": _binary, "aten::maximum.out": _binary,
          **{key: (_pow if fn == "pow" else _binary) for fn, key in BINARY_MATH.items()}}


# ELEMENTWISE holds a function made for the int8 LUTs at its domain's edge
# (the input clamped into it) unless the node is the user's own call
# (attrs torch_nan, where torch's NaN is kept): fp32 keeps that meaning by
# the same clamp before the kernel
DOMAIN = {"sqrt": (0.0, None), "rsqrt": (0.0, None), "log": (0.0, None), "log2": (0.0, None),
          "log10": (0.0, None), "log1p": (-1.0, None), "asin": (-1.0, 1.0), "acos": (-1.0, 1.0),
          "atanh": (-1.0, 1.0), "acosh": (1.0, None)}


def float_math_key(n: Node) -> Optional[str]:
    """The float32 kernel of an elementwise node (ir.FLOAT_MATH) or a neg, else None."""
    name = float_math_name(n)
    return None if name is None else f"aten::{name}.out"


def _float_math(b, key, n, ins, out):
    x = ins[0]
    fn = key[len("aten::"):-len(".out")]
    if n.op == "elementwise" and fn in DOMAIN and not n.attrs.get("torch_nan"):
        x = _activation(b, x, *DOMAIN[fn])
    b.call(key, self=x.value, out=out.value)


def aten_key(n: Node) -> str:
    """The ATen kernel a node runs on (any other op `x` is tried as aten::x.out)."""
    if n.op == "binary_math":
        return BINARY_MATH[n.attrs["fn"]]
    if float_math_key(n) is not None:
        return float_math_key(n)
    if n.op == "grid_sample" and len(n.shape) == 5:
        return "aten::grid_sampler_3d.out"          # a volume's (capture_grid)
    return ATEN_KEYS.get(n.op) or f"aten::{n.op}.out"


def _elementwise(b: ProgramBuilder, key, n, operands) -> Act:
    """A binary ATen op; each operand an fp32 Act or a constant (numpy).
    Upstream wants one dim-order class for both operands and out, and
    broadcasts correctly only over row-major layouts. A 4-D result whose
    operands are not two channels-last values of its shape is computed on
    contiguous [N, H, W, C] views: constants are stored in that order
    (ahead of time), values are viewed (or, below rank 4, reshaped)."""
    shape = [int(d) for d in n.shape]
    direct = all(isinstance(o, Act) and o.sizes == shape for o in operands)
    select = n.op == "mul" and n.attrs.get("select") and isinstance(operands[1], np.ndarray)
    if select and isinstance(operands[0], Act) and operands[0].sizes == shape and list(operands[1].shape) == shape:
        # a where's 0/1 factor (capture_rewrites._select_nodes): where(factor != 0, x, 0), so a NaN / inf of x
        # the where drops is 0 as torch's (x * 0 would keep it)
        keep = np.asarray(operands[1]) != 0
        if len(shape) != 4:
            out = new_act(b, ScalarType.FLOAT, shape)
            b.call("aten::where.self_out", condition=b.constant(keep), self=operands[0].value,
                   other=b.constant(np.zeros(shape, np.float32)), out=out.value)
            return out
        keep = np.ascontiguousarray(keep.transpose(CHANNELS_LAST))      # on the [N, H, W, C] views, as below
        return _on_physical(b, operands[:1], shape, lambda xs, out: b.call(
            "aten::where.self_out", condition=b.constant(keep), self=xs[0].value,
            other=b.constant(np.zeros(keep.shape, np.float32)), out=out.value))
    if len(shape) != 4 or direct:
        ins = [o if isinstance(o, Act) else Act(b.constant(o), list(o.shape)) for o in operands]
        out = new_act(b, ScalarType.FLOAT, shape)
        BINARY[key](b, key, n, ins, out)
        return out
    ins = []
    for o in operands:
        sizes = list(o.sizes) if isinstance(o, Act) else list(np.shape(o))
        sizes4 = [1] * (4 - len(sizes)) + sizes
        if isinstance(o, Act):
            ins.append(_physical(b, view(b, o, sizes4) if len(sizes) != 4 else o))
        else:
            c = np.ascontiguousarray(np.reshape(o, sizes4).transpose(CHANNELS_LAST))
            ins.append(Act(b.constant(c), list(c.shape)))
    out = new_act(b, ScalarType.FLOAT, [shape[d] for d in CHANNELS_LAST], dim_order=[0, 1, 2, 3])
    BINARY[key](b, key, n, ins, out)
    return from_physical(b, out)


def _unary(b, key, n, ins, out):
    b.call(key, self=ins[0].value, out=out.value)


def _physical(b: ProgramBuilder, x: Act) -> Act:
    """x (4-D) as the contiguous [N, H, W, C] view of its channels-last bytes."""
    return as_physical(b, _relayout(b, x, CHANNELS_LAST))


def _on_physical(b: ProgramBuilder, xs: List[Act], shape, call) -> Act:
    """call(physical inputs, physical out) for kernels that index their
    tensors as contiguous; the result is channels-last again."""
    out = new_act(b, ScalarType.FLOAT, [shape[d] for d in CHANNELS_LAST], dim_order=[0, 1, 2, 3])
    call([_physical(b, x) for x in xs], out)
    return from_physical(b, out)


def _softmax(b, key, n, ins, out):
    b.call(key, self=ins[0].value, dim=int(n.attrs["dim"]) % len(n.shape), half_to_float=False,
           out=out.value)


def _softmax_physical(b, key, n, ins) -> Act:
    # upstream's _softmax walks the dim with contiguous strides: on a
    # channels-last tensor it computes wrong values (over channels too)
    d = CHANNELS_LAST.index(int(n.attrs["dim"]) % 4)
    return _on_physical(b, ins, n.shape, lambda xs, out: b.call(
        key, self=xs[0].value, dim=d, half_to_float=False, out=out.value))


def _cat(b, key, n, ins, out):
    b.call(key, tensors=[i.value for i in ins], dim=int(n.attrs["dim"]) % len(n.shape),
           out=out.value)


def _cat_physical(b, key, n, ins) -> Act:
    d = CHANNELS_LAST.index(int(n.attrs["dim"]) % 4)
    return _on_physical(b, ins, n.shape, lambda xs, out: b.call(
        key, tensors=[x.value for x in xs], dim=d, out=out.value))


def _permute_copy(b, key, n, ins, out):
    b.call(key, self=ins[0].value, dims=[int(d) for d in n.attrs["dims"]], out=out.value)


def _permute_physical(b, key, n, ins) -> Act:
    # output physical dim i holds logical dim CL[i] of the output, which is
    # input logical dim perm[CL[i]], at input physical position CL.index(.)
    perm = [int(d) % 4 for d in n.attrs["dims"]]
    pp = [CHANNELS_LAST.index(perm[CHANNELS_LAST[i]]) for i in range(4)]
    return _on_physical(b, ins, n.shape, lambda xs, out: b.call(
        key, self=xs[0].value, dims=pp, out=out.value))


def _contiguous(b: ProgramBuilder, x: Act) -> Act:
    """x in the default dim order: a view when its bytes already are, else a clone."""
    t = b.values[x.value].val
    if list(t.dim_order) == list(range(len(x.sizes))):
        return x
    if needs_relayout(x.sizes):
        return clone_dim_order(b, x, list(range(len(x.sizes))))
    return raw_view(b, x, x.sizes, list(range(len(x.sizes))))


def _to_layout(b: ProgramBuilder, y: Act) -> Act:
    """A contiguous result in ptec's layout for its rank (channels-last for 4-D)."""
    if len(y.sizes) != 4:
        return y
    if needs_relayout(y.sizes):
        return clone_dim_order(b, y, CHANNELS_LAST)
    return raw_view(b, y, y.sizes, CHANNELS_LAST)


def _on_contiguous(b: ProgramBuilder, call, key, n, ins) -> Act:
    """For kernels that want contiguous inputs (upstream's
    tensor_is_default_dim_order) and the same dim order out."""
    xs = [_contiguous(b, x) for x in ins]
    out = new_act(b, ScalarType.FLOAT, n.shape, dim_order=list(range(len(n.shape))))
    call(b, key, n, xs, out)
    return _to_layout(b, out)


def _reshape(b, key, n, ins) -> Act:
    """view_copy wants a contiguous input and out. When a layout change is
    needed anyway, the _clone_dim_order makes a fresh buffer and the reshape
    is a view of it; otherwise one view_copy."""
    x, shape = ins[0], [int(d) for d in n.shape]
    if needs_relayout(x.sizes) or needs_relayout(shape):
        return view(b, x, shape)
    return _on_contiguous(b, _view_copy, key, n, ins)


def _view_copy(b, key, n, ins, out):
    b.call(key, self=ins[0].value, size=list(n.shape), out=out.value)


def _mean_physical(b, key, n, ins) -> Optional[Act]:
    """mean over a channels-last tensor's dims, on its [N, H, W, C] view,
    when the kept dims stay in logical order there (always with keepdim)."""
    a = n.attrs
    dims = sorted(int(d) % 4 for d in a["dim"])
    kept_physical = [d for d in CHANNELS_LAST if d not in dims]
    if not a["keepdim"] and kept_physical != sorted(kept_physical):
        return None
    x = _physical(b, ins[0])
    pdims = sorted(CHANNELS_LAST.index(d) for d in dims)
    if a["keepdim"]:
        out = new_act(b, ScalarType.FLOAT, [n.shape[d] for d in CHANNELS_LAST],
                      dim_order=[0, 1, 2, 3])
    else:
        out = new_act(b, ScalarType.FLOAT, n.shape)
    b.call(key, self=x.value, dim=pdims, keepdim=bool(a["keepdim"]), dtype=None, out=out.value)
    return from_physical(b, out) if a["keepdim"] else out


def _avg_pool2d(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, kernel_size=list(a["kernel"]), stride=list(a["stride"]),
           padding=list(a["padding"]), ceil_mode=bool(a["ceil_mode"]),
           count_include_pad=bool(a["count_include_pad"]),
           divisor_override=a.get("divisor_override"), out=out.value)


def _max_pool2d_with_indices(b, key, n, ins, out):
    a = n.attrs
    indices = b.tensor(ScalarType.LONG, n.shape, layout(n.shape))
    b.call(key, self=ins[0].value, kernel_size=list(a["kernel"]), stride=list(a["stride"]),
           padding=list(a["padding"]), dilation=list(a["dilation"]),
           ceil_mode=bool(a["ceil_mode"]), out=out.value, indices=indices)


def _adaptive_avg_pool2d(b, key, n, ins, out):
    b.call(key, self=ins[0].value, output_size=list(n.attrs["output_size"]), out=out.value)


def _mean(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, dim=[int(d) for d in a["dim"]], keepdim=bool(a["keepdim"]),
           dtype=None, out=out.value)


def _batch_norm(b, key, n, ins, out):
    a = n.attrs
    b.call(key, input=ins[0].value, weight=_const(b, a.get("gamma")), bias=_const(b, a.get("beta")),
           running_mean=_const(b, a["mean"]), running_var=_const(b, a["var"]), momentum=0.1,
           eps=float(a["eps"]), out0=out.value, out1=b.tensor(ScalarType.FLOAT, [0]),
           out2=b.tensor(ScalarType.FLOAT, [0]))


def _layer_norm(b, key, n, ins, out):
    """out1 and out2 (each row's mean and rstd) get the sizes upstream's
    kernel resizes them to, the input's with the normalized dims 1, so that
    the call runs unchanged on upstream's runtime."""
    a = n.attrs
    k = len(a["normalized_shape"])
    stats = list(ins[0].sizes[:len(ins[0].sizes) - k]) + [1] * k
    b.call(key, input=ins[0].value, normalized_shape=[int(s) for s in a["normalized_shape"]],
           weight=_const(b, a.get("weight")), bias=_const(b, a.get("bias")), eps=float(a["eps"]),
           out0=out.value, out1=b.tensor(ScalarType.FLOAT, stats), out2=b.tensor(ScalarType.FLOAT, stats))


def _group_norm(b, key, n, ins, out):
    """out1 and out2 get [N, group], the sizes upstream's kernel resizes
    them to, so that the call runs unchanged on upstream's runtime."""
    a = n.attrs
    sizes = list(ins[0].sizes)
    hxw = int(np.prod(sizes[2:])) if len(sizes) > 2 else 1
    stats = [int(sizes[0]), int(a["groups"])]
    b.call(key, input=ins[0].value, weight=_const(b, a.get("weight")), bias=_const(b, a.get("bias")),
           N=int(sizes[0]), C=int(sizes[1]), HxW=hxw, group=int(a["groups"]), eps=float(a["eps"]),
           out0=out.value, out1=b.tensor(ScalarType.FLOAT, stats), out2=b.tensor(ScalarType.FLOAT, stats))


def _slice(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, dim=int(a["dim"]), start=int(a["start"]), end=int(a["end"]), step=1,
           out=out.value)


def _upsample_nearest(b, key, n, ins, out):
    b.call(key, input=ins[0].value, output_size=list(n.attrs["size"]), scale_factors=None, out=out.value)


def _upsample_bilinear(b, key, n, ins, out):
    b.call(key, input=ins[0].value, output_size=list(n.attrs["size"]),
           align_corners=bool(n.attrs["align_corners"]), scale_factors=None, out=out.value)


def _grid_sampler(b, key, n, ins, out):
    a = n.attrs
    b.call(key, input=ins[0].value, grid=ins[1].value, interpolation_mode=int(a["mode"]),
           padding_mode=int(a["padding"]), align_corners=bool(a["align_corners"]), out=out.value)


def _roi_align(b, key, n, ins, out):
    a = n.attrs
    b.call(key, input=ins[0].value, rois=ins[1].value, spatial_scale=float(a["spatial_scale"]),
           pooled_height=int(a["pooled_height"]), pooled_width=int(a["pooled_width"]),
           sampling_ratio=int(a["sampling_ratio"]), aligned=bool(a["aligned"]),
           position_sensitive=bool(a["position_sensitive"]), out=out.value)


def _random_dropout(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, p=float(a["p"]), mask_dims=int(a["mask_dims"]), zero_point=0,
           seed=int(a["seed"]), out=out.value)


def _eigvalsh(b, key, n, ins, out):
    b.call(key, self=ins[0].value, upper=bool(n.attrs["upper"]), out=out.value)


def _linalg_det(b, key, n, ins, out):
    b.call(key, self=ins[0].value, mode=int(n.attrs["mode"]), out=out.value)


def _linalg_solve(b, key, n, ins, out):
    b.call(key, self=ins[0].value, rhs=ins[1].value, out=out.value)


def _linalg_cholesky(b, key, n, ins, out):
    b.call(key, self=ins[0].value, upper=bool(n.attrs["upper"]), out=out.value)


def _linalg_triangular_solve(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, rhs=ins[1].value, upper=bool(a["upper"]), transpose=bool(a["transpose"]),
           unitriangular=bool(a["unitriangular"]), out=out.value)


def _linalg_svd(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, which=int(a["which"]), full_matrices=bool(a["full_matrices"]),
           rtol=float(a["rtol"]), out=out.value)


def _linalg_eigvals(b, key, n, ins, out):
    b.call(key, self=ins[0].value, out=out.value)


def _histc(b, key, n, ins, out):
    a = n.attrs
    b.call(key, self=ins[0].value, bins=int(a["bins"]), min=float(a["min"]), max=float(a["max"]), out=out.value)


def _linalg_qr(b, key, n, ins, out):
    b.call(key, self=ins[0].value, which=int(n.attrs["which"]), complete=bool(n.attrs["complete"]), out=out.value)


def _bmm(b, key, n, ins, out):
    x, y = (_relayout(b, i, [0, 1, 2]) for i in ins)          # upstream: one dim order, self's the default
    b.call(key, self=x.value, mat2=y.value, out=out.value)


def _linalg_lu(b, key, n, ins, out):
    b.call(key, self=ins[0].value, which=1 if n.op == "linalg_lu_pivots" else int(n.attrs["which"]), out=out.value)


def _linalg_ldl(b, key, n, ins, out):
    b.call(key, self=ins[0].value, which=0 if n.op == "linalg_ldl" else int(n.attrs["which"]), out=out.value)


def _random_fractional_pick(b, key, n, ins, out):
    b.call(key, windows=ins[0].value, kernel_size=[int(k) for k in n.attrs["kernel"]],
           seed=int(n.attrs["seed"]), out=out.value)


# ATen kernel -> how to call it: fn(builder, key, node, fp32 inputs, fp32 out)
CALLS: Dict[str, Callable] = {
    "aten::convolution.out": _convolution,
    "aten::add.out": _binary_alpha, "aten::sub.out": _binary_alpha,
    "aten::mul.out": _binary, "aten::div.out": _binary,
    "aten::sigmoid.out": _unary, "aten::tanh.out": _unary,
    # float32 math of one tensor (an elementwise node's fn, or neg)
    **{f"aten::{name}.out": _float_math for name in list(FLOAT_MATH.values()) + ["neg"]},
    "aten::_softmax.out": _softmax,
    "aten::_log_softmax.out": _softmax,
    "aten::cat.out": _cat,
    "aten::view_copy.out": _view_copy,
    "aten::permute_copy.out": _permute_copy,
    "aten::avg_pool2d.out": _avg_pool2d,
    "aten::max_pool2d_with_indices.out": _max_pool2d_with_indices,
    "aten::_adaptive_avg_pool2d.out": _adaptive_avg_pool2d,
    "aten::mean.out": _mean,
    "aten::_native_batch_norm_legit_no_training.out": _batch_norm,
    "aten::native_layer_norm.out": _layer_norm,
    "aten::native_group_norm.out": _group_norm,
    "aten::upsample_nearest2d.vec_out": _upsample_nearest,
    "aten::upsample_bilinear2d.vec_out": _upsample_bilinear,
    "aten::upsample_bicubic2d.vec_out": _upsample_bilinear,
    "aten::grid_sampler_2d.out": _grid_sampler,
    "aten::grid_sampler_3d.out": _grid_sampler,
    # torchvision's roi_align / ps_roi_align (capture_torchvision): any dim order (the kernel walks strides)
    "ptec::roi_align.out": _roi_align,
    "aten::slice_copy.Tensor_out": _slice,
    # ptec's random kernels (random_layers), any layout
    "ptec::random_dropout.out": _random_dropout,
    "ptec::random_fractional_pick.out": _random_fractional_pick,
    # the singular values of [B, m, n], the eigenvalues of symmetric [B, n, n]
    # (capture_matrix_functions), contiguous
    "ptec::linalg_svdvals.out": _unary,
    "ptec::linalg_eigvalsh.out": _eigvalsh,
    # det / sign / log |det| / log det of [B, n, n] and A^-1 B by LU (capture_matrix_functions), contiguous
    "ptec::linalg_det.out": _linalg_det,
    "ptec::linalg_solve.out": _linalg_solve,
    "ptec::linalg_cholesky.out": _linalg_cholesky,
    "ptec::linalg_cholesky_info.out": _linalg_cholesky,
    "ptec::linalg_eigh_vectors.out": _eigvalsh,
    "ptec::linalg_svd.out": _linalg_svd,
    "ptec::linalg_qr.out": _linalg_qr,
    "aten::histc.out": _histc,
    "ptec::linalg_eigvals.out": _linalg_eigvals,
    "ptec::linalg_eig_vectors.out": _linalg_eigvals,
    "ptec::linalg_lu.out": _linalg_lu,
    "ptec::linalg_ldl_factor.out": _linalg_ldl,
    "ptec::linalg_triangular_solve.out": _linalg_triangular_solve,
    # [B, n, k] times [B, k, m] in fp32 (rank 3 values: contiguous)
    "aten::bmm.out": _bmm,
}


def _relayout(b: ProgramBuilder, x: Act, dim_order) -> Act:
    """x with the given dim order: itself, or a _clone_dim_order copy."""
    t = b.values[x.value].val
    if list(t.dim_order) == list(dim_order) or not needs_relayout(x.sizes):
        return x
    return clone_dim_order(b, x, list(dim_order))


def _activation(b: ProgramBuilder, x: Act, lo, hi) -> Act:
    out = new_act(b, ScalarType.FLOAT, x.sizes)
    if lo == 0 and hi is None:
        b.call("aten::relu.out", self=x.value, out=out.value)
    else:
        b.call("aten::clamp.out", self=x.value, min=None if lo is None else float(lo),
               max=None if hi is None else float(hi), out=out.value)
    return out


def _combine_bounds(a, b):
    """Two clamps in a row as one: the tighter bound on each side."""
    if b is None:
        return a
    lo = b[0] if a[0] is None else (a[0] if b[0] is None else max(a[0], b[0]))
    hi = b[1] if a[1] is None else (a[1] if b[1] is None else min(a[1], b[1]))
    return lo, hi


# kernels that want contiguous inputs (upstream: tensor_is_default_dim_order)
CONTIGUOUS_INPUT = ("aten::avg_pool2d.out", "aten::_adaptive_avg_pool2d.out",
                    "aten::_native_batch_norm_legit_no_training.out", "aten::mean.out",
                    "aten::native_layer_norm.out", "aten::native_group_norm.out", "aten::upsample_nearest2d.vec_out",
                    "aten::upsample_bilinear2d.vec_out", "aten::upsample_bicubic2d.vec_out",
                    "aten::grid_sampler_2d.out", "aten::grid_sampler_3d.out",
                    "aten::slice_copy.Tensor_out", "ptec::linalg_svdvals.out", "ptec::linalg_eigvalsh.out",
                    "ptec::linalg_det.out", "ptec::linalg_solve.out", "ptec::linalg_cholesky.out",
                    "ptec::linalg_cholesky_info.out", "ptec::linalg_triangular_solve.out", "ptec::linalg_eigh_vectors.out",
                    "ptec::linalg_svd.out", "ptec::linalg_qr.out", "ptec::linalg_lu.out",
                    "ptec::linalg_eigvals.out", "ptec::linalg_ldl_factor.out", "ptec::linalg_eig_vectors.out")


def _layout_sensitive(b: ProgramBuilder, key: str, n: Node, ins: List[Act]) -> Optional[Act]:
    """The node when upstream's kernel needs another layout than ptec's
    channels-last 4-D values (see the module docstring); None when the plain
    call already keeps upstream's rules."""
    if key == "aten::view_copy.out":
        return _reshape(b, key, n, ins)
    if ins and len(ins[0].sizes) != 4 and len(n.shape) == 4 and key in CONTIGUOUS_INPUT:
        # a 5-D input's mean to a 4-D result: out contiguous as its input, then
        # ptec's channels-last (a channels-last out fails upstream's same-dim-order check)
        return _on_contiguous(b, CALLS[key], key, n, ins)
    if not ins or len(ins[0].sizes) != 4:
        return None
    if key in ("aten::_softmax.out", "aten::_log_softmax.out") and needs_relayout(ins[0].sizes):
        return _softmax_physical(b, key, n, ins)
    if key == "aten::cat.out" and any(needs_relayout(x.sizes) for x in ins + [Act(-1, n.shape)]):
        return _cat_physical(b, key, n, ins)
    if key == "aten::permute_copy.out" and (needs_relayout(ins[0].sizes)
                                            or needs_relayout(n.shape)):
        return _permute_physical(b, key, n, ins)
    if key == "aten::mean.out":
        y = _mean_physical(b, key, n, ins)
        if y is not None:
            return y
    if key in CONTIGUOUS_INPUT:
        return _on_contiguous(b, CALLS[key], key, n, ins)
    return None


def lower_fp32(n: Node, ins: List[Act], b: ProgramBuilder, fallbacks: List[str],
               consts: Optional[List] = None) -> Act:
    """n on a portable kernel; ins are its inputs in fp32 (None where
    consts, aligned with n.inputs, holds a constant's value as numpy: binary
    ops store it in the layout their kernel call needs). Appends
    "node: kernel" to fallbacks."""
    a = n.attrs
    if n.op == "unsupported":
        out = new_act(b, ScalarType.FLOAT, n.shape)
        # No schema known: the call lists inputs, out and the return slot.
        # The name is what the model called; ptec's kernel check rejects it.
        key = f"aten::{a.get('what', 'unknown')}.out"
        if key in SIGNATURES:
            key = f"ptec_unsupported::{a.get('what', 'unknown')}"
        b.call_raw(key, [i.value for i in ins] + [out.value, out.value])
        fallbacks.append(f"{origin(n)}: no kernel")
        return out
    key = aten_key(n)
    act = a.get("act")
    if n.op == "clamp":
        lo, hi = _combine_bounds((a["lo"], a["hi"]), act)
        fallbacks.append(f"{origin(n)}: " + ("aten::relu.out" if lo == 0 and hi is None
                                          else "aten::clamp.out"))
        return _activation(b, ins[0], lo, hi)
    if n.op == "channel_shuffle":
        # the channels-last bytes as [N*H*W, g, C/g], transposed (a rank-3 permute_copy)
        x = ins[0]
        nb, c, h, w = n.shape
        g = int(a["groups"])
        rows = raw_view(b, as_physical(b, x), [nb * h * w, g, c // g], [0, 1, 2])
        moved = new_act(b, ScalarType.FLOAT, [nb * h * w, c // g, g], dim_order=[0, 1, 2])
        b.call("aten::permute_copy.out", self=rows.value, dims=[0, 2, 1], out=moved.value)
        fallbacks.append(f"{origin(n)}: aten::permute_copy.out")
        return raw_view(b, moved, [nb, c, h, w], CHANNELS_LAST)
    if n.op == "pad" and a.get("mode") in ("reflect", "replicate") and len(n.shape) == 3:
        # an STFT's edge padding of a float input (input_compression): [N, C, L] along L, contiguous
        kind = "reflection" if a["mode"] == "reflect" else "replication"
        out = new_act(b, ScalarType.FLOAT, n.shape, dim_order=[0, 1, 2])
        b.call(f"aten::{kind}_pad1d.out", self=_relayout(b, ins[0], [0, 1, 2]).value,
               padding=[int(p) for p in a["pad"]][:2], out=out.value)
        fallbacks.append(f"{origin(n)}: aten::{kind}_pad1d.out")
        return out
    bmm = _matmul_on_bmm(b, n, ins) if n.op == "matmul" else None
    if bmm is not None:
        out, key = bmm, "aten::bmm.out"
    elif key == "aten::linear.out":
        x = _relayout(b, ins[0], list(range(len(ins[0].sizes))))
        y = new_act(b, ScalarType.FLOAT, n.shape, dim_order=list(range(len(n.shape))))
        b.call(key, input=x.value, weight=_const(b, a["weight"]), bias=_const(b, a.get("bias")),
               out=y.value)
        out = _relayout(b, y, layout(n.shape))
    elif key in BINARY:
        out = _elementwise(b, key, n, [ins[i] if consts is None or consts[i] is None
                                       else consts[i] for i in range(len(n.inputs))])
    else:
        out = _layout_sensitive(b, key, n, ins)
        if out is None:
            # (ptec::linalg_lu.out's pivots: int32 [B, k], ptec::linalg_ldl_factor.out's pivots [B, n] and info [B],
            # ptec::linalg_cholesky_info.out's info [B]: contiguous, as torch gives them)
            out = new_act(b, ScalarType.INT if n.op in ("linalg_lu_pivots", "linalg_ldl_int", "linalg_cholesky_info")
                          else ScalarType.FLOAT, n.shape)
            call = CALLS.get(key)
            if call is not None:
                call(b, key, n, ins, out)
            else:
                b.call_raw(key, [i.value for i in ins] + [out.value, out.value])
    if act:
        out = _activation(b, out, act[0], act[1])
    fallbacks.append(f"{origin(n)}: {key}")
    return out


# x.view(dtype)'s dtypes (capture_dtype_view) as the program's
VIEW_DTYPES = {"float32": ScalarType.FLOAT, "int64": ScalarType.LONG, "int32": ScalarType.INT,
               "int16": ScalarType.SHORT, "int8": ScalarType.CHAR, "uint8": ScalarType.BYTE}


def lower_view_dtype(n: Node, x: Act, b: ProgramBuilder, fallbacks: List[str]) -> Act:
    """x.view(dtype) (capture_dtype_view): ptec::view_dtype.out copies x's
    bytes (x its fp32 value or its integers), in torch's contiguous order,
    into out of the new dtype, viewed back into ptec's layout of its rank."""
    if x.dtype != VIEW_DTYPES[n.attrs["src"]]:
        from ...lower import LoweringError
        raise LoweringError(f"{origin(n)}: the viewed value is held as {x.dtype.name}, not {n.attrs['src']}")
    x = _contiguous(b, x)
    out = new_act(b, VIEW_DTYPES[n.attrs["dtype"]], n.shape, dim_order=list(range(len(n.shape))))
    b.call("ptec::view_dtype.out", self=x.value, out=out.value)
    fallbacks.append(f"{origin(n)}: ptec::view_dtype.out")
    return _to_layout(b, out)


def _nms_threshold(b: ProgramBuilder, n: Node, thr: Optional[Act]) -> Tuple[str, dict]:
    """nms's kernel and threshold argument: the constant attrs t (.out), or
    the program's computed threshold, its fp32 value of one element
    (.Tensor_out)."""
    if thr is None:
        return "out", dict(iou_threshold=float(n.attrs["t"]))
    if thr.dtype != ScalarType.FLOAT or int(np.prod(thr.sizes, dtype=np.int64)) != 1:
        from ...lower import LoweringError
        raise LoweringError(f"{origin(n)}: nms's threshold is held as {thr.dtype.name} {list(thr.sizes)}, "
                            "not one float32")
    return "Tensor_out", dict(iou_threshold=_contiguous(b, thr).value)


def lower_nms(n: Node, boxes: Act, order: Act, b: ProgramBuilder, fallbacks: List[str],
              thr: Optional[Act] = None) -> Act:
    """torchvision's nms keep flags (capture_nms): ptec::nms.out on the fp32
    boxes, row-major, and the sort's int64 order; out float32 [K]. A
    computed threshold: ptec::nms.Tensor_out reading its fp32 value."""
    if order.dtype != ScalarType.LONG:
        from ...lower import LoweringError
        raise LoweringError(f"{origin(n)}: nms's order is held as {order.dtype.name}, not int64")
    overload, t = _nms_threshold(b, n, thr)
    out = new_act(b, ScalarType.FLOAT, n.shape, dim_order=[0])
    b.call(f"ptec::nms.{overload}", boxes=_contiguous(b, boxes).value, order=_contiguous(b, order).value,
           **t, out=out.value)
    fallbacks.append(f"{origin(n)}: ptec::nms.{overload}")
    return out


def lower_batched_nms(n: Node, boxes: Act, scores: Act, order: Act, idxs: Act, b: ProgramBuilder,
                      fallbacks: List[str], thr: Optional[Act] = None) -> Act:
    """torchvision's batched_nms past 1,000 boxes (capture_nms):
    ptec::batched_nms.out on the fp32 boxes and scores, row-major, the
    sort's int64 order and the classes (int64, int32 or float32); out int64
    [K], the kept indices in torchvision's order, then -1."""
    from ...lower import LoweringError
    if order.dtype != ScalarType.LONG:
        raise LoweringError(f"{origin(n)}: batched_nms's order is held as {order.dtype.name}, not int64")
    if idxs.dtype not in (ScalarType.LONG, ScalarType.INT, ScalarType.FLOAT):
        raise LoweringError(f"{origin(n)}: batched_nms's idxs are held as {idxs.dtype.name}")
    overload, t = _nms_threshold(b, n, thr)
    out = new_act(b, ScalarType.LONG, n.shape, dim_order=[0])
    b.call(f"ptec::batched_nms.{overload}", boxes=_contiguous(b, boxes).value, scores=_contiguous(b, scores).value,
           order=_contiguous(b, order).value, idxs=_contiguous(b, idxs).value, **t, out=out.value)
    fallbacks.append(f"{origin(n)}: ptec::batched_nms.{overload}")
    return out


def _matmul_on_bmm(b: ProgramBuilder, n: Node, ins: List[Act]) -> Optional[Act]:
    """torch.matmul of two fp32 values of rank 2 or more that no other
    backend took (cortex_m lowers equal batch dims or a 2-D rhs in int8; a
    broadcast batch comes here) on aten::bmm.out: each operand made
    contiguous, its batch dims broadcast to the result's (copies of it
    joined by aten::cat.out along each dim of size 1), viewed as [B, n, k] /
    [B, k, m]; the product viewed as the result. None for a vector operand
    (torch's 1-D rules), which keeps the plain call."""
    shape = [int(d) for d in n.shape]
    if len(ins) != 2 or any(len(x.sizes) < 2 for x in ins) or len(shape) < 2:
        return None
    batch = shape[:-2]
    flat = int(np.prod(batch)) if batch else 1
    mats = []
    for x in ins:
        x = _relayout(b, x, list(range(len(x.sizes))))
        sizes = [1] * (len(batch) - (len(x.sizes) - 2)) + list(x.sizes)
        x = raw_view(b, x, sizes, list(range(len(sizes))))
        for d, want in enumerate(batch):
            if sizes[d] != want:
                sizes = sizes[:d] + [want] + sizes[d + 1:]
                joined = new_act(b, ScalarType.FLOAT, sizes, dim_order=list(range(len(sizes))))
                b.call("aten::cat.out", tensors=[x.value] * want, dim=d, out=joined.value)
                x = joined
        mats.append(raw_view(b, x, [flat] + sizes[-2:], [0, 1, 2]))
    y = new_act(b, ScalarType.FLOAT, [flat, shape[-2], shape[-1]], dim_order=[0, 1, 2])
    b.call("aten::bmm.out", self=mats[0].value, mat2=mats[1].value, out=y.value)
    return _relayout(b, raw_view(b, y, shape, list(range(len(shape)))), layout(shape))


def lower_frexp(x: Act, shape, b: ProgramBuilder) -> tuple:
    """torch.frexp of fp32 x (capture_float_bits): one aten::frexp.Tensor_out
    call, its mantissa (float32) and exponent (int32) in one layout, the
    value's own for its shape."""
    mantissa = new_act(b, ScalarType.FLOAT, [int(d) for d in shape])
    exponent = new_act(b, ScalarType.INT, [int(d) for d in shape])
    b.call("aten::frexp.Tensor_out", self=x.value, mantissa=mantissa.value, exponent=exponent.value)
    return mantissa, exponent


def lower_fp32_rows(n: Node, ids: Act, b: ProgramBuilder, fallbacks: List[str], table: Optional[Act] = None) -> Act:
    """aten::embedding.out on a constant fp32 table (attrs weight), or on
    `table`, a float32 [rows, dim] value of the program, by int64 / int32
    ids: the rows as they are, every id checked by the kernel."""
    if ids.dtype not in (ScalarType.LONG, ScalarType.INT):
        from ...lower import LoweringError
        raise LoweringError(f"{origin(n)}: its ids are not an int64 or int32 tensor")
    if table is None:
        weight = b.constant(np.asarray(n.attrs["weight"], np.float32))
    else:
        weight = _relayout(b, table, list(range(len(table.sizes)))).value
    out = new_act(b, ScalarType.FLOAT, n.shape, dim_order=list(range(len(n.shape))))
    b.call("aten::embedding.out", weight=weight, indices=ids.value,
           padding_idx=-1, scale_grad_by_freq=False, sparse=False, out=out.value)
    fallbacks.append(f"{origin(n)}: aten::embedding.out")
    return out
