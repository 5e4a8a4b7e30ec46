"""What a gate keeps between dispatches cannot fool it: a seat that replaces `.venv/bin/python`
with a script that prints "1 passed" gets a gate that judges with the setup's own interpreter."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import git
from project import BROKEN, FIXED, Project
from test_containment import quarantined, run

SETUP = ("import os, sys; os.makedirs('.venv/bin', exist_ok=True); "
         "os.path.lexists('.venv/bin/python') or os.symlink(sys.executable, '.venv/bin/python')")
FAKE = "#!/bin/sh\necho '1 passed'\n"


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def with_venv_gate(project: Project) -> None:
    (project.top / ".gitignore").write_text(".venv/\n")
    git(project.top, "add", ".gitignore")
    git(project.top, "commit", "-q", "-m", "ignore the environment")
    toml = project.top / ".failres.toml"
    text = toml.read_text().replace(
        f"command = {json.dumps([sys.executable, 'tests/check.py'])}",
        f"command = {json.dumps(['.venv/bin/python', 'tests/check.py'])}\n"
        f"setup = {json.dumps([sys.executable, '-c', SETUP])}\nkeep = [\".venv/\"]")
    # The kept `.venv/bin/python` links to this interpreter: the world binds nothing a workspace
    # file points at, so the person names it, as they would a toolchain off PATH.
    toml.write_text(text.replace("[sandbox]\n", f"[sandbox]\nread = {json.dumps([sys.prefix])}\n", 1))


def test_a_seat_that_replaces_the_kept_interpreter_does_not_turn_the_gate_green(project: Project, cli):
    replace = (f"rm -f .venv/bin/python && printf {FAKE!r} > .venv/bin/python "
               "&& chmod +x .venv/bin/python")
    project.configure(implementer=[{"shell": [replace]}], fixer=[{"shell": [replace]}])
    with_venv_gate(project)
    result = run(cli, project)
    assert result.code == 1, result.out + result.err
    branch = f"failres/{project.slug}/t1"
    if git(project.top, "branch", "--list", branch).strip():
        assert git(project.top, "show", f"{branch}:src/calc.py") == BROKEN
    assert "task-committed" not in project.types()
    results = [e for e in project.events() if e["type"] == "gate-result"]
    assert results and not any(e["passed"] for e in results), project.types()


PTH_LINE = "import sys, types; m = types.ModuleType('calc'); m.add = lambda a, b: a + b; sys.modules['calc'] = m"
PLANT_PTH = ("import glob\n"
             "for d in glob.glob('.venv/lib/python*/site-packages'):\n"
             "    try:\n"
             f"        open(d + '/planted.pth', 'w').write({PTH_LINE!r} + '\\n')\n"
             "    except OSError:\n"
             "        pass\n")


def with_kept_gate(project: Project, kept: str, command: list[str], setup: list[str]) -> None:
    """The gate `command`, its `setup` making the one kept (and ignored) directory `kept`."""
    (project.top / ".gitignore").write_text(f"{kept}/\n")
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "ignore the environment")
    toml = project.top / ".failres.toml"
    toml.write_text(toml.read_text().replace(
        f"command = {json.dumps([sys.executable, 'tests/check.py'])}",
        f"command = {json.dumps(command)}\nsetup = {json.dumps(setup)}\nkeep = [\"{kept}/\"]"))


def with_real_venv_gate(project: Project) -> None:
    with_kept_gate(project, ".venv", [".venv/bin/python", "tests/check.py"],
                   [sys.executable, "-m", "venv", "--without-pip", ".venv"])


def test_a_pth_the_gate_run_code_plants_in_the_kept_venv_never_turns_the_next_gate_green(project: Project, cli):
    """The seat's code, imported by the first gate, plants a `.pth` that stubs the module under
    test; the next gate must not judge with it (the committed tree would fail on a clean clone)."""
    planted = PLANT_PTH + BROKEN
    project.configure(implementer=[{"write": {"src/calc.py": planted}}], fixer=[{"write": {"src/calc.py": planted}}])
    with_real_venv_gate(project)
    result = run(cli, project)
    assert result.code == 1, result.out + result.err
    assert "task-committed" not in project.types()
    gates = [e for e in project.events() if e["type"] == "gate-result" and not e.get("preflight")]
    assert gates and not any(e["passed"] for e in gates), project.types()


def test_a_setup_rerun_running_the_seats_code_cannot_move_the_persons_main(project: Project, cli,
                                                                          seat_world: bool):
    """The seat rewrites the setup script (in its scope) and touches the kept dir, so the setup
    runs again before the next gate, with the seat's code: world or not, `main` stays."""
    (project.top / "tools").mkdir()
    (project.top / "tools" / "setup.py").write_text("import os\nos.makedirs('.venv', exist_ok=True)\n")
    (project.top / ".gitignore").write_text(".venv/\n")
    git(project.top, "add", ".")
    git(project.top, "commit", "-q", "-m", "a setup script")
    main = git(project.top, "rev-parse", "main").strip()
    other = git(project.top, "rev-parse", "main~1").strip()
    hostile = ("import os, subprocess\nos.makedirs('.venv', exist_ok=True)\n"
               f"subprocess.run(['git', '--git-dir', {str(project.top / '.git')!r}, 'update-ref', 'refs/heads/main', "
               f"{other!r}])\n")
    seat = {"write": {"tools/setup.py": hostile, "src/calc.py": BROKEN + "\n"}, "shell": ["touch .venv/changed || true"]}
    project.configure(implementer=[seat], fixer=[seat])
    toml = project.top / ".failres.toml"
    toml.write_text(toml.read_text().replace(
        'cwd = "worktree"', f'cwd = "worktree"\nsetup = {json.dumps([sys.executable, "tools/setup.py"])}\n'
                            'keep = [".venv/"]', 1))
    result = run(cli, project, files=["src/calc.py", "tools/setup.py"])
    assert git(project.top, "rev-parse", "main").strip() == main
    assert result.code == 1, result.out + result.err
    assert "task-committed" not in project.types()
    if not seat_world:
        assert quarantined(project)["failClass"] == "seat-tamper"


