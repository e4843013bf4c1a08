"""What the tests of writes by a computed or input index share
(test_index_copy_computed, test_scatter_any_dim): a model of one call of
any number of inputs, and an input whose values are far apart on the int8
grid, so that an argsort / topk of its codes gives torch's positions."""
import torch

from call_model import Call

__all__ = ["Call", "apart"]


def apart(g):
    """[1, 4, 8] with no two values within 3 int8 steps of a [-3, 3] grid (an argsort of its codes is torch's)."""
    return ((torch.randperm(32, generator=g).float() / 31 * 5.6 - 2.8).reshape(1, 4, 8),)
