"""python/ptec/operators.json, the one list of operators: what is generated
from it matches, and what it says about the C kernels is what the kernel
sources say (read here as text, the oracle the package no longer reads)."""
import os
import re

import pytest

from ptec import ops

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
KERNELS = os.path.join(ROOT, "src", "kernels")
NN = os.path.join(KERNELS, "cortex_m", "nn")
KINDS = {"Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int", "int?", "int[]", "int[]?", "float", "float[]", "float[]?",
         "bool", "Scalar", "Scalar?", "ScalarType", "ScalarType?"}


def kernel_definitions():
    """symbol -> (operator name, source path) of every const ptec_kernel."""
    pattern = re.compile(r"const\s+ptec_kernel\s+(\w+)\s*=\s*\{\s*\"([^\"]+)\"")
    found = {}
    for folder, _, files in os.walk(KERNELS):
        for name in files:
            if name.endswith(".c"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    for symbol, key in pattern.findall(f.read()):
                        found[symbol] = (key, os.path.relpath(path, ROOT))
    return found


def test_all_kernels_def_is_generated_from_the_manifest():
    with open(os.path.join(KERNELS, "all_kernels.def"), encoding="utf-8") as f:
        checked_in = f.read()
    assert checked_in == ops.all_kernels_def(), \
        "src/kernels/all_kernels.def drifted: regenerate it with " \
        "`PYTHONPATH=python python3 -m ptec.ops src/kernels/all_kernels.def`"


def test_every_kernel_is_in_the_manifest_with_its_source_and_name():
    defined = kernel_definitions()
    listed = {op.kernel: (key, op.source) for key, op in ops.OPERATORS.items() if op.kernel}
    assert listed == defined


def test_schemas_use_known_kinds_and_end_with_their_outputs():
    for key, op in ops.OPERATORS.items():
        names = [n for n, _ in op.signature]
        assert len(set(names)) == len(names), key
        assert {k for _, k in op.signature} <= KINDS, key
        assert names[-len(op.outputs):] == list(op.outputs), key
        assert all(k == "Tensor" for n, k in op.signature if n in op.outputs), key


def test_schema_parser():
    assert ops.parse_schema("ns::f.out(Tensor? a, int[] b, Tensor out)") == \
        ("ns::f.out", [("a", "Tensor?"), ("b", "int[]"), ("out", "Tensor")])
    for bad in ["ns::f.out", "ns::f.out(Tensor)", "ns::f.out(Tensor a-b)"]:
        with pytest.raises(ValueError):
            ops.parse_schema(bad)


def test_isa_files_exist_and_every_variant_belongs_to_an_operator():
    claimed = {}
    for key, op in ops.OPERATORS.items():
        assert "reference" in op.isa, key
        assert set(op.isa) <= {"reference", "dsp", "mve"}, key
        for isa, files in op.isa.items():
            for path in files:
                assert os.path.isfile(os.path.join(ROOT, path)), f"{key}: {path}"
                claimed.setdefault(os.path.basename(path), set()).add(isa)
    for name in os.listdir(NN):
        if not name.endswith(".c"):
            continue
        isa = "dsp" if name.endswith("_dsp.c") else "mve" if name.endswith("_mve.c") else None
        assert name in claimed, f"cortex_m/nn/{name} is in no operator's isa lists"
        if isa:
            assert claimed[name] == {isa}, name


def test_package_version_is_the_projects():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        cmake = re.search(r"project\(ptec VERSION ([\d.]+)", f.read()).group(1)
    with open(os.path.join(ROOT, "python", "pyproject.toml"), encoding="utf-8") as f:
        python = re.search(r'^version = "([\d.]+)"', f.read(), re.M).group(1)
    assert python == cmake


def test_kernel_lists_are_sorted_by_name_for_the_binary_search():
    """The runtime finds a kernel by binary search over the list's order
    (kernel_table.c, method_load.c): every list ptec writes is in byte order
    of the operator names."""
    by_symbol = {op.kernel: key for key, op in ops.OPERATORS.items() if op.kernel}
    names = [by_symbol[s] for s in re.findall(r"^PTEC_KERNEL\((\w+)\)", ops.all_kernels_def(), re.M)]
    assert names == sorted(names, key=str.encode) and len(names) == len(by_symbol)
    first_use = ["cortex_m::quantize_per_tensor.out", "aten::add.out", "cortex_m::dequantize_per_tensor.out",
                 "aten::add.out"]
    text, missing = ops.kernel_list(first_use)
    listed = [by_symbol[s] for s in re.findall(r"^PTEC_KERNEL\((\w+)\)", text, re.M)]
    assert not missing and listed == sorted(set(first_use), key=str.encode)
