import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

SHARED = os.environ.get("PTEC_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
if not os.path.isdir(SHARED):
    SHARED = "/work/shared"
UPSTREAM = os.path.join(SHARED, "models", "upstream")
UPSTREAM_FILES = ["add.pte", "add_arduino.pte", "ModuleLinear-no-constant-segment.pte",
                  "ethos_u_minimal_example.pte"]


@pytest.fixture
def upstream():
    if not os.path.isdir(UPSTREAM):
        pytest.skip("upstream sample programs not found (set PTEC_SHARED)")
    return UPSTREAM
