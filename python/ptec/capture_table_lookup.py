"""A tensor known while tracing (a buffer, a constant made in forward)
indexed by a computed index: `self.labels[x.argmax(-1)]`, a kNN vote
`self.votes[idx]`.

fx gives a parameter as a proxy, whose x[i] is recorded as one getitem;
a buffer or a constant is a real tensor, and torch's C indexing iterates
a proxy index as a sequence of scalars (a multi-dimensional index ptec's
graph then fails on). While tracing, Tensor.__getitem__ of a real tensor
by an index holding a proxy records the same getitem a parameter's
would: the table becomes a constant of the graph, as a parameter does."""
import contextlib
import operator

import torch

_BASE = torch._C._TensorBase


def _proxy_in(index):
    if isinstance(index, torch.fx.Proxy):
        return index
    if isinstance(index, (tuple, list)):
        return next((p for p in index if isinstance(p, torch.fx.Proxy)), None)
    return None


@contextlib.contextmanager
def tables_indexed_by_proxies():
    own = torch.Tensor.__dict__.get("__getitem__")
    base = own if own is not None else _BASE.__getitem__

    def getitem(self, index):
        p = _proxy_in(index)
        if p is not None and not isinstance(self, torch.fx.Proxy):
            return p.tracer.create_proxy("call_function", operator.getitem, (self, index), {})
        return base(self, index)
    torch.Tensor.__getitem__ = getitem
    try:
        yield
    finally:
        if own is not None:
            torch.Tensor.__getitem__ = own
        else:
            del torch.Tensor.__getitem__
