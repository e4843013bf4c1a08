"""tools/pte2c.py: program bytes to C, and the selective kernel list."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, UPSTREAM

TOOL = os.path.join(ROOT, "tools", "pte2c.py")

spec = importlib.util.spec_from_file_location("pte2c", TOOL)
pte2c = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pte2c)

needs_samples = pytest.mark.skipif(not os.path.exists(os.path.join(UPSTREAM, "add.pte")),
                                   reason="upstream samples not found")


def read(name):
    with open(os.path.join(UPSTREAM, name), "rb") as f:
        return f.read()


def test_kernel_symbols_come_from_the_manifest():
    assert pte2c.kernel_symbol("cortex_m::quantized_conv2d.out") == \
        "ptec_kernel_cortex_m_quantized_conv2d_out"
    assert pte2c.kernel_symbol("aten::add.out") == "ptec_kernel_aten_add_out"
    assert pte2c.kernel_symbol("dim_order_ops::_clone_dim_order.out") == "ptec_kernel_dim_order_clone_out"
    assert pte2c.kernel_symbol("quantized_decomposed::quantize_per_tensor.out") == \
        "ptec_kernel_qd_quantize_per_tensor_out"
    # Two the old naming rule got wrong (so their kernels were left out of
    # selective builds): the symbols their C files define.
    assert pte2c.kernel_symbol("aten::_native_batch_norm_legit_no_training.out") == \
        "ptec_kernel_aten_native_batch_norm_no_training_out"
    assert pte2c.kernel_symbol("aten::slice_copy.Tensor_out") == "ptec_kernel_aten_slice_copy_tensor_out"
    assert pte2c.kernel_symbol("aten::sort.out") is None


@needs_samples
@pytest.mark.parametrize("name,ops", [
    ("add.pte", ["aten::add.out"]),
    ("add_arduino.pte", ["aten::add.out"]),
    ("ModuleLinear-no-constant-segment.pte", ["aten::mul.out", "aten::add.out"]),
    ("ethos_u_minimal_example.pte", ["quantized_decomposed::quantize_per_tensor.out",
                                     "quantized_decomposed::dequantize_per_tensor.out"]),
])
def test_operator_names(name, ops):
    assert pte2c.operator_names(read(name)) == ops


def test_rejects_non_program():
    with pytest.raises(pte2c.PteError):
        pte2c.operator_names(b"\x00" * 64)
    with pytest.raises(pte2c.PteError):
        pte2c.operator_names(b"\x00\x00\x00\x70ET12" + b"\x00" * 8)  # root past the end


@needs_samples
def test_outputs(tmp_path):
    c, h, kernels = tmp_path / "m.c", tmp_path / "m.h", tmp_path / "k.def"
    subprocess.run([sys.executable, TOOL, os.path.join(UPSTREAM, "ModuleLinear-no-constant-segment.pte"),
                    "--c", str(c), "--h", str(h), "--kernels", str(kernels)], check=True)
    text = c.read_text()
    assert '__attribute__((section(".ptec_model"), aligned(16), used))' in text
    data = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2}),", text))
    assert data == read("ModuleLinear-no-constant-segment.pte")
    assert "extern const uint8_t ptec_model_data[];" in h.read_text()
    assert re.findall(r"^PTEC_KERNEL\((\w+)\)", kernels.read_text(), re.M) == \
        ["ptec_kernel_aten_add_out", "ptec_kernel_aten_mul_out"]  # sorted by name


@needs_samples
def test_missing_kernel_is_left_out(tmp_path):
    listing = tmp_path / "only_add.def"
    listing.write_text("PTEC_KERNEL(ptec_kernel_aten_add_out)\n")
    kernels = tmp_path / "k.def"
    run = subprocess.run([sys.executable, TOOL, os.path.join(UPSTREAM, "ModuleLinear-no-constant-segment.pte"),
                          "--kernels", str(kernels), "--kernel-list", str(listing)],
                         check=True, stderr=subprocess.PIPE, text=True)
    assert "aten::mul.out" in run.stderr
    assert re.findall(r"^PTEC_KERNEL\((\w+)\)", kernels.read_text(), re.M) == ["ptec_kernel_aten_add_out"]


def test_needs_only_the_standard_library():
    """Firmware builds run pte2c with whatever python3 CMake finds, which
    may have neither torch nor numpy: the package parts it uses import neither."""
    probe = ("import runpy, sys\n"
             "sys.argv = ['pte2c', '--help']\n"
             "try:\n    runpy.run_path(%r, run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))") % TOOL
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
