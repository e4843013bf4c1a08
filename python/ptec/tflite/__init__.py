"""TFLite import: `python3 -m ptec import-tflite MODEL.tflite -o MODEL.pte`.

`import_tflite` is the one dispatch: a Vela-compiled model (its whole graph is one `ethos-u`
custom operator) becomes a `.pte` with an EthosUBackend delegate
(`ptec.backends.ethos_u.vela_import`); any other model goes to the int8 → cortex_m importer
(`ptec.tflite.import_int8.import_int8_model(model, target) -> bytes`), which refuses operators it
does not have by name.
"""
from __future__ import annotations

import importlib.util
from typing import Union

from .reader import Model, TFLiteError, parse_model, read_model

ETHOS_U_CUSTOM_CODE = "ethos-u"


def is_vela_model(model: Model) -> bool:
    """True when the model is one subgraph holding exactly one `ethos-u` custom operator."""
    return (len(model.subgraphs) == 1 and len(model.subgraphs[0].operators) == 1
            and model.subgraphs[0].operators[0].custom_code == ETHOS_U_CUSTOM_CODE)


def import_tflite(source: Union[str, bytes, Model], target: str = "cortex-m55") -> bytes:
    """A .tflite (path, bytes or parsed Model) as .pte bytes; TFLiteError on anything
    ptec cannot import. `target` (the CPU ISA) matters only for int8 models."""
    if isinstance(source, Model):
        model = source
    elif isinstance(source, (bytes, bytearray, memoryview)):
        model = parse_model(bytes(source))
    else:
        model = read_model(source)
    if is_vela_model(model):
        from ..backends.ethos_u.vela_import import import_vela_model
        return import_vela_model(model)
    if importlib.util.find_spec(__name__ + ".import_int8") is None:
        ops = [op for g in model.subgraphs for op in g.operators]
        name = ops[0].name if ops else "(none: the model has no operators)"
        raise TFLiteError(f"unsupported operator {name}: this ptec imports only Vela-compiled "
                          "models (one ethos-u custom operator)")
    from .import_int8 import import_int8_model
    return import_int8_model(model, target)


__all__ = ["Model", "TFLiteError", "ETHOS_U_CUSTOM_CODE", "import_tflite", "is_vela_model",
           "parse_model", "read_model"]
