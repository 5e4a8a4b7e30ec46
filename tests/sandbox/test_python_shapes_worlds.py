"""Three Python projects shaped as people have them, judged right in every world this machine may give.

The shapes: a src-layout package installed editable into the checkout's `.venv/`; the same with a
version module the build writes and git ignores (hatch-vcs, setuptools-scm), which `init` carries
into workspaces with `[workspace] include`; and a pytest configured with `--color=yes`. The worlds:
the seat world; bubblewrap missing; and bubblewrap present but refused, as Ubuntu 24.04's AppArmor
restriction refuses it, at the uid map or at a world's loopback (all under `mode = "auto"`). In each, a seat's
right fix is committed and the person's checkout is left as it was, and the trap (the person's
right fix uncommitted in the checkout, the seat's fix wrong) is never committed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import git
from sandbox_projects import (
    PY_FIXED,
    PY_WRONG,
    checkout_bytes,
    configure,
    plan,
    python_gate,
    python_project,
    seat,
    the_test_site_packages,
)
from sandbox_machines import refusing_user_namespaces, without_bubblewrap
from failres.initialise import starter_config
from failres.journal import read_journal
from failres.sandbox import probe
from lessons.storage.store import Store

SHAPES = ("editable", "generated-version", "color")
WORLDS = ("world", "bwrap-missing", "userns-refused", "loopback-refused")
REFUSED_AT = {"userns-refused": "uid-map", "loopback-refused": "loopback"}
WRITE = "import pathlib, sys\nsys.stdin.read()\npathlib.Path('src/calc/__init__.py').write_text({text!r})\n"
VERSION_LINE = "from calc._version import version as __version__\n"
ESCAPE = re.compile(r"\x1b|\\u001b")


@pytest.fixture(params=WORLDS)
def world(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The `[sandbox]` lines of the world asked for, with this machine made to give it."""
    if request.param == "world":
        if not probe.machine_sandbox().available:
            pytest.skip(f"no seat world on this machine: {probe.machine_sandbox().why}")
        return 'mode = "required"'
    if request.param == "bwrap-missing":
        without_bubblewrap(monkeypatch)
    else:
        refusing_user_namespaces(tmp_path / "bin", monkeypatch, at=REFUSED_AT[request.param])
    assert not probe.machine_sandbox().available
    return 'mode = "auto"'


def shaped(tmp_path: Path, shape: str) -> Path:
    top = tmp_path / "calc"
    top.mkdir()
    python_project(top)
    package = top / "src" / "calc" / "__init__.py"
    if shape == "generated-version":
        # What hatch-vcs writes at install time: ignored by git, imported by the package.
        (top / "src" / "calc" / "_version.py").write_text("version = '0.1.dev3+g1234567'\n")
        (top / ".gitignore").write_text((top / ".gitignore").read_text() + "src/calc/_version.py\n")
        pyproject = top / "pyproject.toml"
        pyproject.write_text(pyproject.read_text() + '[tool.hatch.build.hooks.vcs]\nversion-file = "src/calc/_version.py"\n')
        package.write_text(VERSION_LINE + package.read_text())
    elif shape == "color":
        pyproject = top / "pyproject.toml"
        pyproject.write_text(pyproject.read_text() + '[tool.pytest.ini_options]\naddopts = "--color=yes"\n')
    if shape != "editable":
        git(top, "add", ".")
        git(top, "commit", "-q", "-m", f"the {shape} shape")
    return top


def source(shape: str, text: str) -> str:
    return VERSION_LINE + text if shape == "generated-version" else text


def setting_up(top: Path, tmp_path: Path, shape: str, world: str, text: str) -> Path:
    """The configuration for a seat writing `text`; the workspace lines as `init` writes them."""
    written = starter_config("main", "script", top=top)
    workspace = written[written.index("[workspace]"):] if "[workspace]" in written else ""
    if shape == "generated-version":
        assert 'include = ["src/calc/_version.py"]' in workspace  # init names the generated file itself
    gate = python_gate(top, [the_test_site_packages()]) + world + "\n"
    configure(top, gate=gate, implementer=seat(tmp_path, "seat", WRITE.format(text=source(shape, text))),
              extra=workspace)
    return plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])


def kept_text(top: Path) -> str:
    """Everything of the run a person reads back: the journal's events."""
    return json.dumps([e for e in read_journal(Store(top), "rw").events])


@pytest.mark.parametrize("shape", SHAPES)
def test_a_right_fix_is_committed_and_the_checkout_is_left_as_it_was(tmp_path: Path, cli, shape: str, world: str):
    top = shaped(tmp_path, shape)
    plan_path = setting_up(top, tmp_path, shape, world, PY_FIXED)
    before = checkout_bytes(top)
    result = cli(top, "run", str(plan_path), "--quiet")
    assert result.code == 0, result.out + result.err
    assert git(top, "show", "failres/rw/t1:src/calc/__init__.py") == source(shape, PY_FIXED)
    assert checkout_bytes(top) == before
    assert not ESCAPE.search(kept_text(top))


@pytest.mark.parametrize("shape", SHAPES)
def test_the_persons_fix_in_the_checkout_never_makes_the_seats_wrong_fix_green(tmp_path: Path, cli, shape: str,
                                                                               world: str):
    top = shaped(tmp_path, shape)
    plan_path = setting_up(top, tmp_path, shape, world, PY_WRONG)
    (top / "src" / "calc" / "__init__.py").write_text(source(shape, PY_FIXED))  # the person's fix, uncommitted
    before = checkout_bytes(top)
    result = cli(top, "run", str(plan_path), "--quiet")
    assert result.code == 1, result.out + result.err
    tip = git(top, "branch", "--list", "failres/rw/t1", "--format=%(objectname)").strip()
    assert tip in ("", git(top, "rev-parse", "main").strip())  # nothing committed
    assert checkout_bytes(top) == before
    events = read_journal(Store(top), "rw").events
    assert [e["failClass"] for e in events if e["type"] == "quarantined"] == ["gate-not-green-after-fixer"]
    assert not ESCAPE.search(kept_text(top))
