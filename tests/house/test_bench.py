"""The benchmark suite runs end to end and prints every row (figures are not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT


def test_the_quick_suite_prints_a_table_with_every_row() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from run import ROWS

    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick"], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("failres benchmarks (quick sizes")
    assert lines[1].split() == ["row", "what", "measured", "baseline", "ratio"]
    for name in ROWS:
        row = next((line for line in lines[2:] if line.startswith(name + "  ")), None)
        assert row is not None, f"no row {name!r} in:\n{done.stdout}"
        assert row.rstrip().endswith("x") or "not available" in row, row  # a ratio, or an honest absence
