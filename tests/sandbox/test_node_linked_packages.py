"""Node projects whose `node_modules/calc` is the link `npm install` makes into the checkout:
npm workspaces (`packages/calc`) and a `file:` dependency (`lib/calc`).

Whatever the world — on; unavailable under mode auto because bubblewrap is missing, or because it
runs but the kernel refuses its worlds the way Ubuntu 24.04's AppArmor does (at the uid map, or at
the loopback of the world's own network); or off — the gate never judges the person's checkout: a
wrong fix in the linked package is not committed, and the person's uncommitted right fix in their
checkout never turns a seat's wrong fix green. In the world a right fix commits; without one the
link would lead the gate to the checkout, so the task is refused before any seat runs, and the
configuration the refusal names, applied as it says, makes the right fix commit. The unavailable
worlds differ only in the reason the run gives.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import git
from node_projects import (
    JS_FIXED,
    JS_WRONG,
    NPM_GATE,
    NodeApp,
    file_dependency_project,
    node_app,
    workspaces_project,
)
from sandbox_machines import MISSING, REFUSALS, refusing_user_namespaces, without_bubblewrap
from sandbox_projects import checkout_bytes, configure, plan, seat
from failres.sandbox.probe import machine_sandbox

WRITE = "import pathlib, sys\nsys.stdin.read()\npathlib.Path({path!r}).write_text({text!r})\n"
# Why each unavailable world says it has none: proof the run stood on the machine meant.
WHY = {"missing": f"bubblewrap ({MISSING}) is not installed", "refused": REFUSALS["uid-map"],
       "refused-net": REFUSALS["loopback"]}
# What each refusal names as the way to this machine's world: never bubblewrap where it is installed.
WORLD_FIX = {"missing": "fix: install it: apt-get install bubblewrap", "refused": "sysctl", "refused-net": "sysctl",
             "off": 'fix: set [sandbox] mode = "auto" so gates run in the seat world'}
SHAPES = {"workspaces": workspaces_project, "file-dependency": file_dependency_project}


@pytest.fixture(params=["world", "missing", "refused", "refused-net", "off"])
def world(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "world" and not machine_sandbox().available:
        pytest.skip("no seat world on this machine")
    if request.param == "missing":
        without_bubblewrap(monkeypatch)
    if request.param.startswith("refused"):
        at = "loopback" if request.param == "refused-net" else "uid-map"
        refusing_user_namespaces(tmp_path / "bin", monkeypatch, at=at)
    return request.param


@pytest.fixture(params=list(SHAPES))
def app(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NodeApp:
    return node_app(tmp_path, SHAPES[request.param], monkeypatch)


def persons_files(app: NodeApp) -> dict[str, bytes]:
    """The person's checkout, node_modules and its links included; not the configuration each run writes."""
    return {path: data for path, data in checkout_bytes(app.top).items()
            if path != ".failres.toml" and not path.startswith(".git/")}


def journal(app: NodeApp) -> list[dict]:
    from failres.journal import read_journal
    from lessons.storage.store import Store

    return read_journal(Store(app.top), "rw").for_task("t1")


def seat_runs(app: NodeApp) -> int:
    """How many seats the task's runs have paid for."""
    return sum(e["type"] == "seat-dispatched" for e in journal(app))


def run(cli, app: NodeApp, tmp_path: Path, world: str, caplog, text: str, gate: str = NPM_GATE, extra: str = ""):
    extra += '[sandbox]\nmode = "off"\n' if world == "off" else ""
    configure(app.top, gate=gate, implementer=seat(tmp_path, "seat", WRITE.format(path=app.file, text=text)),
              extra=extra)
    git(app.top, "add", ".failres.toml")
    git(app.top, "commit", "-q", "-m", "failres configured")
    caplog.clear()
    result = cli(app.top, "run", str(plan(tmp_path / "plan.toml", [app.file])), "--quiet")
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "no seat world" in r.getMessage()]
    if world in WHY:
        assert len(said) == 1 and WHY[world] in said[0], said
    else:
        assert said == [], said
    return result


