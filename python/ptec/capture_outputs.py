"""Model outputs of any nesting (probe R3): forward may return a dict, nested
tuples / lists, and values that are no tensors.

The program's outputs are the tensors of forward's result flattened depth
first: a tuple or list in its order, a dict in its insertion order (its
keys are not kept: output k is the k-th tensor met), so
`{"logits": y, "aux": (a, [b, c])}` gives the outputs y, a, b, c. A None, a
Python number (int, float, bool) or any other non-tensor in the result
(a torch.Size, a string) is dropped from the program's outputs, with a
compile note naming its place (torch returns it the same on every run: the
caller knows it without the program). A result with no tensor at all is
refused in one line.

A namedtuple (collections.namedtuple, typing.NamedTuple) or a dataclass
instance in the result is flattened like a tuple, its fields in their
declared order, with a compile note naming them (`Det(boxes, scores)`:
the outputs boxes, scores). torch.fx records the namedtuple as a call of
its class; capture_tracer records the dataclass the same way (its fields by
keyword), so both are met here as a node whose target is the class."""
from __future__ import annotations

import dataclasses
from typing import List

import torch
import torch.fx


def _record_fields(v):
    """[(field, value)] of a node making a namedtuple or a dataclass, else None."""
    if not isinstance(v, torch.fx.Node) or v.op != "call_function" or not isinstance(v.target, type):
        return None
    if issubclass(v.target, tuple) and hasattr(v.target, "_fields"):
        return list(zip(v.target._fields, v.args)) + list(v.kwargs.items())
    if dataclasses.is_dataclass(v.target) and not v.args:
        return list(v.kwargs.items())
    return None


def _flatten(v, where: str, tensors: List, dropped: List[str], records: List = None) -> None:
    fields = _record_fields(v)
    if fields is not None:
        if records is not None:
            records.append((v, where, [k for k, _ in fields]))
        for k, x in fields:
            _flatten(x, f"{where}.{k}", tensors, dropped, records)
    elif isinstance(v, torch.fx.Node):
        tensors.append(v)
    elif isinstance(v, dict):
        for k, x in v.items():
            _flatten(x, f"{where}[{k!r}]", tensors, dropped, records)
    elif isinstance(v, (tuple, list)) and not isinstance(v, torch.Size):
        for i, x in enumerate(v):
            _flatten(x, f"{where}[{i}]", tensors, dropped, records)
    else:
        dropped.append(f"{where} ({'None' if v is None else type(v).__name__})")


def flatten_outputs(gm: torch.fx.GraphModule, error) -> None:
    """gm's output node returns a flat tuple of its tensor nodes (module doc);
    error (CaptureError) when it returns no tensor."""
    out = next((n for n in gm.graph.nodes if n.op == "output"), None)
    if out is None:
        return
    res = out.args[0]
    flat = (isinstance(res, torch.fx.Node) and _record_fields(res) is None) or (
        isinstance(res, (tuple, list)) and all(isinstance(r, torch.fx.Node) and _record_fields(r) is None
                                               for r in res))
    if flat:
        return
    tensors: List[torch.fx.Node] = []
    dropped: List[str] = []
    records: List = []
    _flatten(res, "output", tensors, dropped, records)
    if not tensors:
        raise error("model outputs must be tensors: forward returns no tensor"
                    + (f" ({', '.join(dropped)})" if dropped else ""))
    out.args = (tuple(tensors),)
    for node, _, _ in reversed(records):         # the class calls: no node of the program
        if not node.users:
            gm.graph.erase_node(node)
    for node, where, names in records:
        kind = "dataclass" if dataclasses.is_dataclass(node.target) else "namedtuple"
        out.meta.setdefault("ptec_notes", []).append(
            f"note: {where} is a {kind} {node.target.__name__}: the program returns its fields in order "
            f"({', '.join(names)}), as a tuple's")
    if dropped:
        note = (f"note: the program returns the {len(tensors)} tensor(s) of forward's result in order "
                f"(dicts in insertion order); dropped, as no tensor: {', '.join(dropped)}")
        notes = out.meta.setdefault("ptec_notes", [])
        notes.append(note)
    gm.recompile()


def output_note(gm: torch.fx.GraphModule):
    """The note flatten_outputs left, else None."""
    out = next((n for n in gm.graph.nodes if n.op == "output"), None)
    notes = out.meta.get("ptec_notes") if out is not None else None
    return "; ".join(notes) if notes else None


def note_dropped_outputs(g, gm: torch.fx.GraphModule) -> None:
    """flatten_outputs' note on g's first output node (the compile log prints node notes)."""
    note = output_note(gm)
    if note and g.outputs:
        n = g.node(g.outputs[0])
        n.attrs["note"] = f"{n.attrs['note']}; {note}" if n.attrs.get("note") else note