def test_a_seat_cannot_write_the_kept_paths_in_the_world_and_is_caught_without_one(project: Project, cli,
                                                                                 seat_world: bool):
    """Read-only to seats inside the world (the write fails, nothing to rebuild, the fix lands);
    without one the fingerprint taken after setup catches the write: `seat-tamper`, not committed."""
    write = "touch .venv/planted 2>/dev/null; touch \"$FAILRES_WORKTREE/.venv/planted-too\" 2>/dev/null; true"
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}, "shell": [write]}])
    with_venv_gate(project)
    result = run(cli, project)
    if seat_world:
        assert result.code == 0, result.out + result.err
        assert "seat-tamper" not in project.types()
        assert git(project.top, "show", f"failres/{project.slug}/t1:src/calc.py") == FIXED
    else:
        assert result.code == 1, result.out + result.err
        assert quarantined(project)["failClass"] == "seat-tamper"
        assert "task-committed" not in project.types()


# A gate whose tool writes its cache into the kept node_modules on every run, at the top and
# beside a package it loads, as esm does under dequal's `npm test`, and which trusts what it
# finds there (a cache a seat could fill).
CACHING_GATE = (
    "import pathlib, runpy, sys\n"
    "cache = pathlib.Path('node_modules/.cache/tool')\n"
    "if (cache / 'verdict').is_file() and (cache / 'verdict').read_text() == 'pass':\n"
    "    print('1 passed (cached)')\n    sys.exit(0)\n"
    "try:\n    for place in (cache, pathlib.Path('node_modules/tool/node_modules/.cache/tool')):\n"
    "        place.mkdir(parents=True, exist_ok=True)\n        (place / 'compiled.json').write_text('{}')\n"
    "except OSError:\n    pass\n"
    "runpy.run_path('tests/check.py', run_name='__main__')\n"
)
NODE_SETUP = ("import os; os.makedirs('node_modules/tool', exist_ok=True); "
              "open('node_modules/tool/index.js', 'w').write('module.exports = 1;\\n')")


def with_caching_node_gate(project: Project) -> None:
    (project.top / "tools").mkdir()
    (project.top / "tools" / "gate.py").write_text(CACHING_GATE)
    with_kept_gate(project, "node_modules", [sys.executable, "tools/gate.py"], [sys.executable, "-c", NODE_SETUP])


def test_a_gate_tool_writing_its_cache_in_the_kept_node_modules_is_not_a_seats_tampering(project: Project, cli):
    """The first gate's own cache write once read as `seat-tamper` before the next gate, and a
    right fix was quarantined: the fix after a red first gate lands."""
    project.configure(implementer=[{"write": {"src/calc.py": BROKEN + "\n"}}], fixer=[{"write": {"src/calc.py": FIXED}}])
    with_caching_node_gate(project)
    result = run(cli, project)
    assert result.code == 0, result.out + result.err
    assert "seat-tamper" not in project.types()
    assert git(project.top, "show", f"failres/{project.slug}/t1:src/calc.py") == FIXED


def test_what_a_seat_leaves_in_the_kept_node_modules_cache_is_never_read_by_the_gate(project: Project, cli):
    """The cache is not fingerprinted, so it is cleared before every gate: a seat's planted
    verdict there does not turn a wrong fix green."""
    plant = "mkdir -p node_modules/.cache/tool 2>/dev/null && printf pass > node_modules/.cache/tool/verdict || true"
    project.configure(implementer=[{"write": {"src/calc.py": BROKEN + "\n"}, "shell": [plant]}],
                      fixer=[{"write": {"src/calc.py": BROKEN + "\n\n"}, "shell": [plant]}])
    with_caching_node_gate(project)
    result = run(cli, project)
    assert result.code == 1, result.out + result.err
    assert "task-committed" not in project.types()
    gates = [e for e in project.events() if e["type"] == "gate-result" and not e.get("preflight")]
    assert gates and not any(e["passed"] for e in gates), project.types()
