"""Tasks that run at once and hash the same blob never take it from each other.

The incident: under `run --jobs 2`, task a's red attempt wrote a blob X, task b committed a
tree holding the same X, and when a was done the clean-up of a's "fresh" objects removed
X from the person's object database: `git fsck --strict` said `missing blob`, `land`
failed with `unable to read sha1 file`. Identical blobs across tasks are ordinary (an
empty file, boilerplate, a reverted line); here the seats are scripted so that a's red
attempt comes first, b commits the same bytes next, and a finishes last.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from test_containment import TOP

SHARED = "BOILERPLATE = 'the same bytes in two tasks'\n"
# The seats see the person's refs (the order of the tasks) and write by absolute path.
OUTSIDE_THE_WORLD = '[sandbox]\nmode = "off"\n'


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def wait_for(condition: str) -> str:
    """Bash that waits (a minute at most) until `condition` holds: the seats' order, not a timing."""
    return f"for i in $(seq 600); do {condition} && break; sleep 0.1; done; {condition} || exit 7"


def configure_shared(project: Project, *, a_goes_green: bool) -> Path:
    """Task a: red with X in src/a.py, then (once b has committed X in src/b.py) something else.

    Task b: waits until a's red attempt is in, then commits X. Both fix add, identically,
    so the two branches land one after the other without a conflict.
    """
    marks = project.agents
    b_branch = f"refs/heads/failres/{project.slug}/b"
    b_moved = f'[ "$(git -C "$top" rev-parse {b_branch})" != "$(git -C "$top" rev-parse main)" ]'
    fixed = json.dumps(FIXED)
    implementer = (
        'if [ "$FAILRES_TASK" = a ]; then\n'
        f"  printf %b {json.dumps(SHARED)} > src/a.py\n"
        "else\n"
        f"  {wait_for(f'[ -e {marks}/a-was-red ]')}\n"
        f"  printf %b {json.dumps(SHARED)} > src/b.py; printf %b {fixed} > src/calc.py\n"
        "fi\n")
    ending = f"printf %b {fixed} > src/calc.py" if a_goes_green else "true"
    fixer = (
        f"{TOP}\n"
        f"touch {marks}/a-was-red\n"  # the fixer runs only once a's red attempt was accepted and judged
        f"{wait_for(b_moved)}\n"
        "printf 'A = 1\\n' > src/a.py\n"
        f"{ending}\n")
    project.configure(implementer=[{"shell": [implementer]}] * 4, fixer=[{"shell": [fixer]}] * 4,
                      extra=OUTSIDE_THE_WORLD)
    plan = project.agents.parent / "plan.toml"
    plan.write_text(f'slug = "{project.slug}"\n' + "".join(
        f'[[tasks]]\nid = "{task}"\nprompt = "Make tests/check.py pass."\nfiles = ["src/**"]\n' for task in "ab"))
    return plan


def fsck(top: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=top, capture_output=True, text=True)


def test_a_blob_a_red_attempt_wrote_and_another_task_committed_stays_and_both_tasks_land(project: Project, cli):
    plan = configure_shared(project, a_goes_green=True)
    result = cli(project.top, "run", str(plan), "--quiet", "--jobs", "2", "--json")
    assert result.code == 0, result.err
    assert {o["task"]: o["state"] for o in json.loads(result.out)} == {"a": "committed", "b": "committed"}
    checked = fsck(project.top)
    assert checked.returncode == 0 and "missing" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    assert project.branch_file("src/b.py", "b") == SHARED
    assert cli(project.top, "land", project.slug, "b").code == 0
    assert cli(project.top, "land", project.slug, "a").code == 0
    assert git(project.top, "show", "main:src/b.py") == SHARED
    assert git(project.top, "show", "main:src/a.py") == "A = 1\n"
    assert fsck(project.top).returncode == 0


def test_a_quarantined_task_takes_no_blob_another_task_committed_and_its_snapshot_and_lesson_stay_readable(
        project: Project, cli):
    plan = configure_shared(project, a_goes_green=False)
    result = cli(project.top, "run", str(plan), "--quiet", "--jobs", "2", "--json")
    assert {o["task"]: o["state"] for o in json.loads(result.out)} == {"a": "quarantined", "b": "committed"}
    checked = fsck(project.top)
    assert checked.returncode == 0 and "missing" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    assert cli(project.top, "land", project.slug, "b").code == 0
    assert git(project.top, "show", "main:src/b.py") == SHARED
    [lesson] = [entry for entry in json.loads(cli(project.top, "lessons", "list", "--json").out)
                if entry["task"] == "a"]
    snapshots = git(project.top, "for-each-ref", "--format=%(refname)", f"refs/failres/snapshots/{project.slug}/a/")
    [snapshot] = snapshots.split()
    assert snapshot.endswith("/" + lesson["id"])
    assert git(project.top, "show", f"{snapshot}:src/a.py") == "A = 1\n"  # the judged tree, readable
    assert cli(project.top, "lessons", "show", lesson["id"]).code == 0


def test_an_object_of_the_task_a_later_seat_rewrote_in_the_tasks_directory_never_enters_the_persons(
        project: Project, cli):
    """The implementer's file is hashed into the task's own object directory; the fixer rewrites
    that object there (same name, other bytes) and fixes add: the forgery is never committed."""
    forge = (
        f'{TOP}\noid=$(git hash-object src/a.py)\n'
        f'loose="$top/.git/failres/workspaces/{project.slug}/t1/objects/${{oid:0:2}}/${{oid:2}}"\n'
        'python3 - "$loose" <<\'PY\'\n'
        'import os, sys, zlib\n'
        'evil = b"A = \'forged\'\\n"\n'
        'os.chmod(sys.argv[1], 0o644)\n'
        'with open(sys.argv[1], "r+b") as out:\n'  # in place: the directory's time does not move
        '    out.truncate(0); out.write(zlib.compress(b"blob %d\\0" % len(evil) + evil))\n'
        'PY\n')
    project.configure(implementer=[{"write": {"src/a.py": "A = 'true'\n"}}],
                      fixer=[{"shell": [forge], "write": {"src/calc.py": FIXED}}], extra=OUTSIDE_THE_WORLD)
    result = cli(project.top, "run", str(project.plan(files=["src/**"])), "--quiet")
    assert result.code == 1
    quarantined = [e for e in project.events() if e["type"] == "quarantined"]
    assert [e["failClass"] for e in quarantined] == ["seat-tamper"], [e["message"] for e in quarantined]
    assert git(project.top, "rev-parse", "failres/rr/t1").strip() == git(project.top, "rev-parse", "main").strip()
    checked = fsck(project.top)
    assert checked.returncode == 0 and "mismatch" not in checked.stdout + checked.stderr
    assert "forged" not in git(project.top, "log", "-p", "--all")