def committed(app: NodeApp) -> bool:
    return git(app.top, "rev-parse", "failres/rw/t1").strip() != git(app.top, "rev-parse", "main").strip()


# The fix a refusal names, to the word: each workspace its own install, the checkout's not lent.
OWN_INSTALL = re.compile(r'\[gates\.tests\] setup = (\[[^]]*\]) with keep = (\["node_modules/"\]), '
                         r'and \[workspace\] environment = \[\]')


def judged(cli, app: NodeApp, tmp_path: Path, world: str, caplog, text: str):
    """The run's result; without a world, once the task has been refused before any seat, the result
    of the run with the configuration the refusal names, applied as it says."""
    result = run(cli, app, tmp_path, world, caplog, text)
    if world == "world":
        return result
    assert result.code == 1, result.out + result.err
    refusal = [e for e in journal(app) if e["type"] == "quarantined"][-1]
    assert refusal["failClass"] == "gate-unavailable"
    assert f"node_modules/calc links to {app.package}" in refusal["message"]
    assert seat_runs(app) == 0 and not committed(app)
    assert WORLD_FIX[world] in refusal["message"], refusal["message"]
    assert world == "missing" or "install it" not in refusal["message"]
    named = OWN_INSTALL.search(refusal["message"])
    # The install the committed package-lock.json asks for.
    assert named is not None and named[1] == '["npm", "ci"]', refusal["message"]
    return run(cli, app, tmp_path, world, caplog, text, gate=f"{NPM_GATE}setup = {named[1]}\nkeep = {named[2]}\n",
               extra="[workspace]\nenvironment = []\n")


def test_a_right_fix_in_a_linked_package_commits(app: NodeApp, world: str, cli, tmp_path: Path, caplog):
    before = persons_files(app)
    result = judged(cli, app, tmp_path, world, caplog, JS_FIXED)
    assert result.code == 0, result.out + result.err
    assert seat_runs(app) == 1
    assert git(app.top, "show", f"failres/rw/t1:{app.file}") == JS_FIXED
    assert persons_files(app) == before


def test_a_wrong_fix_in_a_linked_package_is_not_committed(app: NodeApp, world: str, cli, tmp_path: Path, caplog):
    before = persons_files(app)
    result = judged(cli, app, tmp_path, world, caplog, JS_WRONG)
    assert result.code == 1, result.out + result.err
    assert seat_runs(app) == 1 and not committed(app)
    assert persons_files(app) == before


def test_the_persons_fix_in_the_checkout_never_makes_the_seats_wrong_fix_green(app: NodeApp, world: str, cli,
                                                                               tmp_path: Path, caplog):
    (app.top / app.file).write_text(JS_FIXED)  # the person's own fix, not committed
    before = persons_files(app)
    result = judged(cli, app, tmp_path, world, caplog, JS_WRONG)
    assert result.code == 1, result.out + result.err
    assert seat_runs(app) == 1 and not committed(app)
    after = persons_files(app)
    assert after == before
    assert after[app.file] == JS_FIXED.encode() and after["node_modules/calc"] == b"->../" + app.package.encode()


@pytest.mark.parametrize(("lockfile", "install"), [
    ("package-lock.json", ["npm", "ci"]), ("pnpm-lock.yaml", ["pnpm", "install", "--frozen-lockfile"]),
    ("yarn.lock", ["yarn", "install", "--frozen-lockfile"]), (None, ["npm", "install"])])
def test_a_links_refusal_names_the_install_the_workspaces_lockfile_asks_for(tmp_path: Path, lockfile, install):
    from failres.sandbox.environment import node_install
    from failres.sandbox.redirect import refusal_message

    if lockfile is not None:
        (tmp_path / lockfile).write_text("")
    named = OWN_INSTALL.search(refusal_message("tests", "node_modules/calc links to lib/calc", node_install(tmp_path)))
    assert named is not None and json.loads(named[1]) == install
