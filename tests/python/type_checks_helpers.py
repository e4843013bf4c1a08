"""Helpers for test_type_checks.py in a module of their own: a helper the
model calls from another file asks type() of a traced value, with `type`
bound explicitly (`from builtins import type`), under another name (`from
builtins import type as builtin_type`) and read as `builtins.type`
(`import builtins as _builtins`)."""
import builtins as _builtins
from builtins import type
from builtins import type as builtin_type

import torch


def scaled_if_tensor(y):
    # torch takes the first branch: y is a torch.Tensor
    return y * 3 if type(y) is torch.Tensor else -y


def tensor_name(y):
    return type(y).__name__


def scaled_if_tensor_spelled_builtins(y):
    return y * 3 if _builtins.type(y) is torch.Tensor else -y


def scaled_if_tensor_aliased(y):
    return y * 3 if builtin_type(y) is torch.Tensor else -y
