"""An error detail is one line even when the file puts a control byte in
what it names: an operator name holding a newline reads with '?' there
(src/runtime/detail.c). Before, ptec-run printed the name's newline and the
detail broke over two lines."""
import os
import subprocess

import torch

from ptec import host_runtime
from ptec.compiler import compile_model


def test_an_operator_name_with_a_newline_stays_on_one_line(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3)).eval()
    data = compile_model(model, [torch.randn(1, 4)], [(torch.randn(1, 4),) for _ in range(4)]).data
    name = b"cortex_m::quantized_linear"
    assert data.count(name) == 1
    path = os.path.join(tmp_path, "m.pte")
    with open(path, "wb") as f:       # same length: every offset in the file stays valid
        f.write(data.replace(name, b"cortex_m:\nquantized_linear"))
    r = subprocess.run([host_runtime.ptec_run_path(None), path], capture_output=True, text=True)
    assert r.returncode != 0
    assert r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), repr(r.stderr)
    assert "operator cortex_m:?quantized_linear.out is not in this build" in r.stderr, r.stderr
