"""The compiler quantizes constants with its own math (quant_math), so the
reference interpreter (ptec.reference) stays an independent check of what
the compiler wrote: the two agree on every case the spec names (ties to
even after a float32 product, saturation, inf, NaN), and no compiler module
imports the reference."""
import ast
import os

import numpy as np

from ptec import quant_math as qm
from ptec.reference.cortex_m import quantize_per_tensor

PTEC = os.path.join(os.path.dirname(__file__), "..", "..", "python", "ptec")
COMPILER_MODULES = ["lower.py", "partition.py", "lowered.py", "quant_math.py", "plan.py",
                    "compiler.py", os.path.join("pte", "program_builder.py")]


def test_quantize_to_int8_matches_the_reference_kernel_numerics():
    rng = np.random.default_rng(7)
    for _ in range(200):
        scale = float(np.float32(rng.uniform(0.1, 1.0) * 10.0 ** rng.integers(-4, 1)))
        zp = int(rng.integers(-128, 128))
        x = (rng.standard_normal(2000) * scale * rng.uniform(1, 300)).astype(np.float32)
        # exact ties of the float32 product and values a hair either side
        ties = (np.arange(-150, 150) + 0.5).astype(np.float32) / np.float32(1.0 / np.float32(scale))
        x = np.concatenate([x, ties, np.nextafter(ties, np.float32(np.inf)),
                            np.float32([np.nan, np.inf, -np.inf, 3e38, -3e38, 0.0, -0.0])])
        got = qm.quantize_to_int8(x, scale, zp)
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got, quantize_per_tensor(x, scale, zp, -128, 127))


def test_quantize_to_int8_hand_checked():
    # 1/0.5 = 2: 0.25 -> 0.5 -> 0 (tie to even), 0.75 -> 1.5 -> 2, -0.75 -> -2
    np.testing.assert_array_equal(
        qm.quantize_to_int8(np.float32([0.25, 0.75, -0.75, 100.0, -100.0, np.nan]), 0.5, 3),
        np.int8([3, 5, 1, 127, -128, 3]))


def _imported_modules(path):
    tree = ast.parse(open(path).read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield (node.module or "") + ":" + ",".join(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            yield ",".join(a.name for a in node.names)


def test_the_compiler_does_not_import_the_reference():
    files = [os.path.join(PTEC, m) for m in COMPILER_MODULES]
    for root, _, names in os.walk(os.path.join(PTEC, "backends")):
        files += [os.path.join(root, n) for n in names if n.endswith(".py")]
    assert len(files) > 12
    for path in files:
        for imported in _imported_modules(path):
            assert "reference" not in imported, (path, imported)
