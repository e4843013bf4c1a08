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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under `make test` (PTEC_STRICT=1) a skip is a failure: everything the
    tests need is installed and built by then, so a skip would hide a gap."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("PTEC_STRICT") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under PTEC_STRICT=1 (make test): {reason}"
