"""Helpers for test_type_checks.py in a module of their own that binds
`type` explicitly (`from builtins import type`) and reads
`builtins.type` through `import builtins as _builtins`: a helper the model calls
from another file asks type() of a traced value."""
import builtins as _builtins
from builtins import type

import torch


def scaled_if_tensor(y):
    # torch takes the first branch: y is a torch.Tensor
    return y * 3 if type(y) is torch.Tensor else -y


def tensor_name(y):
    return type(y).__name__


def scaled_if_tensor_spelled_builtins(y):
    return y * 3 if _builtins.type(y) is torch.Tensor else -y
