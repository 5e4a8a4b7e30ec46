"""An environment outside the checkout with the project installed editable, as hatch keeps its own
(`~/.local/share/hatch/env/virtual/...`), is led to the workspace like a `.venv/` in the checkout:
the trap is never committed and a right fix is, with a world and without one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, run_failres
from sandbox_machines import without_bubblewrap
from sandbox_projects import PY_FIXED, PY_WRONG, configure, plan, python_project, seat, the_test_site_packages
from failres.sandbox import probe

WRITE = "import pathlib, sys\nsys.stdin.read()\npathlib.Path('src/calc/__init__.py').write_text({text!r})\n"


def hatch_like_project(tmp_path: Path) -> tuple[Path, Path]:
    """A src layout with no environment in the checkout, and one outside it where hatch puts its own."""
    top = tmp_path / "calc"
    top.mkdir()
    python_project(top)
    shutil.rmtree(top / ".venv")
    env = tmp_path / "data" / "hatch" / "env" / "virtual" / "calc" / "Xy1z" / "hatch-test.py3.11"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "toolchain.pth").write_text(the_test_site_packages() + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index",
                    "-e", str(top)], check=True, capture_output=True, cwd=top,
                   env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    shutil.rmtree(top / "src" / "calc.egg-info", ignore_errors=True)
    return top, python


@pytest.mark.parametrize("world", ["bwrap-missing", "world"])
def test_a_hatch_environment_outside_the_checkout_never_commits_the_trap_and_commits_a_right_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, world: str):
    if world == "world" and not probe.machine_sandbox().available:
        pytest.skip(f"no seat world on this machine: {probe.machine_sandbox().why}")
    if world == "bwrap-missing":
        without_bubblewrap(monkeypatch)
    top, python = hatch_like_project(tmp_path)
    (top / "src" / "calc" / "__init__.py").write_text(PY_FIXED)  # the person's right fix, not committed
    gate = "\n".join(["[gates.tests]", f"command = {json.dumps([str(python), '-m', 'pytest', '-q', 'tests'])}",
                      'cwd = "worktree"', 'timeout = "60s"', "[sandbox]",
                      f"read = {json.dumps([the_test_site_packages()])}", ""])
    configure(top, gate=gate, implementer=seat(tmp_path, "wrong", WRITE.format(text=PY_WRONG)))
    the_plan = plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])
    trapped = run_failres(top, "run", str(the_plan), "--quiet", env=dict(os.environ))
    assert trapped.returncode == 1, trapped.stdout + trapped.stderr
    assert git(top, "branch", "--list", "failres/rw/t1", "--format=%(objectname)").strip() == \
        git(top, "rev-parse", "main").strip()  # nothing committed

    (top / "src" / "calc" / "__init__.py").write_text(PY_WRONG)  # now the person's edit is the wrong one
    configure(top, gate=gate + '[stop_loss]\nmode = "off"\n', implementer=seat(tmp_path, "right",
                                                                              WRITE.format(text=PY_FIXED)))
    done = run_failres(top, "run", str(the_plan), "--quiet", env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(top, "show", "failres/rw/t1:src/calc/__init__.py") == PY_FIXED
    assert (top / "src" / "calc" / "__init__.py").read_text() == PY_WRONG
