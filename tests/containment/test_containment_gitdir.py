"""What a seat writes into the person's git dir beyond refs, config and hooks: the files git
reads as the repository's state (MERGE_HEAD, shallow, alternates, reflogs, an operation in
progress), a checkout edit hidden from a `git status` that trusts stat data, store records
dropped by a fast-forward, and failres itself run by the seat to answer its own decision."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from test_containment import TOP, quarantined, run


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


FIX = {"write": {"src/calc.py": FIXED}}
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def test_planted_git_state_files_are_removed_and_what_was_deleted_comes_back(project: Project, cli, seat_world: bool):
    main = git(project.top, "rev-parse", "main").strip()
    elsewhere = project.top.parent / "elsewhere-objects"
    project.configure(implementer=[{**FIX, "shell": ["; ".join([
        TOP,
        'c=$(git -C "$top" commit-tree -m seat "$(git -C "$top" write-tree)")',
        'echo "$c" > "$top/.git/MERGE_HEAD"; echo "seat" > "$top/.git/MERGE_MSG"',
        f'echo "{main}" > "$top/.git/shallow"',
        f'mkdir -p {elsewhere} && echo {elsewhere} > "$top/.git/objects/info/alternates"',
        'mkdir -p "$top/.git/rebase-merge" && echo refs/heads/main > "$top/.git/rebase-merge/head-name"',
        'rm -rf "$top/.git/logs"',
    ])]}])
    reflog = git(project.top, "reflog", "show", "main")
    result = run(cli, project)
    git_dir = project.top / ".git"
    for planted in ("MERGE_HEAD", "MERGE_MSG", "shallow", "objects/info/alternates", "rebase-merge"):
        assert not os.path.lexists(git_dir / planted), planted
    assert git(project.top, "reflog", "show", "main") == reflog
    assert git(project.top, "rev-list", "--count", "main").strip() == "1"
    if not seat_world:  # inside the world the person's git dir is not there to write
        assert result.code == 1 and quarantined(project)["failClass"] == "seat-tamper"
    # The person's next commit is an ordinary one, with one parent.
    (project.top / "mine.txt").write_text("mine\n")
    git(project.top, "add", "mine.txt")
    git(project.top, "commit", "-q", "-m", "mine")
    assert git(project.top, "rev-list", "--parents", "-1", "HEAD").split()[1:] == [main]


def test_an_in_place_edit_with_its_mtime_put_back_is_found_whatever_the_persons_trustctime(
        project: Project, cli, seat_world: bool):
    git(project.top, "config", "core.trustctime", "false")
    hour_ago = time.time() - 3600
    for name in git(project.top, "ls-files").split():
        os.utime(project.top / name, (hour_ago, hour_ago))
    git(project.top, "update-index", "-q", "--really-refresh")
    time.sleep(1.1)  # git keeps stat times to the second: the edit comes in a later one
    edit = ('f="$top/src/other.py"; t=$(stat -c %Y "$f"); '
            'python3 -c "import sys; h=open(sys.argv[1],\'r+b\'); h.write(b\'VALUE = 7\\n\')" "$f"; '
            'touch -d "@$t" "$f"')
    project.configure(implementer=[{**FIX, "shell": [f"{TOP}; {edit}"]}])
    result = run(cli, project)
    assert (project.top / "src" / "other.py").read_text() == "VALUE = 1\n"
    if not seat_world:  # inside the world the person's checkout is not there to edit
        assert result.code == 1 and quarantined(project)["failClass"] == "seat-tamper"


def store_files(top: Path) -> set[str]:
    return set(git(top, "ls-tree", "-r", "--name-only", "refs/failres/store").split())


def test_a_fast_forward_of_the_store_that_drops_records_is_tamper_and_every_record_comes_back(
        project: Project, cli, seat_world: bool):
    project.configure(implementer=[FIX])
    assert run(cli, project, task="t0").code == 0  # an earlier task's records
    kept = store_files(project.top)
    wipe = (f'{TOP}; cd "$top"; tip=$(git rev-parse refs/failres/store); '
            'empty=$(git mktree </dev/null); '
            'git update-ref refs/failres/store "$(git commit-tree -p "$tip" -m tidy "$empty")" "$tip"')
    project.configure(implementer=[{**FIX, "shell": [wipe]}])
    result = run(cli, project)
    assert kept <= store_files(project.top)
    assert [e["type"] for e in project.events("t0")][-1] == "task-committed"
    if not seat_world:  # inside the world the person's store is not there to move
        assert result.code == 1 and quarantined(project)["failClass"] == "seat-tamper"


def test_a_seat_cannot_answer_its_own_decision_with_failres_itself(project: Project, cli):
    project.configure(implementer=[{"print": "SCOPE-REQUEST: src/other.py — the value lives there"}])
    assert run(cli, project).code == 1
    [decision] = json.loads(cli(project.top, "decisions", "--json").out)
    failres = f"{sys.executable} -m failres"
    answer = (f'{TOP}; cd "$top"; PYTHONPATH={REPO_ROOT} {failres} decide {decision["id"]} --scope-files src/other.py; '
              f'echo $? > {project.agents}/decide.exit')
    # failres itself is readable inside the seat world too, as an installed failres is.
    project.configure(implementer=[{**FIX, "shell": [answer]}],
                      extra=f"[sandbox]\nread = {json.dumps([str(REPO_ROOT)])}\n")
    run(cli, project)
    assert (project.agents / "decide.exit").read_text().strip() == "2"
    [after] = json.loads(cli(project.top, "decisions", "--json").out)
    assert (after["status"], after["answer"]) == ("open", None)
