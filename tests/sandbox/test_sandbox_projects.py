"""In the seat world the gate judges the workspace, on projects set up the way people have them.

The trap: an editable install (or a node_modules link) points by absolute path into the
person's checkout, so without a world the gate imports the person's files. With the
person's correct fix uncommitted in their checkout and a seat's wrong fix in the
workspace, the wrong fix would be committed green. In the world the workspace stands at
the checkout's path, so the same absolute paths lead to the workspace's files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from node_projects import JS_FIXED, JS_WRONG, NodeApp, linked_by_path_project, node_app, node_gate
from sandbox_projects import (
    PY_FIXED,
    PY_WRONG,
    configure,
    plan,
    python_gate,
    python_project,
    seat,
    the_test_site_packages,
)
from failres.sandbox.probe import machine_sandbox

pytestmark = pytest.mark.skipif(not machine_sandbox().available, reason="no seat world on this machine")

WRITE = "import pathlib, sys\nsys.stdin.read()\npathlib.Path({path!r}).write_text({text!r})\n"


def run(cli, top: Path, plan_path: Path):
    return cli(top, "run", str(plan_path), "--quiet")


@pytest.fixture
def py(tmp_path: Path) -> Path:
    top = tmp_path / "calc"
    top.mkdir()
    python_project(top)
    return top


def test_the_persons_fix_in_the_checkout_does_not_make_a_seats_wrong_fix_green(py: Path, cli, tmp_path: Path):
    (py / "src" / "calc" / "__init__.py").write_text(PY_FIXED)  # the person's own fix, not committed
    configure(py, gate=python_gate(py, [the_test_site_packages()]),
              implementer=seat(tmp_path, "wrong", WRITE.format(path="src/calc/__init__.py", text=PY_WRONG)))
    result = run(cli, py, plan(tmp_path / "plan.toml", ["src/calc/__init__.py"]))
    assert result.code == 1, result.out + result.err
    assert "committed" not in result.out
    assert git(py, "branch", "--list", "failres/rw/t1", "--format=%(objectname)").strip() == git(
        py, "rev-parse", "main").strip()


def test_a_seats_correct_fix_is_committed_and_its_tree_passes_on_its_own(py: Path, cli, tmp_path: Path):
    configure(py, gate=python_gate(py, [the_test_site_packages()]),
              implementer=seat(tmp_path, "right", WRITE.format(path="src/calc/__init__.py", text=PY_FIXED)))
    result = run(cli, py, plan(tmp_path / "plan.toml", ["src/calc/__init__.py"]))
    assert result.code == 0, result.out + result.err
    alone = tmp_path / "alone"
    git(py, "worktree", "add", "-q", str(alone), "failres/rw/t1")
    checked = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=alone,
                             env={**os.environ, "PYTHONPATH": str(alone / "src")}, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout


def test_the_persons_venv_still_imports_the_persons_checkout_after_a_run(py: Path, cli, tmp_path: Path):
    """Even a gate setup of `pip install -e .` — which would re-point the person's venv at the
    workspace — cannot write into the venv: it is read-only inside the world."""
    gate = python_gate(py, [the_test_site_packages()]).replace(
        'timeout = "60s"', 'timeout = "60s"\nsetup = [".venv/bin/python", "-m", "pip", "install", "-q", '
        '"--no-build-isolation", "--no-deps", "--no-index", "-e", "."]', 1)
    configure(py, gate=gate,
              implementer=seat(tmp_path, "right", WRITE.format(path="src/calc/__init__.py", text=PY_FIXED)))
    before = sorted(p.name for p in (py / ".venv").rglob("*.pth"))
    run(cli, py, plan(tmp_path / "plan.toml", ["src/calc/__init__.py"]))
    found = subprocess.run([str(py / ".venv" / "bin" / "python"), "-c", "import calc; print(calc.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert found.stdout.strip() == str(py / "src" / "calc" / "__init__.py"), found.stderr
    assert sorted(p.name for p in (py / ".venv").rglob("*.pth")) == before


@pytest.fixture
def node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NodeApp:
    return node_app(tmp_path, linked_by_path_project, monkeypatch)


def test_a_node_projects_linked_package_is_judged_from_the_workspace(node: NodeApp, cli, tmp_path: Path):
    (node.top / node.file).write_text(JS_FIXED)  # the person's own fix, not committed
    configure(node.top, gate=node_gate(),
              implementer=seat(tmp_path, "wrong", WRITE.format(path=node.file, text=JS_WRONG)))
    result = run(cli, node.top, plan(tmp_path / "plan.toml", [node.file]))
    assert result.code == 1, result.out + result.err
    assert git(node.top, "rev-parse", "failres/rw/t1").strip() == git(node.top, "rev-parse", "main").strip()


def test_a_node_seats_correct_fix_is_committed_with_node_modules_only_in_the_checkout(node: NodeApp, cli,
                                                                                        tmp_path: Path):
    configure(node.top, gate=node_gate(),
              implementer=seat(tmp_path, "right", WRITE.format(path=node.file, text=JS_FIXED)))
    result = run(cli, node.top, plan(tmp_path / "plan.toml", [node.file]))
    assert result.code == 0, result.out + result.err
    assert git(node.top, "show", f"failres/rw/t1:{node.file}") == JS_FIXED
    assert (node.top / node.file).read_text() != JS_FIXED  # the person's file is theirs
    assert os.readlink(node.top / "node_modules" / "calc") == str(node.top / node.package)


GATES_SH = """#!/bin/bash
# gate0 MODE WORKTREE REPO SLUG: the task's tree judged from the repository's own script
set -e
[ "$1" = gate0 ]
cd "$4"
PYTHONPATH="$3/src" python3 -c 'from calc import add; import sys; sys.exit(add(2, 3) != 5)'
"""


def test_a_repo_gate_script_runs_as_the_tasks_tree_has_it_and_judges_the_workspace(tmp_path: Path, cli):
    top = tmp_path / "gates"
    (top / "src" / "calc").mkdir(parents=True)
    (top / "lib").mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    (top / "lib" / "gates.sh").write_text(GATES_SH)
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "a gate script of the project's own")
    # The person's checkout says green whatever happens, and holds a correct fix: neither is the task's.
    (top / "lib" / "gates.sh").write_text("#!/bin/bash\nexit 0\n")
    (top / "src" / "calc" / "__init__.py").write_text(PY_FIXED)
    gate = "\n".join(["[gates.gate0]",
                      'command = ["bash", "lib/gates.sh", "gate0", "{mode}", "{worktree}", "{repo}", "{slug}"]',
                      'cwd = "repo"', 'timeout = "60s"', ""])
    configure(top, gate=gate, implementer=seat(tmp_path, "wrong", WRITE.format(path="src/calc/__init__.py",
                                                                               text=PY_WRONG)))
    assert run(cli, top, plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])).code == 1
    configure(top, gate=gate, implementer=seat(tmp_path, "right", WRITE.format(path="src/calc/__init__.py",
                                                                               text=PY_FIXED)))
    result = run(cli, top, plan(tmp_path / "plan.toml", ["src/calc/__init__.py"]))
    assert result.code == 0, result.out + result.err
    assert git(top, "show", "failres/rw/t1:src/calc/__init__.py") == PY_FIXED
    assert (top / "lib" / "gates.sh").read_text() == "#!/bin/bash\nexit 0\n"
