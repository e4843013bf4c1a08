import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from test_summary import allowed, load_allowlist  # noqa: E402

# The shared/ folder: PTEC_SHARED (the Makefile exports it), else ../shared
# next to the repository. Nothing else: a missing folder is a visible skip,
# and a failure under PTEC_STRICT=1.
SHARED = os.path.abspath(os.environ.get("PTEC_SHARED") or os.path.join(os.path.dirname(ROOT), "shared"))
UPSTREAM = os.path.join(SHARED, "models", "upstream")
UPSTREAM_FILES = ["add.pte", "add_arduino.pte", "ModuleLinear-no-constant-segment.pte",
                  "ethos_u_minimal_example.pte"]
SKIP_ALLOWLIST = load_allowlist(os.path.join(ROOT, "tests", "skip-allowlist.txt"))


@pytest.fixture
def upstream():
    if not os.path.isdir(UPSTREAM):
        pytest.skip(f"upstream sample programs not found in {UPSTREAM} (set PTEC_SHARED)")
    return UPSTREAM


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under `make test` (PTEC_STRICT=1) a skip is a failure unless
    tests/skip-allowlist.txt lists it: everything the tests need is installed
    and built by then, so a skip would hide a gap."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("PTEC_STRICT") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        test_id = os.path.relpath(str(item.fspath), ROOT) + "::" + item.name
        if allowed(SKIP_ALLOWLIST, "pytest", test_id):
            return
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (f"skipped under PTEC_STRICT=1 (make test): {reason}; "
                           "not on tests/skip-allowlist.txt")
