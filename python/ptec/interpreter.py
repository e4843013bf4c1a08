"""Run a .pte Program in Python with the numpy reference kernels
(ptec.reference.cortex_m). Tensors live where the memory plan puts them, in
one bytearray per arena, so a wrong plan (two live tensors sharing bytes)
corrupts the result just as it would on the device. Used to check compiled
programs numerically without the C runtime, and as the oracle the C runtime
must match bit for bit.

Inputs and outputs are numpy arrays in *logical* shape (NCHW for 4-D); the
interpreter converts to and from each tensor's dim_order.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence

import numpy as np

from .ops import SIGNATURES, outputs
from .pte.schema import (NUMPY_DTYPE, Bool, Double, DoubleList, Int, IntList, KernelCall, Null, Program,
                         ScalarType, Tensor, TensorList, TensorShapeDynamism)
from .pte.schema import OptionalTensorList

_SKIP = ("scratch", "output_scratch", "out")


class InterpreterError(RuntimeError):
    pass


class _Memory:
    def __init__(self, program: Program, plan):
        self.program = program
        self.plan = plan
        sizes = plan.non_const_buffer_sizes or [0]
        self.arenas = [bytearray(int(n)) for n in sizes]
        self.private: Dict[int, bytearray] = {}
        # a bound-dynamic tensor's current sizes, set by its kernel (the
        # runtime's writable copy); its bytes start its planned bound
        self.current: Dict[int, list] = {}
        # instruction -> its random kernel's generator: seeded at the first
        # run (the C runtime seeds at load), kept across runs, not reset
        self.rng: Dict[int, object] = {}

    def buffer(self, index: int, t: Tensor):
        if t.allocation_info is not None:
            a = t.allocation_info
            arena = self.arenas[a.memory_id]
            off = a.offset
            if off + t.nbytes > len(arena):
                raise InterpreterError(f"v{index}: {off}+{t.nbytes} outside arena {a.memory_id}")
            return memoryview(arena)[off:off + t.nbytes]
        if t.is_constant:
            return memoryview(bytearray(self.program.constant_bytes(t)))
        if index not in self.private:
            self.private[index] = bytearray(t.nbytes)
        return memoryview(self.private[index])

    def physical(self, index: int, t: Tensor) -> np.ndarray:
        dt = np.dtype(NUMPY_DTYPE[ScalarType(t.scalar_type)])
        sizes = self.current.get(index, t.sizes)
        phys = [sizes[d] for d in t.dim_order] if sizes else []
        n = int(np.prod(phys, dtype=np.int64)) * dt.itemsize
        return np.frombuffer(self.buffer(index, t)[:n], dt).reshape(phys)

    def write_dynamic(self, index: int, t: Tensor, arr: np.ndarray) -> None:
        """A bound-dynamic result (row-major): its bytes, and its sizes,
        none of which may pass the bound (the C runtime's check)."""
        arr = np.ascontiguousarray(arr, dtype=np.dtype(NUMPY_DTYPE[ScalarType(t.scalar_type)]))
        if arr.ndim != len(t.sizes) or any(n > b for n, b in zip(arr.shape, t.sizes)):
            raise InterpreterError(f"v{index}: sizes {list(arr.shape)} past the bound {list(t.sizes)}")
        data = arr.tobytes()
        self.buffer(index, t)[:len(data)] = data
        self.current[index] = list(arr.shape)

    def logical(self, index: int, t: Tensor) -> np.ndarray:
        arr = self.physical(index, t)
        return arr.transpose(np.argsort(list(t.dim_order))) if arr.ndim else arr

    def write_physical(self, index: int, t: Tensor, arr: np.ndarray) -> None:
        dt = np.dtype(NUMPY_DTYPE[ScalarType(t.scalar_type)])
        data = np.ascontiguousarray(arr, dtype=dt).tobytes()
        if len(data) != t.nbytes:
            raise InterpreterError(f"v{index}: result has {len(data)} bytes, tensor {t.nbytes}")
        self.buffer(index, t)[:] = data

    def write_logical(self, index: int, t: Tensor, arr: np.ndarray) -> None:
        arr = np.asarray(arr).reshape(t.sizes)
        self.write_physical(index, t, arr.transpose(list(t.dim_order)) if arr.ndim else arr)


def _scalar(values, i):
    v = values[i].val
    if isinstance(v, Int):
        return v.int_val
    if isinstance(v, Double):
        return v.double_val
    if isinstance(v, Bool):
        return v.bool_val
    if isinstance(v, Null):
        return None
    if isinstance(v, IntList):
        return [values[j].val.int_val for j in v.items]
    if isinstance(v, DoubleList):
        return list(v.items or [])
    raise InterpreterError(f"v{i}: unexpected {type(v).__name__}")


def _pad_layout(t: Tensor, phys: np.ndarray) -> np.ndarray:
    """cortex_m::pad pads a 4-D tensor in NHWC slots whenever the kernel may
    treat it as channels-last: dim order [0,2,3,1], or C == 1, or H == W == 1
    (cortex-m-ops.md 1.2, 3.17). In the last two cases the bytes of an
    identity-order tensor already are NHWC; only the view changes."""
    if len(t.sizes) == 4 and list(t.dim_order) == [0, 1, 2, 3] and (
            t.sizes[1] == 1 or (t.sizes[2] == 1 and t.sizes[3] == 1)):
        n, c, h, w = t.sizes
        return phys.reshape(n, h, w, c)
    return phys


def _copy_initial_values(program: Program, plan, mem: _Memory) -> None:
    """What the runtime does at load and on ptec_method_reset_state: each
    planned tensor with an initial value (mutable_data_segments[0]) gets it."""
    for i, ev in enumerate(plan.values):
        t = ev.val
        if isinstance(t, Tensor) and t.has_initial_value:
            mem.buffer(i, t)[:] = program.initial_bytes(t)


class Session:
    """One loaded method: the planned memory lives from one run to the next,
    as in the C runtime, so state tensors (--stateful recurrent layers) carry
    over. Created with the initial values in place; reset() copies them back
    (as ptec_method_reset_state, it leaves the random kernels' generators
    going: they restart only with a new Session, as at a load)."""

    def __init__(self, program: Program, method: str = "forward"):
        self.program, self.method = program, method
        self.plan = program.plan(method)
        self.memory = _Memory(program, self.plan)
        self.reset()

    def reset(self) -> None:
        _copy_initial_values(self.program, self.plan, self.memory)

    def run(self, inputs: Sequence[np.ndarray], trace: bool = False):
        return run_program(self.program, inputs, self.method, trace, memory=self.memory)


def run_program(program: Program, inputs: Sequence[np.ndarray], method: str = "forward",
                trace: bool = False, memory: Optional[_Memory] = None):
    """Returns the outputs (logical shapes); with trace=True also a list of
    (instruction index, op key, out value index, physical result copy).
    memory: a Session's (the state of earlier runs); by default fresh memory
    with the initial values in place (one run after load)."""
    from .reference import cortex_m as ref
    plan = program.plan(method)
    values = plan.values
    mem = memory
    if mem is None:
        mem = _Memory(program, plan)
        _copy_initial_values(program, plan, mem)
    for idx, x in zip(plan.inputs, inputs):
        mem.write_logical(idx, values[idx].val, np.asarray(x))
    log = []
    for n, ins in enumerate(plan.chains[0].instructions):
        call = ins.instr_args
        if not isinstance(call, KernelCall):
            raise InterpreterError(f"instruction {n}: only kernel calls are supported")
        key = plan.operators[call.op_index].key
        sig = SIGNATURES.get(key)
        if sig is None or len(call.args) != len(sig) + 1:
            raise InterpreterError(f"instruction {n}: {key} with {len(call.args)} args")
        named = dict(zip([p for p, _ in sig], call.args))
        out_idx = named[outputs(key)[0]]
        out_t = values[out_idx].val

        def arg(name, kind, logical=False):
            i = named[name]
            v = values[i].val
            if isinstance(v, Null):
                return None
            if kind.startswith("Tensor"):
                if isinstance(v, TensorList):
                    return [mem.logical(j, values[j].val).copy() for j in v.items]
                if isinstance(v, OptionalTensorList):
                    return [None if j < 0 else mem.logical(j, values[j].val).copy() for j in v.items]
                return mem.logical(i, v).copy() if logical else mem.physical(i, v).copy()
            return _scalar(values, i)

        ns, _, name = key.partition("::")
        name = name.rsplit(".", 1)[0]
        if key in _RANDOM:
            from .reference import random_ops as R
            if n not in mem.rng:
                mem.rng[n] = R.Pcg32(int(arg("seed", "int")))
            mem.write_logical(out_idx, out_t, _RANDOM[key](arg, out_t, mem.rng[n]))
        elif ns in ("cortex_m", "ptec") and key not in _PORTABLE or (ns == "quantized_decomposed" and name in (
                "quantize_per_tensor", "dequantize_per_tensor")):
            params = [arg(p, k) for p, k in sig if p not in _SKIP and p != "out_dtype"]
            if name == "pad":
                params[0] = _pad_layout(values[named["input"]].val, params[0])
            result = getattr(ref, name)(*params)
            if name == "quantized_svdf":          # the kernel also writes its state
                st = named["activation_state"]
                state = (np.zeros_like(params[4]) if params[14] else params[4])
                _, after = ref.svdf_frames(*params[:4], state, *params[5:14])
                mem.write_physical(st, values[st].val, after.reshape(-1))
            if name == "quantized_lstm" and params[17] is not None:   # in/out state: the final h and c
                _, h_n, c_n = ref.lstm_sequence(*params)
                for pname, v in (("initial_hidden", h_n), ("initial_cell", c_n)):
                    mem.write_physical(named[pname], values[named[pname]].val, v.reshape(-1))
            mem.write_physical(out_idx, out_t, np.asarray(result).reshape(-1))
        elif key == "dim_order_ops::_clone_dim_order.out":
            src = named["self"]
            mem.write_logical(out_idx, out_t, mem.logical(src, values[src].val).copy())
        elif key in _PORTABLE:
            result = _PORTABLE[key](arg, named, out_t)
            if out_t.shape_dynamism == TensorShapeDynamism.DYNAMIC_BOUND:
                mem.write_dynamic(out_idx, out_t, np.asarray(result))
            elif isinstance(result, tuple):       # several outputs, in schema order
                for name, r in zip(outputs(key), result):
                    t = values[named[name]].val
                    if r is not None:
                        mem.write_logical(named[name], t, np.asarray(r).reshape(t.sizes))
            else:
                mem.write_logical(out_idx, out_t, np.asarray(result).reshape(out_t.sizes))
        else:
            raise InterpreterError(f"instruction {n}: no reference for {key}")
        if trace:
            log.append((n, key, out_idx, mem.physical(out_idx, out_t).copy()))
    outs = [mem.logical(i, values[i].val).copy() for i in plan.outputs]
    return (outs, log) if trace else outs


def _random_dropout(arg, out, rng):
    from .reference import random_ops as R
    return R.random_dropout(arg("self", "Tensor", True), arg("p", "float"), arg("mask_dims", "int"),
                            arg("zero_point", "int"), rng)


def _random_fractional_pick(arg, out, rng):
    from .reference import random_ops as R
    return R.random_fractional_pick(arg("windows", "Tensor", True), arg("kernel_size", "int[]"), out.sizes, rng)


# the random kernels: logical arrays and the instruction's generator (ptec.reference.random_ops)
_RANDOM = {"ptec::random_dropout.out": _random_dropout,
           "ptec::random_fractional_pick.out": _random_fractional_pick}


# -- portable (aten) operators --------------------------------------------------
# Each takes arg(name, kind, logical=True) (logical-order arrays), the named
# argument indices and the out tensor, and returns the result (or a tuple of
# results for several outputs). Numerics: ptec.reference.portable.

# the functions of two tensors that take integers only (int_binary.c)
_INT_ONLY = ("floor_divide", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "gcd", "lcm")


def _frexp_reference(x):
    from .reference.float_bits import frexp
    return frexp(x)


def _portable_table():
    from .reference import pool_indices as PI
    from .reference import index_blocks as PX
    from .reference import linalg as PL
    from .reference import roi_align as PR
    from .reference import portable as P

    def t(arg, name):
        return arg(name, "Tensor", True)

    def s(arg, name):
        return arg(name, "int")

    def binary(kind, alpha):
        def run(arg, named, out):
            r = P.binary(kind, t(arg, "self"), t(arg, "other"), s(arg, "alpha") if alpha else 1)
            return np.broadcast_to(r, out.sizes)
        return run

    def binary_math(fn):
        def run(arg, named, out):
            other = "exponent" if fn == "pow" else "other"
            if fn in _INT_ONLY or t(arg, "self").dtype != np.float32:      # integers (int_binary.c)
                return np.broadcast_to(P.int_binary(fn, t(arg, "self"), t(arg, other)), out.sizes)
            return np.broadcast_to(P.binary_math(fn, t(arg, "self"), t(arg, other)), out.sizes)
        return run

    def to_dtype(arg, named, out):
        ints = (ScalarType.LONG, ScalarType.INT, ScalarType.SHORT, ScalarType.CHAR, ScalarType.BYTE)
        if t(arg, "self").dtype == np.bool_ or (np.issubdtype(t(arg, "self").dtype, np.integer) and
                                                out.scalar_type in ints + (ScalarType.DOUBLE,)) \
                or t(arg, "self").dtype == np.float64 or out.scalar_type == ScalarType.DOUBLE:
            return P.convert(t(arg, "self"), NUMPY_DTYPE[ScalarType(out.scalar_type)])
        if out.scalar_type in (ScalarType.LONG, ScalarType.INT):
            return P.to_integer(t(arg, "self"), np.dtype(NUMPY_DTYPE[ScalarType(out.scalar_type)]))
        if t(arg, "self").dtype == np.float16:          # a Half program input into float32
            return P.half_to_float(t(arg, "self"))
        if t(arg, "self").dtype == np.uint16:           # a BFloat16 one (its bit patterns)
            return P.bfloat16_bits_to_float(t(arg, "self"))
        if out.scalar_type == ScalarType.HALF:
            return P.to_half(t(arg, "self"))
        if out.scalar_type == ScalarType.BFLOAT16:
            return P.to_bfloat16_bits(t(arg, "self"))
        return P.to_float32(t(arg, "self"))

    def conv(arg, named, out):
        return P.convolution(t(arg, "input"), t(arg, "weight"), t(arg, "bias"), s(arg, "stride"),
                             s(arg, "padding"), s(arg, "dilation"), s(arg, "transposed"),
                             s(arg, "output_padding"), s(arg, "groups"), out.sizes)

    def max_pool(arg, named, out):
        return P.max_pool2d_with_indices(t(arg, "self"), s(arg, "kernel_size"), s(arg, "stride"),
                                         s(arg, "padding"), s(arg, "dilation"), s(arg, "ceil_mode"),
                                         out.sizes)

    def batch_norm(arg, named, out):
        y = P.batch_norm(t(arg, "input"), t(arg, "weight"), t(arg, "bias"), t(arg, "running_mean"),
                         t(arg, "running_var"), s(arg, "eps"))
        return (y, None, None)

    def layer_norm(arg, named, out):
        y = P.layer_norm(t(arg, "input"), len(s(arg, "normalized_shape")), t(arg, "weight"), t(arg, "bias"),
                         s(arg, "eps"))
        return (y, None, None)

    def group_norm(arg, named, out):
        y = P.group_norm(t(arg, "input"), s(arg, "group"), t(arg, "weight"), t(arg, "bias"), s(arg, "eps"))
        return (y, None, None)

    def slice_copy(arg, named, out):
        x = t(arg, "self")
        return P.slice_copy(x, s(arg, "dim"), s(arg, "start"), s(arg, "end"), s(arg, "step"))

    def unsqueeze(arg, named, out):
        x = t(arg, "self")
        return np.expand_dims(x, s(arg, "dim") % (x.ndim + 1))

    return {
        "aten::add.out": binary("add", True), "aten::sub.out": binary("sub", True),
        "aten::mul.out": binary("mul", False), "aten::div.out": binary("div", False),
        "aten::relu.out": lambda arg, named, out: P.clamp(t(arg, "self"), 0, None),
        "aten::clamp.out": lambda arg, named, out: P.clamp(t(arg, "self"), s(arg, "min"), s(arg, "max")),
        "aten::hardtanh.out": lambda arg, named, out: P.clamp(t(arg, "self"), s(arg, "min_val"),
                                                              s(arg, "max_val")),
        "aten::sigmoid.out": lambda arg, named, out: P.sigmoid(t(arg, "self")),
        "aten::tanh.out": lambda arg, named, out: P.tanh(t(arg, "self")),
        **{f"aten::{fn}.out": (lambda fn: lambda arg, named, out: P.float_unary(fn, t(arg, "self")))(fn)
           for fn in P.FLOAT_UNARY},
        "aten::convolution.out": conv,
        "aten::linear.out": lambda arg, named, out: P.linear(t(arg, "input"), t(arg, "weight"),
                                                             t(arg, "bias")),
        "aten::bmm.out": lambda arg, named, out: P.bmm(t(arg, "self"), t(arg, "mat2")),
        "aten::_softmax.out": lambda arg, named, out: P.softmax(t(arg, "self"), s(arg, "dim")),
        "aten::_log_softmax.out": lambda arg, named, out: P.log_softmax(t(arg, "self"), s(arg, "dim")),
        "aten::avg_pool2d.out": lambda arg, named, out: P.avg_pool2d(
            t(arg, "self"), s(arg, "kernel_size"), s(arg, "stride"), s(arg, "padding"),
            s(arg, "ceil_mode"), s(arg, "count_include_pad"), s(arg, "divisor_override"), out.sizes),
        "aten::max_pool2d_with_indices.out": max_pool,
        # (mantissa, exponent) of op_float_bits.c
        "aten::frexp.Tensor_out": lambda arg, named, out: _frexp_reference(t(arg, "self")),
        "aten::_adaptive_avg_pool2d.out": lambda arg, named, out: P.adaptive_avg_pool2d(
            t(arg, "self"), s(arg, "output_size")),
        "aten::mean.out": lambda arg, named, out: P.mean(t(arg, "self"), s(arg, "dim"),
                                                         s(arg, "keepdim")),
        "aten::_native_batch_norm_legit_no_training.out": batch_norm,
        "aten::argmax.out": lambda arg, named, out: P.arg_reduce(t(arg, "self"), s(arg, "dim"),
                                                             s(arg, "keepdim"), False),
        "aten::argmin.out": lambda arg, named, out: P.arg_reduce(t(arg, "self"), s(arg, "dim"),
                                                             s(arg, "keepdim"), True),
        **{f"aten::{k}": (lambda arg, named, out, _k=k.split(".")[0]: P.int_reduce(
            _k, t(arg, "self"), arg("dim", "int[]"), s(arg, "keepdim"), NUMPY_DTYPE[ScalarType(out.scalar_type)]))
           for k in ("sum.IntList_out", "amax.out", "amin.out")},
        "aten::prod.int_out": lambda arg, named, out: P.int_reduce(
            "prod", t(arg, "self"), [s(arg, "dim")], s(arg, "keepdim"), NUMPY_DTYPE[ScalarType(out.scalar_type)]),
        "aten::prod.out": lambda arg, named, out: P.int_reduce(
            "prod", t(arg, "self"), None, False, NUMPY_DTYPE[ScalarType(out.scalar_type)]),
        "aten::cumsum.out": lambda arg, named, out: P.int_cumsum(t(arg, "self"), s(arg, "dim"),
                                                                 NUMPY_DTYPE[ScalarType(out.scalar_type)]),
        "aten::sort.values": lambda arg, named, out: P.ordered(t(arg, "self"), s(arg, "dim"), s(arg, "descending"),
                                                               None),
        "aten::topk.values": lambda arg, named, out: P.ordered(t(arg, "self"), s(arg, "dim"), s(arg, "largest"),
                                                               s(arg, "k")),
        **{f"aten::{k}": (lambda arg, named, out, _r=k.split(".")[0]: P.row_pick(
            t(arg, "self"), s(arg, "dim"), s(arg, "keepdim"), _r)) for k in ("median.dim_values",
                                                                             "nanmedian.dim_values", "mode.values")},
        "aten::cummax.out": lambda arg, named, out: P.running_extreme(t(arg, "self"), s(arg, "dim"), False),
        "aten::cummin.out": lambda arg, named, out: P.running_extreme(t(arg, "self"), s(arg, "dim"), True),
        "dim_order_ops::_to_dim_order_copy.out": to_dtype,
        **{f"aten::{k}.Tensor_out": (lambda arg, named, out, _k=k: np.broadcast_to(
            P.compare(_k, t(arg, "self"), t(arg, "other")), out.sizes)) for k in P._ORDERS},
        **{f"aten::{k}.Scalar_out": (lambda arg, named, out, _k=k: P.compare(
            _k, t(arg, "self"), arg("other", "Scalar"))) for k in P._ORDERS},
        **{f"aten::logical_{k}.out": (lambda arg, named, out, _k=k: np.broadcast_to(
            P.logical(_k, t(arg, "self"), t(arg, "other")), out.sizes)) for k in ("and", "or", "xor")},
        "aten::logical_not.out": lambda arg, named, out: P.logical("not", t(arg, "self")),
        "aten::masked_select.out": lambda arg, named, out: P.masked_select(t(arg, "self"), t(arg, "mask"),
                                                                           list(out.sizes)),
        "aten::index.Tensor_out": lambda arg, named, out: P.index_by_mask(t(arg, "self"), arg("indices", "Tensor?[]",
                                                                                             True), list(out.sizes)),
        "aten::where.self_out": lambda arg, named, out: np.broadcast_to(
            P.where(t(arg, "condition"), t(arg, "self"), t(arg, "other")), out.sizes),
        **{key: binary_math(fn) for fn, key in (("pow", "aten::pow.Tensor_Tensor_out"), ("atan2", "aten::atan2.out"),
                                                 ("hypot", "aten::hypot.out"), ("fmod", "aten::fmod.Tensor_out"),
                                                 ("remainder", "aten::remainder.Tensor_out"),
                                                 ("floor_divide", "aten::floor_divide.out"),
                                                 *((f"bitwise_{k}", f"aten::bitwise_{k}.Tensor_out")
                                                   for k in ("and", "or", "xor")),
                                                 ("left_shift", "aten::bitwise_left_shift.Tensor_out"),
                                                 ("right_shift", "aten::bitwise_right_shift.Tensor_out"),
                                                 ("gcd", "aten::gcd.out"), ("lcm", "aten::lcm.out"),
                                                 ("copysign", "aten::copysign.out"),
                                                 ("nextafter", "aten::nextafter.out"),
                                                 ("igamma", "aten::igamma.out"), ("igammac", "aten::igammac.out"),
                                                 ("zeta", "aten::special_zeta.out"))},
        **{f"aten::{k}.out": (lambda arg, named, out, _k=k: np.broadcast_to(
            P.extreme(_k, t(arg, "self"), t(arg, "other")), out.sizes)) for k in P.EXTREMES},
        "aten::embedding.out": lambda arg, named, out: P.embedding(t(arg, "weight"), t(arg, "indices")),
        "aten::gather.out": lambda arg, named, out: P.gather(t(arg, "self"), s(arg, "dim"), t(arg, "index")),
        "aten::native_layer_norm.out": layer_norm,
        "aten::native_group_norm.out": group_norm,
        "aten::upsample_nearest2d.vec_out": lambda arg, named, out: P.upsample_nearest2d(
            t(arg, "input"), out.sizes[2:], s(arg, "scale_factors")),
        "aten::upsample_bilinear2d.vec_out": lambda arg, named, out: P.upsample_bilinear2d(
            t(arg, "input"), out.sizes[2:], s(arg, "align_corners"), s(arg, "scale_factors")),
        "aten::upsample_bicubic2d.vec_out": lambda arg, named, out: P.upsample_bicubic2d(
            t(arg, "input"), out.sizes[2:], s(arg, "align_corners"), s(arg, "scale_factors")),
        "aten::grid_sampler_2d.out": lambda arg, named, out: P.grid_sampler_2d(
            t(arg, "input"), t(arg, "grid"), s(arg, "interpolation_mode"), s(arg, "padding_mode"),
            s(arg, "align_corners")),
        "ptec::roi_align.out": lambda arg, named, out: PR.roi_align(
            t(arg, "input"), t(arg, "rois"), s(arg, "spatial_scale"), s(arg, "pooled_height"), s(arg, "pooled_width"),
            s(arg, "sampling_ratio"), s(arg, "aligned"), s(arg, "position_sensitive")),
        "aten::grid_sampler_3d.out": lambda arg, named, out: P.grid_sampler_3d(
            t(arg, "input"), t(arg, "grid"), s(arg, "interpolation_mode"), s(arg, "padding_mode"),
            s(arg, "align_corners")),
        "aten::pixel_shuffle.out": lambda arg, named, out: P.pixel_shuffle(t(arg, "self"), s(arg, "upscale_factor")),
        "aten::pixel_unshuffle.out": lambda arg, named, out: P.pixel_shuffle(t(arg, "self"), s(arg, "downscale_factor"),
                                                                             True),
        "aten::reflection_pad1d.out": lambda arg, named, out: P.edge_pad(t(arg, "self"), s(arg, "padding"), True),
        "aten::reflection_pad2d.out": lambda arg, named, out: P.edge_pad(t(arg, "self"), s(arg, "padding"), True),
        "aten::replication_pad1d.out": lambda arg, named, out: P.edge_pad(t(arg, "self"), s(arg, "padding"), False),
        "aten::replication_pad2d.out": lambda arg, named, out: P.edge_pad(t(arg, "self"), s(arg, "padding"), False),
        "ptec::window_max.out": lambda arg, named, out: PI.window_max(
            t(arg, "self"), t(arg, "windows"), out.sizes, out.scalar_type == ScalarType.LONG),
        "ptec::max_unpool.out": lambda arg, named, out: PI.max_unpool(t(arg, "self"), t(arg, "indices"),
                                                                      s(arg, "zero_point"), out.sizes),
        "ptec::linalg_svdvals.out": lambda arg, named, out: PL.svdvals(t(arg, "self")),
        "ptec::linalg_eigvalsh.out": lambda arg, named, out: PL.eigvalsh(t(arg, "self"), s(arg, "upper")),
        "ptec::linalg_det.out": lambda arg, named, out: PL.det(t(arg, "self"), s(arg, "mode")),
        "ptec::linalg_solve.out": lambda arg, named, out: PL.solve(t(arg, "self"), t(arg, "rhs")),
        "ptec::linalg_eigh_vectors.out": lambda arg, named, out: PL.eigh_vectors(t(arg, "self"), s(arg, "upper")),
        "ptec::linalg_svd.out": lambda arg, named, out: PL.svd(t(arg, "self"), s(arg, "which"), s(arg, "full_matrices"),
                                                               s(arg, "rtol")),
        "ptec::linalg_eigvals.out": lambda arg, named, out: PL.eigvals(t(arg, "self")),
        "ptec::linalg_eig_vectors.out": lambda arg, named, out: PL.eig_vectors(t(arg, "self")),
        "ptec::linalg_qr.out": lambda arg, named, out: PL.qr(t(arg, "self"), s(arg, "which"), s(arg, "complete")),
        "ptec::linalg_lu.out": lambda arg, named, out: PL.lu(t(arg, "self"), s(arg, "which")),
        "ptec::linalg_ldl_factor.out": lambda arg, named, out: PL.ldl_factor(t(arg, "self"), s(arg, "which")),
        "ptec::linalg_cholesky.out": lambda arg, named, out: PL.cholesky(t(arg, "self"), s(arg, "upper")),
        "aten::histc.out": lambda arg, named, out: P.histc(t(arg, "self"), s(arg, "bins"), arg("min", "Scalar"),
                                                           arg("max", "Scalar")),
        "ptec::nms.out": lambda arg, named, out: P.nms(t(arg, "boxes"), t(arg, "order"),
                                                       arg("iou_threshold", "float")),
        "ptec::batched_nms.out": lambda arg, named, out: P.batched_nms(
            t(arg, "boxes"), t(arg, "scores"), t(arg, "order"), t(arg, "idxs"), arg("iou_threshold", "float")),
        "ptec::nms.Tensor_out": lambda arg, named, out: P.nms(t(arg, "boxes"), t(arg, "order"),
                                                              P.nms_threshold(t(arg, "iou_threshold"))),
        "ptec::batched_nms.Tensor_out": lambda arg, named, out: P.batched_nms(
            t(arg, "boxes"), t(arg, "scores"), t(arg, "order"), t(arg, "idxs"),
            P.nms_threshold(t(arg, "iou_threshold"))),
        "ptec::view_dtype.out": lambda arg, named, out: P.view_dtype(
            t(arg, "self"), NUMPY_DTYPE[ScalarType(out.scalar_type)], out.sizes),
        "ptec::linalg_cholesky_info.out": lambda arg, named, out: PL.cholesky_info(t(arg, "self"), s(arg, "upper")),
        "ptec::linalg_triangular_solve.out": lambda arg, named, out: PL.triangular_solve(
            t(arg, "self"), t(arg, "rhs"), s(arg, "upper"), s(arg, "transpose"), s(arg, "unitriangular")),
        "ptec::flat_index.out": lambda arg, named, out: PX.flat_index(arg("indices", "Tensor[]"), s(arg, "sizes"),
                                                                      out.sizes),
        "ptec::bag_positions.out": lambda arg, named, out: PX.bag_positions(
            t(arg, "offsets"), s(arg, "length"), s(arg, "include_last_offset")),
        "aten::view_copy.out": lambda arg, named, out: t(arg, "self").reshape(out.sizes),
        "aten::permute_copy.out": lambda arg, named, out: np.transpose(t(arg, "self"), s(arg, "dims")),
        "aten::cat.out": lambda arg, named, out: P.cat(arg("tensors", "Tensor[]"), s(arg, "dim")),
        "aten::slice_copy.Tensor_out": slice_copy,
        "aten::squeeze_copy.dims_out": lambda arg, named, out: P.squeeze_dims(t(arg, "self"),
                                                                              s(arg, "dim")),
        "aten::unsqueeze_copy.out": unsqueeze,
    }


_PORTABLE = _portable_table()
