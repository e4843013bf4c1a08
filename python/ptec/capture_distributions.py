"""torch.distributions with torch's argument checks (validate_args, on by
default): `Categorical(logits=...)`, `Normal(mu, sigma)`.

A distribution built with its checks on tests its parameters when it is
made (`constraint.check(value).all()`, then a Python `if`) and each value
given to log_prob: assertions torch makes on the values, which cannot be
traced (a Python bool of a traced tensor) though the model has no control
flow of its own. While tracing, every distribution is built with its checks
off (torch.distributions.Distribution.__init__ given validate_args=False;
restored after), and compile notes that torch's argument checks of the
named distributions are not in the program. The computation is torch's
own; only the checks, which raise on invalid values and change no result,
are left out."""
from __future__ import annotations

import contextlib
from typing import List

import torch


@contextlib.contextmanager
def argument_checks_skipped(skipped: List[str]):
    """While tracing: distributions built without torch's argument checks;
    skipped gets the class name of each that would have checked."""
    base = torch.distributions.Distribution
    original = base.__init__

    def init(self, batch_shape=torch.Size(), event_shape=torch.Size(), validate_args=None):
        if validate_args or (validate_args is None and base._validate_args):
            skipped.append(type(self).__name__)
        original(self, batch_shape, event_shape, validate_args=False)
    base.__init__ = init
    try:
        yield
    finally:
        base.__init__ = original


def note_skipped_checks(g, skipped: List[str]) -> None:
    """The compile note on the graph's first node."""
    if not skipped or not g.nodes:
        return
    names = ", ".join(dict.fromkeys(skipped))
    note = (f"torch.distributions {names}: torch's argument checks (validate_args) are assertions on the "
            "values, not part of the program: they are skipped")
    n = g.nodes[0]
    n.attrs["note"] = f"{n.attrs['note']}; {note}" if n.attrs.get("note") else note
