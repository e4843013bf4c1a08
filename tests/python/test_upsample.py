"""nn.Upsample and F.interpolate, mode "nearest" (issue 15, item 5 in part):
the portable kernel aten::upsample_nearest2d.vec_out copies elements of any
dtype, so a quantized graph resizes its int8 values in place of a float
round trip. A tiny U-Net (down, up, skip concatenation) runs byte-identical
to the numpy reference on the host and on the emulated M55 and M33; the
kernel matches torch's index rule for up- and down-scaling."""
import os
import shutil
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import ROOT
from ptec import host_runtime
from ptec.compiler import compile_model
from ptec.interpreter import run_program
from ptec.pte import parse_program
from ptec.reference.portable import upsample_nearest2d


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.down = nn.MaxPool2d(2)
        self.enc2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec = nn.Sequential(nn.Conv2d(24, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        u = self.up(self.enc2(self.down(e1)))
        d = self.dec(torch.cat([u, e1], dim=1))
        return self.head(F.interpolate(d, scale_factor=0.5, mode="nearest"))


def images(n, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(1, 3, 16, 16, generator=g) * 2 - 1,) for _ in range(n)]


@pytest.fixture(scope="module")
def compiled():
    torch.manual_seed(0)
    model = TinyUNet().eval()
    return model, compile_model(model, [images(1, 0)[0][0]], images(8, 0))


@pytest.mark.parametrize("in_hw,out_hw", [((4, 5), (8, 10)), ((8, 8), (4, 4)), ((3, 7), (7, 3)), ((5, 5), (12, 13))])
def test_reference_is_torch_nearest(in_hw, out_hw):
    x = torch.arange(2 * 3 * in_hw[0] * in_hw[1], dtype=torch.float32).reshape(2, 3, *in_hw)
    want = F.interpolate(x, size=out_hw, mode="nearest").numpy()
    assert np.array_equal(upsample_nearest2d(x.numpy(), out_hw), want)


def test_resizes_stay_int8(compiled):
    _, res = compiled
    placed = {p.source: p.backend for p in res.lowered.placements if p.op == "upsample_nearest"}
    assert placed == {"up (nn.Upsample)": "cortex_m", "interpolate (F.interpolate)": "cortex_m"}, placed
    assert "aten::upsample_nearest2d.vec_out" in res.lowered.operators


def test_host_equals_reference_and_float(compiled, tmp_path):
    model, res = compiled
    prog = parse_program(res.data)
    step = res.graph.node(res.graph.outputs[0]).qparams[0]
    worst = 0.0
    for (x,) in images(6, 4):
        want = run_program(prog, [x.numpy()])[0]
        got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
        assert got.tobytes() == want.tobytes()
        with torch.no_grad():
            worst = max(worst, float(np.abs(got - model(x).numpy()).max() / step))
    print(f"worst |ptec - float|: {worst:.2f} output steps")
    assert worst <= 5.0, worst      # measured 3.50


@pytest.mark.parametrize("target", ["cortex-m55", "cortex-m33"])
def test_boards_equal_reference(compiled, tmp_path, target):
    elf = os.path.join(ROOT, "build", target, "firmware", "runner", "ptec_runner.elf")
    if shutil.which("qemu-system-arm") is None or not os.path.exists(elf):
        pytest.skip(f"no QEMU or no runner firmware for {target}")
    model, _ = compiled
    res = compile_model(model, [images(1, 0)[0][0]], images(8, 0), target=target)
    prog = parse_program(res.data)
    x = images(1, 9)[0][0].numpy()
    want = run_program(prog, [x])[0]
    t = prog.plan().values[prog.plan().inputs[0]].val
    raw = np.ascontiguousarray(x.transpose(list(t.dim_order)), np.float32).tobytes()
    (tmp_path / "m.pte").write_bytes(res.data)
    (tmp_path / "in.bin").write_bytes(raw)
    run = subprocess.run([os.path.join(ROOT, "scripts", "run_qemu.sh"), "--target", target, "--elf", elf,
                          "--model", str(tmp_path / "m.pte"), "--input", str(tmp_path / "in.bin"),
                          "--timeout", "120"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert run.returncode == 0, run.stdout
    hex_bytes = "".join(line.split()[2] for line in run.stdout.splitlines() if line.startswith("@out0 "))
    out = prog.plan().values[prog.plan().outputs[0]].val
    assert bytes.fromhex(hex_bytes) == np.ascontiguousarray(want.transpose(list(out.dim_order))).tobytes(), \
        run.stdout[-2000:]
