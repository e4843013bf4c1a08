"""`make test`'s summary counts every runner the Makefile logs: a failed
fuzz run of any target fails the summary (the NPU and mlw runs were once
logged but never read)."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def logged_runners():
    text = (ROOT / "Makefile").read_text()
    return re.findall(r"\$\(call run_logged,([a-z0-9-]+),", text)


def summary(tmp_path, failing):
    for runner in logged_runners():
        (tmp_path / (runner + ".rc")).write_text("1\n" if runner == failing else "0\n")
    return subprocess.run(["/usr/bin/python3", str(ROOT / "scripts/test_summary.py"), str(tmp_path)],
                          stdout=subprocess.PIPE, text=True)


def test_every_logged_runner_is_summarised(tmp_path):
    runners = logged_runners()
    assert {"ctest-host", "ctest-asan", "pytest", "fuzz", "fuzz-rpmsg"} <= set(runners)
    assert summary(tmp_path, None).returncode == 0
    for runner in runners:
        got = summary(tmp_path, runner)
        assert got.returncode == 1, "a failed %s did not fail the summary:\n%s" % (runner, got.stdout)
        assert re.search(r"^%s\s+1 ran: 0 passed, 1 failed" % re.escape(runner), got.stdout, re.M), got.stdout
