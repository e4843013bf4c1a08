"""An fp32 transposed convolution (conv_transpose2d no int8 backend takes:
here a program compiled for the portable backend alone, as a conv_transpose2d
marked fp32 would be) runs on the portable `aten::convolution.out` with
transposed=True and torch's output_padding (python/ptec/backends/portable/
lowering.py). Before, it was lowered to `aten::conv_transpose2d.out`, a kernel
no runtime has, and the compile failed naming it (the first attempt at an
fp32 istft, whose overlap-add was an F.fold, failed so).

Oracle: torch on the same float32 inputs; float in, float out, so the
result is the fp32 kernel's: within 1e-5 of the largest output."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from ptec import host_runtime
from ptec.backends.portable import PortableBackend
from ptec.compiler import compile_model
from ptec.pte import parse_program


class Fold(nn.Module):
    def forward(self, x):
        return F.fold(x, (1, 28), (1, 16), stride=(1, 4))


def _deconv(cin, cout, k, stride, padding, output_padding, groups, dilation):
    torch.manual_seed(cin * 10 + cout)
    return nn.ConvTranspose2d(cin, cout, k, stride=stride, padding=padding, output_padding=output_padding,
                              groups=groups, dilation=dilation)


CASES = {  # name: (model, input shape)
    "stride 2, output_padding 1": (lambda: _deconv(4, 6, 3, 2, 1, 1, 1, 1), (1, 4, 5, 5)),
    "groups 2, dilation 2": (lambda: _deconv(4, 6, 3, 1, 2, 0, 2, 2), (2, 4, 5, 4)),
    "stride (1, 3), kernel (2, 5)": (lambda: _deconv(3, 2, (2, 5), (1, 3), 0, 0, 1, 1), (1, 3, 4, 6)),
    "F.fold (an overlap-add)": (Fold, (2, 16, 4)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fp32_conv_transpose_is_torchs(name, tmp_path):
    make, shape = CASES[name]
    model = make().eval()
    g = torch.Generator().manual_seed(0)
    feeds = [(torch.randn(*shape, generator=g),) for _ in range(3)]
    res = compile_model(model, list(feeds[0]), feeds, backends=[PortableBackend()])
    assert any("aten::convolution.out" in f for f in res.lowered.fallbacks), res.lowered.fallbacks
    prog = parse_program(res.data)
    with torch.no_grad():
        for (x,) in feeds:
            got = host_runtime.run(prog, res.data, [x.numpy()], workdir=str(tmp_path))[0]
            want = model(x).numpy()
            assert got.shape == want.shape
            assert float(np.abs(got - want).max()) <= 1e-5 * float(np.abs(want).max())
