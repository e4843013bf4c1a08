"""docs/refused-operators.md is true: each listed layer, and each layer of
its second table built with the listed arguments, compiled on its input,
is refused with the one-line message that names it by module path and
class."""
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
PARAMETERS = "## Parameters ptec refuses"
ROW = r"^\| `(nn\.\w+)\((.*?)\)` \| ([\d, ]+) \|"


def sections():
    """The text of the layer table (before either heading), of the function
    table and of the parameter table (each from its heading to the next)."""
    with open(os.path.join(ROOT, "docs", "refused-operators.md")) as f:
        text = f.read()
    starts = sorted((text.index(h), h) for h in (FUNCTIONS, PARAMETERS))
    parts = {"layers": text[:starts[0][0]]}
    for k, (at, heading) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(text)
        parts[heading] = text[at:end]
    return parts


def rows():
    return re.findall(ROW, sections()["layers"], re.M)


def function_rows():
    """(call of x, input shape, the call's name in the message)."""
    return re.findall(r"^\| `(.+?)` \| ([\d, ]+) \| `(.+?)` \|", sections()[FUNCTIONS], re.M)


def parameter_rows():
    """(class, constructor arguments, input shape) under the parameters' heading."""
    return re.findall(ROW, sections()[PARAMETERS], re.M)


class Wrap(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.body = nn.Sequential(nn.Identity(), layer)

    def forward(self, x):
        return self.body(x)


def test_the_list_is_not_empty():
    # the rows are read by a pattern: a format change must not empty the test.
    # The layer table may be empty (no module is refused whole), but its
    # header must stay where rows() reads, and every line under it be a row.
    layers = sections()["layers"]
    assert "| layer | input shape | instead |" in layers
    table = layers[layers.index("| layer | input shape | instead |"):].strip().splitlines()[2:]
    assert len(table) == len(rows()), table
    # The parameter table may be empty too (LPPool's infinite norm_type runs
    # now, as torch's ones): its header must stay, and every line be a row.
    parameters = sections()[PARAMETERS]
    assert "| layer | input shape | instead |" in parameters
    lines = [line for line in parameters.splitlines() if line.startswith("|")][2:]
    assert len(parameter_rows()) == len(lines), lines
    # The function table may be empty too (x[x > 0] runs now, as a program
    # output): its header must stay, and every line under it be read as a row.
    functions = sections()[FUNCTIONS]
    assert "| call | input shape | refused as | instead |" in functions
    lines = [line for line in functions.splitlines() if line.startswith("|")][2:]
    assert len(function_rows()) == len(lines), lines


def test_listed_layers_are_refused_by_name():
    # one test over the rows (not a parametrization, which an empty table would skip)
    for cls, args, shape in rows():
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


def test_listed_calls_are_refused_by_name():
    # one test over the rows (not a parametrization, which an empty table would skip)
    for call, shape, name in function_rows():
        x = torch.randn([int(s) for s in shape.split(",")])
        with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
            compile_model(Call(call).eval(), [x], [(x,)])
        message = str(e.value)
        assert "\n" not in message and "operator not supported" in message, (call, message)
        assert f"({name})" in message and "aten::" not in message, (call, message)


def test_listed_parameters_are_refused_by_name():
    # one test over the rows (not a parametrization, which an empty table would skip)
    for cls, args, shape in parameter_rows():
        # the constructor text may build its tensors (a fractional pool's samples)
        layer = eval(f"{cls}({args})", {"nn": nn, "torch": torch})   # noqa: S307 - the doc's own constructor text
        x = torch.randn([int(s) for s in shape.split(",")])
        with pytest.raises((CompileError, CaptureError, UnsupportedOperator)) as e:
            compile_model(Wrap(layer).eval(), [x], [(x,)])
        message = str(e.value)
        assert "\n" not in message and f"body.1 ({cls})" in message and "aten::" not in message, message
