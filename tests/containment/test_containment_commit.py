"""What is committed is exactly what the gate judged, whatever the seat planted: a forged
object under the name of the file it writes, `.gitattributes` that make the committed bytes
differ from the written ones, and code under test that reaches the person's repository
while the gate runs it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from test_containment import TOP, quarantined, run


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")

FIX = {"write": {"src/calc.py": FIXED}}

FORGE = r'''
oid=$(git hash-object src/calc.py)
python3 - "$top/.git/objects" "$oid" <<'PY'
import os, sys, zlib
objects, oid = sys.argv[1], sys.argv[2]
evil = b"def add(a, b):\n    return a - b  # forged\n"
path = os.path.join(objects, oid[:2], oid[2:])
os.makedirs(os.path.dirname(path), exist_ok=True)
open(path, "wb").write(zlib.compress(b"blob %d\0" % len(evil) + evil))
PY
'''


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def test_a_forged_object_under_the_name_of_the_fixed_file_is_never_committed(project: Project, cli, seat_world: bool):
    main = git(project.top, "rev-parse", "main").strip()
    project.configure(implementer=[{**FIX, "shell": [TOP + "\n" + FORGE]}])
    result = run(cli, project)
    fsck = subprocess.run(["git", "fsck", "--full"], cwd=project.top, capture_output=True, text=True)
    assert "mismatch" not in fsck.stdout + fsck.stderr  # the forged file is gone
    # Inside the world the forgery lands in the workspace's own objects: whatever is
    # committed holds the true bytes.
    if git(project.top, "rev-parse", "failres/rr/t1").strip() != main:
        assert project.branch_file("src/calc.py") == FIXED
    if not seat_world:
        assert result.code == 1 and quarantined(project)["failClass"] == "seat-tamper"
        assert git(project.top, "rev-parse", "failres/rr/t1").strip() == main  # nothing committed
    # The next run, with an honest seat, commits the real bytes.
    project.configure(implementer=[FIX])
    assert run(cli, project).code == 0
    assert project.branch_file("src/calc.py") == FIXED


def test_attributes_that_change_the_committed_bytes_make_the_gate_judge_what_a_clone_gets(project: Project, cli):
    # `ident` turns the written "$Id: judged $" into "$Id$" in the commit: the code passes only
    # with the bytes the seat wrote, never with those a checkout of the commit gives.
    sly = "V = \"$Id: judged $\"\ndef add(a, b):\n    return a + b if 'judged' in V else a - b\n"
    project.configure(implementer=[{"write": {"src/calc.py": sly, "src/.gitattributes": "calc.py ident\n"}}])
    run(cli, project, files=["src/**"])
    gates = [e["passed"] for e in project.events() if e["type"] == "gate-result"]
    assert gates and not any(gates)
    assert "task-committed" not in project.types()
    assert git(project.top, "rev-parse", "failres/rr/t1").strip() == git(project.top, "rev-parse", "main").strip()


def test_code_under_test_that_writes_into_the_persons_repository_is_undone_and_quarantined(
        project: Project, cli, seat_world: bool):
    config = (project.top / ".git" / "config").read_bytes()
    payload = FIXED + (
        "import os, pathlib\n"
        "top = pathlib.Path(os.environ['FAILRES_REPO'])\n"
        "with open(top / '.git' / 'config', 'a') as h:\n"
        "    h.write('[alias]\\n\\tst = !echo PWNED\\n')\n"
        "(top / 'src' / 'other.py').write_text('VALUE = 666\\n')\n"
    )
    project.configure(implementer=[{"write": {"src/calc.py": payload}}])
    result = run(cli, project)
    assert (project.top / ".git" / "config").read_bytes() == config
    assert (project.top / "src" / "other.py").read_text() == "VALUE = 1\n"
    if seat_world:  # the gate wrote into the workspace laid at the repository's path: none of it is committed
        if "task-committed" in project.types():
            assert project.branch_file("src/other.py") == "VALUE = 1\n"
        return
    assert result.code == 1
    assert quarantined(project)["failClass"] == "seat-tamper"
    tamper = [e for e in project.events() if e["type"] == "seat-tamper"][-1]
    assert all(line.startswith("while gate check ran:") for line in tamper["what"])


def test_a_file_name_that_is_not_utf8_is_refused_and_the_failing_state_is_still_kept(project: Project, cli):
    odd = {"shell": ["printf 'x\\n' > $'src/bad\\xff.py'"], **FIX}
    project.configure(implementer=[odd, odd])
    result = run(cli, project, files=["src/**"])
    assert result.code == 1 and "Traceback" not in result.err
    assert quarantined(project)["failClass"] == "fixer-scope-violation"
    snapshots = git(project.top, "for-each-ref", "--format=%(refname)", "refs/failres/snapshots/").split()
    assert snapshots, "the quarantine kept no snapshot"
    kept = git(project.top, "ls-tree", "-r", "--name-only", snapshots[-1]).split()
    assert "src/calc.py" in kept and not any("bad" in name for name in kept)
