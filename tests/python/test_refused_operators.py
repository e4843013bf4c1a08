"""docs/refused-operators.md is true: each listed layer, and each layer of
its second table built with the listed arguments, compiled on its input,
is refused with the one-line message that names it by module path and
class."""
import os
import re

import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from ptec.compiler import CompileError, compile_model
from ptec.capture import CaptureError
from ptec.ir import UnsupportedOperator


PARAMETERS = "## Parameters ptec refuses"
ROW = r"^\| `(nn\.\w+)\((.*?)\)` \| ([\d, ]+) \|"


def tables():
    """(operators' rows, parameters' rows): each row (class, constructor
    arguments, input shape), the second table under its heading."""
    with open(os.path.join(ROOT, "docs", "refused-operators.md")) as f:
        operators, _, parameters = f.read().partition(PARAMETERS)
    return re.findall(ROW, operators, re.M), re.findall(ROW, parameters, re.M)


def rows():
    return tables()[0]


def parameter_rows():
    return tables()[1]


class Wrap(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.body = nn.Sequential(nn.Identity(), layer)

    def forward(self, x):
        return self.body(x)


def test_the_list_is_not_empty():
    # the rows are read by a pattern: a format change must not empty the test
    assert len(rows()) >= 1 and len(parameter_rows()) >= 1


@pytest.mark.parametrize("cls,args,shape", rows(), ids=[r[0] for r in rows()])
def test_listed_layer_is_refused_by_name(cls, args, shape):
    layer = eval(f"{cls}({args})", {"nn": nn})          # noqa: S307 - the doc's own constructor text
    x = torch.randn([int(s) for s in shape.split(",")])
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compile_model(Wrap(layer).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message, message
    assert f"body.1 ({cls})" in message and "aten::" not in message, message


@pytest.mark.parametrize("cls,args,shape", parameter_rows(), ids=[f"{r[0]}({r[1]})" for r in parameter_rows()])
def test_listed_parameter_is_refused_by_name(cls, args, shape):
    # the constructor text may build its tensors (a fractional pool's samples)
    layer = eval(f"{cls}({args})", {"nn": nn, "torch": torch})   # noqa: S307 - the doc's own constructor text
    x = torch.randn([int(s) for s in shape.split(",")])
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compile_model(Wrap(layer).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and f"body.1 ({cls})" in message and "aten::" not in message, message
