"""Operator signatures (schema parameter names and kinds, `out` last) for
every operator ptec emits or understands, and the list of operators the
ptec runtime has kernels for.

Kinds: Tensor, Tensor?, Tensor[], int, int?, int[], int[]?, float, bool, Scalar,
Scalar?, ScalarType, ScalarType?. A KernelCall carries one value per
parameter, then the return slot repeating `out` (pte-format.md §4.7), or a
TensorList of the outputs for the operators in OUTPUTS. The aten schemas are
those of PyTorch's native_functions.yaml out variants, the names and
overloads ExecuTorch's portable library registers.
Sources: cortex-m-ops.md §3 and §4.
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, Tuple

Sig = List[Tuple[str, str]]

_CONV_TAIL = [("input_offset", "int"), ("output_offset", "int"),
              ("requantize_multipliers", "Tensor"), ("requantize_shifts", "Tensor"),
              ("activation_min", "int"), ("activation_max", "int"),
              ("scratch", "Tensor"), ("out", "Tensor")]
_QPARAMS = [("scale", "float"), ("zero_point", "int"), ("quant_min", "int"),
            ("quant_max", "int"), ("dtype", "ScalarType")]

SIGNATURES: Dict[str, Sig] = {
    # cortex_m (cortex-m-ops.md §3)
    "cortex_m::quantize_per_tensor.out": [("input", "Tensor")] + _QPARAMS + [("out", "Tensor")],
    "cortex_m::dequantize_per_tensor.out": [("input", "Tensor")] + _QPARAMS + [("out", "Tensor")],
    "cortex_m::quantized_add.out": [
        ("self", "Tensor"), ("self_zero_point", "int"), ("self_multiplier", "int"),
        ("self_shift", "int"), ("other", "Tensor"), ("other_zero_point", "int"),
        ("other_multiplier", "int"), ("other_shift", "int"), ("output_zero_point", "int"),
        ("output_multiplier", "int"), ("output_shift", "int"), ("activation_min", "int"),
        ("activation_max", "int"), ("out", "Tensor")],
    "cortex_m::quantized_mul.out": [
        ("self", "Tensor"), ("self_zero_point", "int"), ("other", "Tensor"),
        ("other_zero_point", "int"), ("output_zero_point", "int"),
        ("output_multiplier", "int"), ("output_shift", "int"), ("out", "Tensor")],
    "cortex_m::quantized_div.out": [
        ("self", "Tensor"), ("self_zero_point", "int"), ("other", "Tensor"),
        ("other_zero_point", "int"), ("output_zero_point", "int"),
        ("output_scale", "float"), ("out", "Tensor")],
    "cortex_m::quantized_activation.out": [("input", "Tensor"), ("lut", "Tensor"),
                                           ("out", "Tensor")],
    "cortex_m::minimum.out": [("self", "Tensor"), ("other", "Tensor"), ("out", "Tensor")],
    "cortex_m::maximum.out": [("self", "Tensor"), ("other", "Tensor"), ("out", "Tensor")],
    "cortex_m::quantized_linear.out": [
        ("input", "Tensor"), ("weights", "Tensor"), ("bias", "Tensor?"),
        ("kernel_sum", "Tensor?"), ("input_offset", "int"), ("filter_offset", "int"),
        ("output_offset", "int"), ("requantize_multipliers", "int[]"),
        ("requantize_shifts", "int[]"), ("activation_max", "int"),
        ("activation_min", "int"), ("out", "Tensor")],
    "cortex_m::quantized_conv2d.out": [
        ("input", "Tensor"), ("weight", "Tensor"), ("bias", "Tensor?"), ("stride", "int[]"),
        ("padding", "int[]"), ("dilation", "int[]")] + _CONV_TAIL,
    "cortex_m::quantized_depthwise_conv2d.out": [
        ("input", "Tensor"), ("weight", "Tensor"), ("bias", "Tensor?"), ("stride", "int[]"),
        ("padding", "int[]"), ("dilation", "int[]"), ("depth_multiplier", "int")] + _CONV_TAIL,
    "cortex_m::quantized_transpose_conv2d.out": [
        ("input", "Tensor"), ("weight", "Tensor"), ("bias", "Tensor?"), ("stride", "int[]"),
        ("padding", "int[]"), ("output_padding", "int[]"), ("dilation", "int[]"),
        ("input_offset", "int"), ("output_offset", "int"),
        ("requantize_multipliers", "Tensor"), ("requantize_shifts", "Tensor"),
        ("activation_min", "int"), ("activation_max", "int"), ("scratch", "Tensor"),
        ("output_scratch", "Tensor"), ("out", "Tensor")],
    "cortex_m::quantized_batch_matmul.out": [
        ("lhs", "Tensor"), ("lhs_zero_point", "int"), ("rhs_transposed", "Tensor"),
        ("rhs_zero_point", "int"), ("output_zero_point", "int"),
        ("output_multiplier", "int"), ("output_shift", "int"), ("scratch", "Tensor"),
        ("out", "Tensor")],
    "cortex_m::quantized_avg_pool2d.out": [
        ("input", "Tensor"), ("kernel_size", "int[]"), ("stride", "int[]"),
        ("padding", "int[]"), ("ceil_mode", "bool"), ("zero_point", "int"),
        ("multiplier", "int"), ("shift", "int"), ("scratch", "Tensor"), ("out", "Tensor")],
    "cortex_m::quantized_max_pool2d.out": [
        ("input", "Tensor"), ("kernel_size", "int[]"), ("stride", "int[]"),
        ("padding", "int[]"), ("dilation", "int[]"), ("ceil_mode", "bool"),
        ("input_zero_point", "int"), ("output_zero_point", "int"),
        ("activation_min", "int"), ("activation_max", "int"), ("out", "Tensor")],
    "cortex_m::softmax.out": [
        ("input", "Tensor"), ("dim", "int"), ("input_zero_point", "int"),
        ("output_zero_point", "int"), ("input_multiplier", "int"), ("input_shift", "int"),
        ("diff_min", "int"), ("out", "Tensor")],
    "cortex_m::transpose.out": [("input", "Tensor"), ("perm", "int[]"), ("out", "Tensor")],
    "cortex_m::pad.out": [("input", "Tensor"), ("pre_pad", "int[]"), ("post_pad", "int[]"),
                          ("pad_value", "int"), ("out", "Tensor")],
    # generic ops (cortex-m-ops.md §4)
    "dim_order_ops::_clone_dim_order.out": [("self", "Tensor"), ("non_blocking", "bool"),
                                            ("dim_order", "int[]?"), ("out", "Tensor")],
    "quantized_decomposed::quantize_per_tensor.out": [("input", "Tensor")] + _QPARAMS
    + [("out", "Tensor")],
    "quantized_decomposed::dequantize_per_tensor.out": [("input", "Tensor")] + _QPARAMS
    + [("out_dtype", "ScalarType?"), ("out", "Tensor")],
    "aten::add.out": [("self", "Tensor"), ("other", "Tensor"), ("alpha", "Scalar"),
                      ("out", "Tensor")],
    "aten::sub.out": [("self", "Tensor"), ("other", "Tensor"), ("alpha", "Scalar"),
                      ("out", "Tensor")],
    "aten::mul.out": [("self", "Tensor"), ("other", "Tensor"), ("out", "Tensor")],
    "aten::div.out": [("self", "Tensor"), ("other", "Tensor"), ("out", "Tensor")],
    "aten::convolution.out": [
        ("input", "Tensor"), ("weight", "Tensor"), ("bias", "Tensor?"), ("stride", "int[]"),
        ("padding", "int[]"), ("dilation", "int[]"), ("transposed", "bool"),
        ("output_padding", "int[]"), ("groups", "int"), ("out", "Tensor")],
    "aten::linear.out": [("input", "Tensor"), ("weight", "Tensor"), ("bias", "Tensor?"),
                         ("out", "Tensor")],
    "aten::relu.out": [("self", "Tensor"), ("out", "Tensor")],
    "aten::sigmoid.out": [("self", "Tensor"), ("out", "Tensor")],
    "aten::tanh.out": [("self", "Tensor"), ("out", "Tensor")],
    "aten::clamp.out": [("self", "Tensor"), ("min", "Scalar?"), ("max", "Scalar?"),
                        ("out", "Tensor")],
    "aten::_softmax.out": [("self", "Tensor"), ("dim", "int"), ("half_to_float", "bool"),
                           ("out", "Tensor")],
    "aten::avg_pool2d.out": [
        ("self", "Tensor"), ("kernel_size", "int[]"), ("stride", "int[]"),
        ("padding", "int[]"), ("ceil_mode", "bool"), ("count_include_pad", "bool"),
        ("divisor_override", "int?"), ("out", "Tensor")],
    "aten::mean.out": [("self", "Tensor"), ("dim", "int[]?"), ("keepdim", "bool"),
                       ("dtype", "ScalarType?"), ("out", "Tensor")],
    "aten::view_copy.out": [("self", "Tensor"), ("size", "int[]"), ("out", "Tensor")],
    "aten::permute_copy.out": [("self", "Tensor"), ("dims", "int[]"), ("out", "Tensor")],
    "aten::cat.out": [("tensors", "Tensor[]"), ("dim", "int"), ("out", "Tensor")],
    "aten::hardtanh.out": [("self", "Tensor"), ("min_val", "Scalar"), ("max_val", "Scalar"),
                           ("out", "Tensor")],
    # max_pool2d has no out variant of its own: this is the one PyTorch and
    # ExecuTorch's portable library register. Two outputs: the call ends with
    # a TensorList [out, indices] instead of a repeat of out.
    "aten::max_pool2d_with_indices.out": [
        ("self", "Tensor"), ("kernel_size", "int[]"), ("stride", "int[]"),
        ("padding", "int[]"), ("dilation", "int[]"), ("ceil_mode", "bool"), ("out", "Tensor"),
        ("indices", "Tensor")],
    "aten::_adaptive_avg_pool2d.out": [("self", "Tensor"), ("output_size", "int[]"),
                                       ("out", "Tensor")],
    "aten::_native_batch_norm_legit_no_training.out": [
        ("input", "Tensor"), ("weight", "Tensor?"), ("bias", "Tensor?"),
        ("running_mean", "Tensor"), ("running_var", "Tensor"), ("momentum", "float"),
        ("eps", "float"), ("out0", "Tensor"), ("out1", "Tensor"), ("out2", "Tensor")],
    "aten::slice_copy.Tensor_out": [("self", "Tensor"), ("dim", "int"), ("start", "int?"),
                                    ("end", "int?"), ("step", "int"), ("out", "Tensor")],
    "aten::squeeze_copy.dims_out": [("self", "Tensor"), ("dim", "int[]"), ("out", "Tensor")],
    "aten::unsqueeze_copy.out": [("self", "Tensor"), ("dim", "int"), ("out", "Tensor")],
}

# Operators with several outputs: their out parameters, in schema order. The
# KernelCall's return slot is then one TensorList of them (pte-format.md
# 4.7); every other operator has the single output `out`.
OUTPUTS: Dict[str, Tuple[str, ...]] = {
    "aten::max_pool2d_with_indices.out": ("out", "indices"),
    "aten::_native_batch_norm_legit_no_training.out": ("out0", "out1", "out2"),
}


def outputs(key: str) -> Tuple[str, ...]:
    return OUTPUTS.get(key, ("out",))


def signature(key: str) -> Sig:
    return SIGNATURES[key]


def cortex_m_ops() -> List[str]:
    return sorted(k for k in SIGNATURES if k.startswith("cortex_m::"))


# --------------------------------------------------------------------------
# Which kernels the ptec runtime has.

_SYMBOL_PREFIXES = [  # symbol prefix -> operator namespace
    ("ptec_kernel_cortex_m_", "cortex_m::"),
    ("ptec_kernel_aten_", "aten::"),
    ("ptec_kernel_qd_", "quantized_decomposed::"),
    ("ptec_kernel_dim_order_", "dim_order_ops::_"),
]
_KNOWN_SYMBOLS = {
    "ptec_kernel_dim_order_clone_out": "dim_order_ops::_clone_dim_order.out",
}


def repo_root() -> str:
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _name_from_symbol(symbol: str) -> str:
    if symbol in _KNOWN_SYMBOLS:
        return _KNOWN_SYMBOLS[symbol]
    for prefix, ns in _SYMBOL_PREFIXES:
        if symbol.startswith(prefix):
            rest = symbol[len(prefix):]
            base, _, overload = rest.rpartition("_")
            return f"{ns}{base}.{overload}" if base else ns + rest
    return symbol


def _names_in_sources(kernels_dir: str) -> Dict[str, str]:
    """symbol -> .name string, read from the kernel sources when present."""
    found = {}
    pat = re.compile(r"const\s+ptec_kernel\s+(\w+)\s*=\s*\{\s*(?:\.name\s*=\s*)?\"([^\"]+)\"")
    for root, _, files in os.walk(kernels_dir):
        for f in files:
            if f.endswith(".c"):
                with open(os.path.join(root, f), errors="replace") as fh:
                    for sym, name in pat.findall(fh.read()):
                        found[sym] = name
    return found


def kernel_symbols(root: str = None) -> Dict[str, str]:
    """Operator key -> PTEC_KERNEL symbol for every kernel in all_kernels.def."""
    root = root or repo_root()
    kernels_dir = os.path.join(root, "src", "kernels")
    def_file = os.path.join(kernels_dir, "all_kernels.def")
    if not os.path.exists(def_file):
        return {}
    text = re.sub(r"/\*.*?\*/", "", open(def_file).read(), flags=re.S)
    from_src = _names_in_sources(kernels_dir)
    return {(from_src.get(sym) or _name_from_symbol(sym)): sym
            for sym in re.findall(r"PTEC_KERNEL\((\w+)\)", text)}


def kernel_list_def(operators, root: str = None) -> str:
    """A PTEC_KERNEL_LIST file selecting exactly these operators (selective
    build: cmake -DPTEC_KERNEL_LIST=that.def)."""
    symbols = kernel_symbols(root)
    missing = sorted(set(operators) - set(symbols))
    if missing:
        raise KeyError("no kernel symbol for " + ", ".join(missing))
    lines = ["/* Generated by ptec: the kernels this program uses. */"]
    lines += [f"PTEC_KERNEL({symbols[k]})" for k in sorted(set(operators))]
    return "\n".join(lines) + "\n"


def runtime_kernels(root: str = None) -> List[str]:
    """Operator keys ptec can run: the PTEC_KERNEL lines of
    src/kernels/all_kernels.def, plus every cortex_m op of the spec."""
    root = root or repo_root()
    kernels_dir = os.path.join(root, "src", "kernels")
    names = set(cortex_m_ops())
    def_file = os.path.join(kernels_dir, "all_kernels.def")
    if os.path.exists(def_file):
        text = re.sub(r"/\*.*?\*/", "", open(def_file).read(), flags=re.S)
        symbols = re.findall(r"PTEC_KERNEL\((\w+)\)", text)
        from_src = _names_in_sources(kernels_dir)
        for sym in symbols:
            names.add(from_src.get(sym) or _name_from_symbol(sym))
    return sorted(names)
