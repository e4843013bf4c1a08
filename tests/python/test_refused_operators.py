"""docs/refused-operators.md is true: each listed layer, compiled on its
input, is refused with the one-line message that names it by module path
and class."""
import os
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import ROOT
from ptec.compiler import CompileError, compile_model
from ptec.capture import CaptureError
from ptec.ir import UnsupportedOperator


FUNCTIONS = "## Functions and tensor methods"


def sections():
    """(the layer table's text, the function table's text)."""
    with open(os.path.join(ROOT, "docs", "refused-operators.md")) as f:
        text = f.read()
    layers, _, functions = text.partition(FUNCTIONS)
    return layers, functions


def rows():
    return re.findall(r"^\| `(nn\.\w+)\((.*?)\)` \| ([\d, ]+) \|", sections()[0], re.M)


def function_rows():
    """(call of x, input shape, the call's name in the message)."""
    return re.findall(r"^\| `(.+?)` \| ([\d, ]+) \| `(.+?)` \|", sections()[1], re.M)


class Wrap(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.body = nn.Sequential(nn.Identity(), layer)

    def forward(self, x):
        return self.body(x)


def test_the_list_is_not_empty():
    # the rows are read by a pattern: a format change must not empty the test
    assert len(rows()) >= 1
    assert len(function_rows()) >= 15


@pytest.mark.parametrize("cls,args,shape", rows(), ids=[r[0] for r in rows()])
def test_listed_layer_is_refused_by_name(cls, args, shape):
    layer = eval(f"{cls}({args})", {"nn": nn})          # noqa: S307 - the doc's own constructor text
    x = torch.randn([int(s) for s in shape.split(",")])
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compile_model(Wrap(layer).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message, message
    assert f"body.1 ({cls})" in message and "aten::" not in message, message


class Call(nn.Module):
    def __init__(self, call):
        super().__init__()
        self.call = call

    def forward(self, x):
        return eval(self.call, {"torch": torch, "F": F, "x": x})    # noqa: S307 - the doc's own call text


@pytest.mark.parametrize("call,shape,name", function_rows(), ids=[r[0] for r in function_rows()])
def test_listed_call_is_refused_by_name(call, shape, name):
    x = torch.randn([int(s) for s in shape.split(",")])
    with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
        compile_model(Call(call).eval(), [x], [(x,)])
    message = str(e.value)
    assert "\n" not in message and "operator not supported" in message, message
    assert f"({name})" in message and "aten::" not in message, message
