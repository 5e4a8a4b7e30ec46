"""Where the machine gives no seat world: the run says so once, finds an environment that
points into the checkout before the first dispatch and names the fix; "required" refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git, run_failres
from node_projects import linked_by_path_project, node_gate
from project import FIXED, Project
from sandbox_machines import REFUSALS, refusing_user_namespaces, without_bubblewrap
from sandbox_projects import configure, plan, python_gate, python_project, seat
from failres.sandbox import probe

FIX = {"write": {"src/calc.py": FIXED}}
NOTHING = "import sys\nsys.stdin.read()\n"


@pytest.fixture
def no_world(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one without bubblewrap."""
    without_bubblewrap(monkeypatch)


@pytest.fixture
def userns_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine as one whose kernel keeps user namespaces from bubblewrap (Ubuntu 24.04's
    AppArmor, `unprivileged_userns_clone = 0`): bwrap runs, a world does not."""
    refusing_user_namespaces(tmp_path / "bin", monkeypatch)


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


@pytest.mark.parametrize("at", list(REFUSALS))
def test_where_bubblewrap_is_refused_auto_runs_without_a_world_and_says_why(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: str):
    """Refused at the uid map, or at the loopback of the network namespace every world has (both
    Ubuntu 24.04's AppArmor): no world, and the probe must say so, not find one and leave every
    seat to "crash" before it runs."""
    refusing_user_namespaces(tmp_path / "refusing", monkeypatch, at=at)
    project.configure(implementer=[FIX])
    result = run_failres(project.top, "run", str(project.plan()), "--quiet", env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert project.branch_file("src/calc.py") == FIXED
    lines = [line for line in result.stderr.splitlines() if "no seat world" in line]
    assert len(lines) == 1 and REFUSALS[at].removeprefix("bwrap: ") in lines[0]


def test_where_user_namespaces_are_refused_required_refuses_and_names_the_kernel_settings(project: Project, cli,
                                                                                         userns_refused):
    project.configure(implementer=[FIX], extra='[sandbox]\nmode = "required"\n')
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 2 and project.calls("impl") == 0
    assert "setting up uid map" in result.err and "user.max_user_namespaces" in result.err


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
    assert "editable install" in found[0] and "first on the gate's PYTHONPATH" in found[0]
    assert ".venv/lib/" in found[0]


def test_a_link_into_the_checkout_in_node_modules_is_named(tmp_path: Path, cli, no_world, caplog):
    top = tmp_path / "app"
    top.mkdir()
    linked_by_path_project(top)
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
    linked_by_path_project(top)
    configure(top, gate=node_gate(), implementer=seat(tmp_path, "idle", NOTHING),
              extra="[workspace]\nenvironment = []\n")
    cli(top, "run", str(plan(tmp_path / "plan.toml", ["lib/calc/index.js"])), "--quiet")
    assert warnings(caplog, "points into your checkout") == []


def test_a_wrong_environment_setting_is_refused_with_its_key(project: Project, cli):
    project.configure(implementer=[FIX], extra='[sandbox]\nmode = "sometimes"\n')
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert result.code == 2 and "sandbox.mode" in result.err and result.err.count("\n") <= 2


# ── without a world, the gate judges the workspace or nothing ─────────

WRITE = "import pathlib, sys\nsys.stdin.read()\npathlib.Path({path!r}).write_text({text!r})\n"


def calc_project(tmp_path: Path) -> Path:
    top = tmp_path / "calc"
    top.mkdir()
    python_project(top)
    return top


def seat_writing(tmp_path: Path, name: str, text: str) -> list[str]:
    return seat(tmp_path, name, WRITE.format(path="src/calc/__init__.py", text=text))


def branch_tip(top: Path) -> str:
    return git(top, "branch", "--list", "failres/rw/t1", "--format=%(objectname)").strip()


def test_without_a_world_the_persons_fix_in_the_checkout_does_not_make_a_wrong_fix_green(tmp_path: Path, cli,
                                                                                        no_world):
    from sandbox_projects import PY_FIXED, PY_WRONG, the_test_site_packages

    top = calc_project(tmp_path)
    (top / "src" / "calc" / "__init__.py").write_text(PY_FIXED)  # the person's own fix, not committed
    configure(top, gate=python_gate(top, [the_test_site_packages()]), implementer=seat_writing(tmp_path, "w", PY_WRONG))
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])), "--quiet")
    assert result.code == 1, result.out + result.err
    assert branch_tip(top) == git(top, "rev-parse", "main").strip()  # nothing committed
    gates = [e for e in read_events(top) if e["type"] == "gate-result"]
    assert [(bool(e.get("preflight")), e["passed"]) for e in gates][:2] == [(True, False), (False, False)]


def test_without_a_world_a_right_fix_is_committed(tmp_path: Path, cli, no_world):
    from sandbox_projects import PY_FIXED, PY_WRONG, the_test_site_packages

    top = calc_project(tmp_path)
    (top / "src" / "calc" / "__init__.py").write_text(PY_WRONG)  # the person's own wrong edit, not committed
    configure(top, gate=python_gate(top, [the_test_site_packages()]), implementer=seat_writing(tmp_path, "r", PY_FIXED))
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])), "--quiet")
    assert result.code == 0, result.out + result.err
    assert git(top, "show", "failres/rw/t1:src/calc/__init__.py") == PY_FIXED
    assert (top / "src" / "calc" / "__init__.py").read_text() == PY_WRONG  # the person's edit untouched


def test_without_a_world_an_environment_that_puts_the_checkout_first_is_refused_before_any_seat(
        tmp_path: Path, cli, no_world):
    """A `.pth` that inserts the checkout ahead of everything by code cannot be redirected: the canary
    sees the package imported from the checkout, and no seat is paid for a verdict that would lie."""
    from sandbox_projects import PY_FIXED, the_test_site_packages

    top = calc_project(tmp_path)
    site = next((top / ".venv" / "lib").glob("python*/site-packages"))
    (site / "aaa_first.pth").write_text(f"import sys; sys.path.insert(0, {str(top / 'src')!r})\n")
    marker = tmp_path / "seat-ran"
    implementer = seat(tmp_path, "m", f"import pathlib, sys\nsys.stdin.read()\npathlib.Path({str(marker)!r}).touch()\n")
    configure(top, gate=python_gate(top, [the_test_site_packages()]), implementer=implementer)
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])), "--quiet")
    assert result.code == 1
    assert not marker.exists()
    event = [e for e in read_events(top) if e["type"] == "quarantined"][-1]
    assert event["failClass"] == "gate-unavailable"
    assert "imports calc from" in event["message"] and "install bubblewrap" in event["message"]
    # The refusal names the file and the line that put the checkout first, not a setup to invent.
    line = f"import sys; sys.path.insert(0, {str(top / 'src')!r})"
    where = (site / "aaa_first.pth").relative_to(top).as_posix()
    assert f"take out of {where} the line `{line}`" in event["message"], event["message"]
    assert ".venv/bin/python -m pip install -e ." in event["message"]
    # Taken out as it says (the file held only that line), the same plan commits a right fix.
    (site / "aaa_first.pth").write_text("")
    right = seat_writing(tmp_path, "r", PY_FIXED)
    configure(top, gate=python_gate(top, [the_test_site_packages()]) + '[stop_loss]\nmode = "off"\n',
              implementer=right)
    assert cli(top, "run", str(plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])), "--quiet").code == 0
    assert git(top, "show", "failres/rw/t1:src/calc/__init__.py") == PY_FIXED


def test_without_a_world_a_node_link_into_the_checkout_is_refused_before_any_seat(tmp_path: Path, cli, no_world):
    top = tmp_path / "app"
    top.mkdir()
    linked_by_path_project(top)
    marker = tmp_path / "seat-ran"
    implementer = seat(tmp_path, "m", f"import pathlib, sys\nsys.stdin.read()\npathlib.Path({str(marker)!r}).touch()\n")
    configure(top, gate=node_gate(), implementer=implementer)
    result = cli(top, "run", str(plan(tmp_path / "plan.toml", ["lib/calc/index.js"])), "--quiet")
    assert result.code == 1 and not marker.exists()
    event = [e for e in read_events(top) if e["type"] == "quarantined"][-1]
    assert event["failClass"] == "gate-unavailable" and "node_modules/calc links to lib/calc" in event["message"]


@pytest.mark.parametrize("world", ["world-off", "world-on"])
def test_a_dry_run_preflight_and_the_real_run_say_the_same_of_the_head(tmp_path: Path, cli, monkeypatch, world):
    """The trap at the head: a green head, the person's wrong edit uncommitted in the checkout."""
    from sandbox_projects import PY_FIXED, PY_WRONG, the_test_site_packages

    if world == "world-on" and not probe.machine_sandbox().available:
        pytest.skip("no seat world on this machine")
    if world == "world-off":
        without_bubblewrap(monkeypatch)
    top = calc_project(tmp_path)
    (top / "src" / "calc" / "__init__.py").write_text(PY_FIXED)
    git(top, "commit", "-q", "-am", "fixed at the head")
    (top / "src" / "calc" / "__init__.py").write_text(PY_WRONG)
    configure(top, gate=python_gate(top, [the_test_site_packages()]),
              implementer=seat(tmp_path, "idle", NOTHING))
    plan_path = plan(tmp_path / "plan.toml", ["src/calc/__init__.py"])
    dry = cli(top, "run", str(plan_path), "--dry-run", "--preflight", "--json")
    assert dry.code == 0, dry.err
    assert [p["verdict"] for p in json.loads(dry.out)["preflight"]] == ["green"]
    assert cli(top, "run", str(plan_path), "--quiet").code == 0
    head = [e for e in read_events(top) if e["type"] == "gate-result" and e.get("preflight")]
    assert [e["verdict"] for e in head] == ["green"]


def read_events(top: Path) -> list[dict]:
    from failres.journal import read_journal
    from lessons.storage.store import Store

    return read_journal(Store(top), "rw").for_task("t1")
