"""Where the machine gives no seat world: the run says so once, finds an environment that
points into the checkout before the first dispatch and names the fix; "required" refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git, run_failres
from project import FIXED, Project
from sandbox_projects import configure, node_gate, node_project, plan, python_gate, python_project, seat
from failres.sandbox import probe

FIX = {"write": {"src/calc.py": FIXED}}
NOTHING = "import sys\nsys.stdin.read()\n"


@pytest.fixture
def no_world(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one without bubblewrap."""
    monkeypatch.setenv(probe.PROGRAM_VARIABLE, "/nonexistent/bwrap")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def warnings(caplog: pytest.LogCaptureFixture, words: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and words in r.getMessage()]


def test_without_a_world_auto_runs_as_before_and_says_so_once(project: Project, no_world):
    project.configure(implementer=[FIX])
    result = run_failres(project.top, "run", str(project.plan()), "--quiet",
                         env={k: v for k, v in os.environ.items()})
    assert result.returncode == 0, result.stderr
    assert project.branch_file("src/calc.py") == FIXED
    lines = [line for line in result.stderr.splitlines() if "no seat world" in line]
    assert len(lines) == 1 and lines[0].startswith("warning: ")
    assert "bubblewrap (/nonexistent/bwrap) is not installed" in lines[0]


def test_required_without_a_world_refuses_to_dispatch_and_writes_nothing(project: Project, cli, no_world):
    project.configure(implementer=[FIX], extra='[sandbox]\nmode = "required"\n')
    store_before = git(project.top, "rev-parse", "refs/failres/store")
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 2
    assert result.err.startswith("error: ") and 'mode = "required"' in result.err
    assert project.calls("impl") == 0
    assert git(project.top, "rev-parse", "refs/failres/store") == store_before


def test_the_environment_requires_the_world_over_a_file_that_switches_it_off(project: Project, cli, no_world,
                                                                          monkeypatch: pytest.MonkeyPatch):
    """How a CI job fails closed: FAILRES_SANDBOX_MODE=required wins over `mode = "off"`."""
    project.configure(implementer=[FIX], extra='[sandbox]\nmode = "off"\n')
    store_before = git(project.top, "rev-parse", "refs/failres/store")
    monkeypatch.setenv("FAILRES_SANDBOX_MODE", "required")
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 2
    assert result.err.startswith("error: ") and 'mode = "required"' in result.err
    assert project.calls("impl") == 0
    assert git(project.top, "rev-parse", "refs/failres/store") == store_before


@pytest.mark.parametrize("value", ["off", "auto", "Required"])
def test_the_environment_cannot_loosen_the_world_or_pass_a_typo_for_it(project: Project, cli, no_world,
                                                                     monkeypatch: pytest.MonkeyPatch, value: str):
    project.configure(implementer=[FIX], extra='[sandbox]\nmode = "required"\n')
    monkeypatch.setenv("FAILRES_SANDBOX_MODE", value)
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 2
    assert result.err.splitlines()[0] == (f'error: environment: FAILRES_SANDBOX_MODE must be "required" (it can '
                                          f'only tighten [sandbox] mode), not {value!r}')
    assert project.calls("impl") == 0


def test_required_with_a_world_runs(project: Project, cli):
    if not probe.machine_sandbox().available:
        pytest.skip("no seat world on this machine")
    project.configure(implementer=[FIX], extra='[sandbox]\nmode = "required"\n')
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 0


def test_off_says_nothing_about_the_world(project: Project, cli, caplog):
    project.configure(implementer=[FIX], extra='[sandbox]\nmode = "off"\n')
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 0 and warnings(caplog, "seat world") == []


def test_an_editable_install_into_the_checkout_is_named_before_the_first_dispatch(tmp_path: Path, cli, no_world,
                                                                                 caplog):
    top = tmp_path / "calc"
    top.mkdir()
    python_project(top)
    configure(top, gate=python_gate(top, []), implementer=seat(tmp_path, "idle", NOTHING))
    cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])), "--quiet")
    found = warnings(caplog, "points into your checkout")
    assert len(found) == 1
    assert "editable install" in found[0] and "PYTHONPATH=src" in found[0]
    assert ".venv/lib/" in found[0]


def test_a_link_into_the_checkout_in_node_modules_is_named(tmp_path: Path, cli, no_world, caplog):
    top = tmp_path / "app"
    top.mkdir()
    node_project(top)
    configure(top, gate=node_gate(), implementer=seat(tmp_path, "idle", NOTHING))
    cli(top, "run", str(plan(tmp_path / "plan.toml", ["lib/calc/index.js"])), "--quiet")
    found = warnings(caplog, "points into your checkout")
    assert len(found) == 1 and "node_modules/calc links to lib/calc" in found[0]


def test_an_environment_that_points_nowhere_near_the_checkout_is_not_named(project: Project, cli, no_world,
                                                                           caplog):
    (project.top / ".venv" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (project.top / ".venv" / "lib" / "python3.11" / "site-packages" / "other.pth").write_text("/usr/lib/elsewhere\n")
    project.configure(implementer=[FIX])
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 0 and warnings(caplog, "points into your checkout") == []
    assert len(warnings(caplog, "no seat world")) == 1


def test_the_environment_setting_names_what_is_looked_at(tmp_path: Path, cli, no_world, caplog):
    top = tmp_path / "app"
    top.mkdir()
    node_project(top)
    configure(top, gate=node_gate(), implementer=seat(tmp_path, "idle", NOTHING),
              extra="[workspace]\nenvironment = []\n")
    cli(top, "run", str(plan(tmp_path / "plan.toml", ["lib/calc/index.js"])), "--quiet")
    assert warnings(caplog, "points into your checkout") == []


def test_a_wrong_environment_setting_is_refused_with_its_key(project: Project, cli):
    project.configure(implementer=[FIX], extra='[sandbox]\nmode = "sometimes"\n')
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 2 and "sandbox.mode" in result.err and result.err.count("\n") <= 2
