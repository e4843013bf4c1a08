"""docs/refused-operators.md is true: each listed layer, compiled on its
input, is refused with the one-line message that names it by module path
and class."""
import os
import re

import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from ptec.compiler import CompileError, compile_model
from ptec.capture import CaptureError
from ptec.ir import UnsupportedOperator


def rows():
    with open(os.path.join(ROOT, "docs", "refused-operators.md")) as f:
        return re.findall(r"^\| `(nn\.\w+)\((.*?)\)` \| ([\d, ]+) \|", f.read(), re.M)


class Wrap(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.body = nn.Sequential(nn.Identity(), layer)

    def forward(self, x):
        return self.body(x)


def test_the_list_is_not_empty():
    # the rows are read by a pattern: a format change must not empty the test
    assert len(rows()) >= 2


@pytest.mark.parametrize("cls,args,shape", rows(), ids=[r[0] for r in rows()])
def test_listed_layer_is_refused_by_name(cls, args, shape):
    layer = eval(f"{cls}({args})", {"nn": nn})          # noqa: S307 - the doc's own constructor text
    x = torch.randn([int(s) for s in shape.split(",")])
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compile_model(Wrap(layer).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message, message
    assert f"body.1 ({cls})" in message and "aten::" not in message, message
