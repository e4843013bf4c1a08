"""The inverse trigonometric and the hyperbolic functions of one tensor
(x.asin(), torch.acos, sinh, cosh, asinh, acosh, atanh and their torch.arc*
spellings): entries of ir.ELEMENTWISE, so each is an `elementwise` LUT over
the int8 input grid, like x.sin() and x.atan() (issue 15).

An int8 grid around a domain's edge can hold values a little outside the
domain where the float model never goes (|x| just above 1 for asin, just
below 1 for acosh): the table there holds the value at the edge (for atanh
+-infinity, which the table saturates) instead of torch's NaN, which no
int8 value stands for (as ir.ELEMENTWISE does for sqrt and log)."""
from __future__ import annotations

import torch


def _inside(lo, hi):
    return lambda x: torch.clamp(x, min=lo, max=hi)


# name -> the function of ir.ELEMENTWISE's signature (x, attrs)
FUNCTIONS = {
    "asin": lambda x, a: torch.asin(_inside(-1.0, 1.0)(x)),
    "acos": lambda x, a: torch.acos(_inside(-1.0, 1.0)(x)),
    "sinh": lambda x, a: torch.sinh(x),
    "cosh": lambda x, a: torch.cosh(x),
    "asinh": lambda x, a: torch.asinh(x),
    "acosh": lambda x, a: torch.acosh(_inside(1.0, None)(x)),
    # at +-1 torch gives +-inf: the table saturates there, as torch's float would be the largest
    "atanh": lambda x, a: torch.atanh(_inside(-1.0, 1.0)(x)),
}
# torch.arcsin, Tensor.arcsin, ...: numpy's spellings of the same functions
ALIASES = {"arcsin": "asin", "arccos": "acos", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
           "arctan": "atan"}


def elementwise_functions(existing) -> dict:
    """The entries this module adds to ir.ELEMENTWISE (whose own entries,
    `existing`, give the aliases of functions it already had, like atan)."""
    table = dict(FUNCTIONS)
    for alias, name in ALIASES.items():
        table[alias] = table.get(name) or existing[name]
    return table

