"""An npm-workspaces project: `node_modules/calc` is the link `npm install` makes into `packages/calc`.

Whatever the world — on, unavailable (bubblewrap missing, mode auto), or off — the gate never
judges the person's checkout: a wrong fix in the linked package is not committed, and the person's
uncommitted right fix in their checkout never turns a seat's wrong fix green. In the world a right
fix commits; without one the link would lead the gate to the checkout, so the task is refused before
any seat runs, and the setup the refusal names makes the right fix commit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import git
from node_projects import JS_FIXED, JS_WRONG, NPM_GATE, node_app, workspaces_project
from sandbox_projects import checkout_bytes, configure, plan, seat
from failres.sandbox import probe
from failres.sandbox.probe import machine_sandbox

WRITE = "import pathlib, sys\nsys.stdin.read()\npathlib.Path({path!r}).write_text({text!r})\n"
GATE = NPM_GATE
FILE = "packages/calc/index.js"


@pytest.fixture(params=["world", "unavailable", "off"])
def world(request, monkeypatch) -> str:
    if request.param == "world" and not machine_sandbox().available:
        pytest.skip("no seat world on this machine")
    if request.param == "unavailable":
        monkeypatch.setenv(probe.PROGRAM_VARIABLE, "/nonexistent/bwrap")
    return request.param


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return node_app(tmp_path, workspaces_project, monkeypatch).top


def run(cli, app: Path, tmp_path: Path, world: str, text: str, gate: str = GATE, extra: str = ""):
    extra += '[sandbox]\nmode = "off"\n' if world == "off" else ""
    configure(app, gate=gate, implementer=seat(tmp_path, "seat", WRITE.format(path=FILE, text=text)), extra=extra)
    git(app, "add", ".failres.toml")
    git(app, "commit", "-q", "-m", "failres configured")
    return cli(app, "run", str(plan(tmp_path / "plan.toml", [FILE])), "--quiet")


def test_a_right_fix_in_a_linked_package_commits(app: Path, world: str, cli, tmp_path: Path):
    before = checkout_bytes(app)
    result = run(cli, app, tmp_path, world, JS_FIXED)
    if world != "world":
        assert result.code == 1, result.out + result.err
        assert "gate-unavailable" in result.out and "node_modules/calc links to packages/calc" in result.out
        assert git(app, "rev-parse", "failres/rw/t1").strip() == git(app, "rev-parse", "main").strip()
        # The fix the refusal names: each workspace its own install, the checkout's not lent.
        gate = GATE + 'setup = ["npm", "ci", "--offline", "--no-audit", "--no-fund"]\nkeep = ["node_modules/"]\n'
        result = run(cli, app, tmp_path, world, JS_FIXED, gate=gate, extra="[workspace]\nenvironment = []\n")
    assert result.code == 0, result.out + result.err
    assert git(app, "show", f"failres/rw/t1:{FILE}") == JS_FIXED
    assert checkout_bytes(app)[FILE] == before[FILE]
    assert (app / "node_modules" / "calc").is_symlink()


def test_a_wrong_fix_in_a_linked_package_is_not_committed(app: Path, world: str, cli, tmp_path: Path):
    result = run(cli, app, tmp_path, world, JS_WRONG)
    assert result.code == 1, result.out + result.err
    assert git(app, "rev-parse", "failres/rw/t1").strip() == git(app, "rev-parse", "main").strip()


def test_the_persons_fix_in_the_checkout_never_makes_the_seats_wrong_fix_green(app: Path, world: str, cli,
                                                                               tmp_path: Path):
    (app / FILE).write_text(JS_FIXED)  # the person's own fix, not committed
    before = checkout_bytes(app)
    result = run(cli, app, tmp_path, world, JS_WRONG)
    assert result.code == 1, result.out + result.err
    assert git(app, "rev-parse", "failres/rw/t1").strip() == git(app, "rev-parse", "main").strip()
    after = checkout_bytes(app)
    assert after[FILE] == before[FILE] == JS_FIXED.encode()
    assert after["node_modules/calc"] == before["node_modules/calc"]


# The fix a link's refusal names, to the word: each workspace its own install, the checkout's not lent.
OWN_INSTALL = re.compile(r'\[gates\.tests\] setup = (\[[^]]*\]) with keep = (\["node_modules/"\]), '
                         r'and \[workspace\] environment = \[\]')


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


def test_the_refusal_in_the_journal_names_the_lines_a_run_then_commits_with(app: Path, cli, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch):
    from failres.journal import read_journal
    from lessons.storage.store import Store

    monkeypatch.setenv(probe.PROGRAM_VARIABLE, "/nonexistent/bwrap")
    assert run(cli, app, tmp_path, "unavailable", JS_FIXED).code == 1
    refusal = [e for e in read_journal(Store(app), "rw").for_task("t1") if e["type"] == "quarantined"][-1]
    named = OWN_INSTALL.search(refusal["message"])
    assert named is not None and named[1] == '["npm", "ci"]', refusal["message"]
    result = run(cli, app, tmp_path, "unavailable", JS_FIXED, gate=f"{GATE}setup = {named[1]}\nkeep = {named[2]}\n",
                 extra="[workspace]\nenvironment = []\n")
    assert result.code == 0, result.out + result.err
