"""Helpers to compare ptec's reader with flatc's JSON view of a .pte."""
import json
import math
import os
import shutil
import subprocess
import tempfile

SCHEMA = os.path.join(os.path.dirname(__file__), "..", "..", "python", "ptec", "pte",
                      "program.fbs")


def have_flatc() -> bool:
    return shutil.which("flatc") is not None


def flatc_json(path: str) -> dict:
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "--defaults-json",
                        "-o", d, SCHEMA, "--", path], check=True, capture_output=True)
        name = os.path.splitext(os.path.basename(path))[0] + ".json"
        with open(os.path.join(d, name)) as f:
            return json.load(f)


def assert_same(a, b, path="$"):
    """flatc prints doubles with 12 significant digits; everything else exact."""
    if isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300), (path, a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (path, sorted(a), sorted(b))
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, (path, a, b)
