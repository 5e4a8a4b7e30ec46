"""Real-shaped projects for the seat-world tests: the setups people have, built for real.

A src-layout Python package whose `.venv/` sits inside the checkout with the package
installed editable into it (`pip install -e .`, offline: no build isolation, no
dependencies), with a bug a fix must repair and a gate that imports the code through the
environment — the way the person runs it; the configuration, seats and plan every such test
writes. The node projects are in `node_projects.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import git

PY_BROKEN = "def add(a, b):\n    return a - b\n"
PY_FIXED = "def add(a, b):\n    return a + b\n"
PY_WRONG = "def add(a, b):\n    return a + b + 1\n"
PY_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def the_test_site_packages() -> str:
    """Where this test run's pytest and setuptools are: a toolchain the gate's venv borrows."""
    return sysconfig.get_paths()["purelib"]


def python_project(top: Path) -> Path:
    """A src-layout package with `.venv/` in the checkout and an editable install of it."""
    (top / "src" / "calc").mkdir(parents=True)
    (top / "tests").mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "src" / "calc" / "__init__.py").write_text(PY_BROKEN)
    (top / "tests" / "test_calc.py").write_text(PY_TEST)
    (top / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "calc"\nversion = "0.1"\n[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    (top / ".gitignore").write_text(".venv/\n*.egg-info/\n__pycache__/\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "calc with a bug")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(top / ".venv")], check=True)
    venv_python = top / ".venv" / "bin" / "python"
    site = subprocess.run([str(venv_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # pytest, setuptools and pip come from this run's own environment, as a person's
    # system site-packages would provide them: nothing is downloaded.
    Path(site, "toolchain.pth").write_text(the_test_site_packages() + "\n")
    subprocess.run([str(venv_python), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                    "--no-index", "-e", str(top)], check=True, capture_output=True, cwd=top,
                   env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    shutil.rmtree(top / "src" / "calc.egg-info", ignore_errors=True)
    return venv_python


def python_gate(top: Path, read: list[str]) -> str:
    """The gate as people write it: the checkout's venv python, by its path, runs pytest."""
    python = str(top / ".venv" / "bin" / "python")
    return "\n".join([
        "[gates.tests]",
        f'command = {json.dumps([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])}',
        'cwd = "worktree"', 'timeout = "60s"',
        "[sandbox]", f"read = {json.dumps(read)}", ""])


def seat(agents: Path, name: str, script: str) -> list[str]:
    """A scripted seat: a small Python program run in the task's workspace."""
    path = agents / f"{name}.py"
    path.write_text(script)
    return [sys.executable, str(path)]


def configure(top: Path, *, gate: str, implementer: list[str], extra: str = "", binding: str = "") -> None:
    """The configuration of one gate and one binding `impl` (`binding`: more of its keys)."""
    from failres.initialise import init_repository

    (top / ".failres.toml").write_text("\n".join([
        gate, "[bindings.impl]", f"command = {json.dumps(implementer)}", 'timeout = "60s"', binding,
        "[seats]", 'implementer = "impl"', "[repair]", "max_attempts = 0", extra, ""]))
    init_repository(top, hooks=False)


def one_file_repo(top: Path) -> Path:
    """A repository with one commit of `src/a.py`."""
    (top / "src").mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    (top / "src" / "a.py").write_text("A = 1\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "one file")
    return top


def plan(path: Path, files: list[str], tasks: tuple[str, ...] = ("t1",)) -> Path:
    text = 'slug = "rw"\n'
    for task in tasks:
        text += (f'[[tasks]]\nid = "{task}"\ntitle = "Fix add"\nprompt = "Make the tests pass."\n'
                 f"files = {json.dumps(files)}\n")
    path.write_text(text)
    return path


def checkout_bytes(top: Path) -> dict[str, bytes]:
    """Every file of the person's checkout, and the git dir's config and hooks, by path."""
    out = {}
    for path in sorted(top.rglob("*")):
        rel = path.relative_to(top).as_posix()
        if rel.startswith(".git/") and not (rel == ".git/config" or rel.startswith(".git/hooks/")):
            continue
        if path.is_symlink():
            out[rel] = b"->" + os.readlink(path).encode()
        elif path.is_file():
            out[rel] = path.read_bytes()
    return out
