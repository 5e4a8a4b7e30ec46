"""A seat is untrusted code: each attack a hostile or careless agent makes, and the guarantee that holds.

Every test asserts the guarantee itself — the person's ref, file, config and hooks
unchanged; the late write and the gate's files absent from the commit; the seat's
processes dead; the task not `running` — never a message alone.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store
from project import BROKEN, CHECK, FAKE_AGENT, FIXED, Project


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


FIX = {"write": {"src/calc.py": FIXED}}
# The person's repository top, found as a hostile seat finds it: through the objects its
# workspace borrows; inside the seat world those are bound elsewhere, and the person's path
# (where the world lays the workspace) is the one a seat that knows it would write by.
TOP = ('top=$(dirname "$(dirname "$(head -1 .git/objects/info/alternates)")"); '
       '[ -d "$top/.git/failres" ] || top=$FAILRES_WORKTREE')


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def run(cli, project: Project, *args: str, task: str = "t1", files: list[str] | None = None):
    return cli(project.top, "run", str(project.plan(files=files, task=task)), "--quiet", *args)


def refs(top: Path) -> dict[str, str]:
    listing = git(top, "for-each-ref", "--format=%(refname) %(objectname)")
    found = dict(line.split(" ", 1) for line in listing.splitlines())
    found["HEAD"] = git(top, "symbolic-ref", "HEAD").strip()
    return found


def quarantined(project: Project, task: str = "t1") -> dict:
    return [e for e in project.events(task) if e["type"] == "quarantined"][-1]


def committed_tree(project: Project, task: str = "t1") -> dict[str, str]:
    """path -> content of every file on the task branch."""
    names = git(project.top, "ls-tree", "-r", "--name-only", f"failres/{project.slug}/{task}").split()
    return {name: project.branch_file(name, task) for name in names}


def person_branch(project: Project, name: str, commits: int) -> str:
    git(project.top, "branch", name)
    git(project.top, "checkout", "-q", name)
    for i in range(commits):
        (project.top / f"{name}-{i}.txt").write_text(f"{i}\n")
        git(project.top, "add", ".")
        git(project.top, "commit", "-q", "-m", f"{name} work {i}")
    git(project.top, "checkout", "-q", "main")
    return git(project.top, "rev-parse", name).strip()


def assert_second_run_refused(project: Project, cli, plan: Path, pid: int) -> None:
    """A second `run` of the live task is refused, writes nothing, and `status` shows the live one."""
    tip = git(project.top, "rev-parse", "refs/failres/store").strip()
    second = cli(project.top, "run", str(plan), "--quiet")
    assert second.code == 2 and f"already running, pid {pid}" in second.err
    assert git(project.top, "rev-parse", "refs/failres/store").strip() == tip  # the refused run wrote nothing
    status = json.loads(cli(project.top, "status", "--json").out)[0]
    assert (status["state"], status["pid"]) == ("running", pid)


def is_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(")") + 2:].split()[0] in ("Z", "X")


def host_pids(*argv: str) -> list[int]:
    """The host's live processes whose command line starts with `argv` ("" matches any word):
    found from outside, so a process in the seat world's PID namespace (whose own pid means
    nothing here) is found too."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = entry.name.isdigit() and os.fsdecode((entry / "cmdline").read_bytes()).split("\0")
        except OSError:
            continue
        if words and len(words) >= len(argv) and all(w in ("", have) for w, have in zip(argv, words)) \
                and not is_gone(int(entry.name)):
            found.append(int(entry.name))
    return found


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def wait_for(condition, seconds: float = 30.0) -> None:
    give_up = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < give_up, "timed out waiting"
        time.sleep(0.05)


# ── git commands in the workspace reach nothing of the person's ──────────


def test_a_seat_that_checks_out_a_persons_branch_and_edits_cannot_rewrite_that_branch(project: Project, cli):
    dev = person_branch(project, "dev", 2)
    hostile = {"shell": [f"git fetch -q {project.top} dev:dev && git checkout -q -f dev"], **FIX}
    project.configure(implementer=[hostile])
    run(cli, project)
    assert git(project.top, "rev-parse", "dev").strip() == dev
    assert git(project.top, "log", "--format=%s", "dev").splitlines()[:2] == ["dev work 1", "dev work 0"]
    assert refs(project.top)["HEAD"] == "refs/heads/main"


def test_update_ref_in_the_workspace_moves_neither_main_nor_the_store(project: Project, cli):
    project.configure(implementer=[{**FIX, "shell": [
        "git update-ref refs/heads/main $(git hash-object -w --stdin </dev/null) || true",
        "git update-ref -d refs/failres/store || true",
        "git commit -q --allow-empty -m seat || true"]}])
    before = refs(project.top)
    assert run(cli, project).code == 0
    after = refs(project.top)
    assert after["refs/heads/main"] == before["refs/heads/main"]
    assert "refs/failres/store" in after
    assert committed_tree(project)["src/calc.py"] == FIXED


def test_a_seat_that_moves_the_persons_main_by_absolute_path_is_undone_and_quarantined(
        project: Project, cli, seat_world: bool):
    other = person_branch(project, "other", 1)
    main = git(project.top, "rev-parse", "main").strip()
    project.configure(implementer=[{**FIX, "shell": [f"git -C {project.top} update-ref refs/heads/main {other}"]}])
    result = run(cli, project)
    assert git(project.top, "rev-parse", "main").strip() == main
    if seat_world:  # inside the world that path is the workspace's: its own main moved, none of the person's
        return
    assert result.code == 1
    assert quarantined(project)["failClass"] == "seat-tamper"
    tamper = [e for e in project.events() if e["type"] == "seat-tamper"][-1]
    assert any("refs/heads/main" in line and "put back" in line for line in tamper["what"])
    assert git(project.top, "rev-parse", f"failres/{project.slug}/t1").strip() == main  # nothing committed


def test_a_seat_that_deletes_the_store_by_absolute_path_loses_no_record(project: Project, cli, seat_world: bool):
    project.configure(implementer=[{**FIX, "shell": [f"git -C {project.top} update-ref -d refs/failres/store"]}])
    result = run(cli, project)
    types = project.types()
    assert types[0] == "task-started" and "seat-dispatched" in types  # written before the seat ran
    if not seat_world:  # inside the world that path is the workspace's, which holds no store
        assert result.code == 1
        assert quarantined(project)["failClass"] == "seat-tamper"


def test_writes_into_the_persons_checkout_and_config_are_undone_and_kept(project: Project, cli, seat_world: bool):
    config_before = (project.top / ".git" / "config").read_bytes()
    (project.top / "notes.txt").write_text("the person's own notes\n")  # untracked work of the person
    hostile = {**FIX, "shell": [
        f"echo 'VALUE = 666' > {project.top}/src/other.py",
        f"printf '[core]\\n\\tfsmonitor = {project.top}/evil.sh\\n' >> {project.top}/.git/config",
        f"echo planted > {project.top}/planted.txt",
        f"echo overwritten > {project.top}/notes.txt"]}
    project.configure(implementer=[hostile])
    result = run(cli, project)
    assert (project.top / "src" / "other.py").read_text() == "VALUE = 1\n"
    assert (project.top / ".git" / "config").read_bytes() == config_before
    assert not (project.top / "planted.txt").exists()
    assert (project.top / "notes.txt").read_text() == "the person's own notes\n"
    if seat_world:  # inside the world those paths are the workspace's: its changes out of scope are refused
        assert result.code == 1 and "task-committed" not in project.types()
        return
    assert result.code == 1
    assert quarantined(project)["failClass"] == "seat-tamper"
    # What the seat left is kept: nothing is lost if it was the person's own work after all.
    [kept] = (project.top / ".git" / "failres" / "tamper").glob("*/checkout/notes.txt")
    assert kept.read_text() == "overwritten\n"
    assert (kept.parent / "planted.txt").read_text() == "planted\n"


def test_a_planted_hook_is_removed_and_failres_never_runs_a_hook_for_its_commits(
        project: Project, cli, seat_world: bool):
    marker = project.agents / "hook-ran"
    hooks = project.top / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    person_hook = hooks / "reference-transaction"
    person_hook.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    person_hook.chmod(0o755)
    project.configure(implementer=[FIX])
    assert run(cli, project).code == 0  # a commit and branch moves, and no hook of the person's ran
    assert not marker.exists()

    planted = f"#!/bin/sh\necho planted >> {marker}\n"
    project.configure(implementer=[{**FIX, "shell": [
        f"printf '{planted}' > {hooks}/post-commit && chmod +x {hooks}/post-commit"]}])
    result = run(cli, project, task="t2")
    assert not (hooks / "post-commit").exists()
    assert not marker.exists()
    if not seat_world:  # inside the world the person's hooks are not there to plant in
        assert result.code == 1
        assert quarantined(project, "t2")["failClass"] == "seat-tamper"


# ── what the seat hides from git does not change the verdict ──────────────


def test_skip_worktree_on_an_edited_check_does_not_hide_it_from_the_scope_guard(project: Project, cli):
    cheat = {**FIX, "write": {"src/calc.py": BROKEN, "tests/check.py": "print('1 passed')\n"},
             "git": [["update-index", "--skip-worktree", "tests/check.py"]]}
    project.configure(implementer=[cheat])
    assert run(cli, project).code == 1
    q = quarantined(project)
    assert q["failClass"] == "fixer-scope-violation"
    violations = [e["files"] for e in project.events() if e["type"] == "scope-violation"]
    assert violations == [["tests/check.py"], ["tests/check.py"]]
    assert git(project.top, "rev-parse", "failres/rr/t1").strip() == q["intHead"]


def test_a_file_hidden_by_the_workspaces_own_exclude_is_still_a_change(project: Project, cli):
    hide = {**FIX, "write": {**FIX["write"], "PASS": "x\n"}, "shell": ["echo PASS >> .git/info/exclude"]}
    project.configure(implementer=[hide, FIX])
    assert run(cli, project).code == 0
    assert [e["files"] for e in project.events() if e["type"] == "scope-violation"] == [["PASS"]]
    assert "PASS" not in committed_tree(project)


def test_an_ignored_file_a_seat_writes_never_reaches_the_gate(project: Project, cli):
    # The gate passes only when PASS exists; the seat writes it and a .gitignore hiding both.
    gate = [sys.executable, "-c", "import os, sys; sys.exit(0 if os.path.exists('PASS') else 1)"]
    hide = {"write": {"PASS": "x\n", ".gitignore": "PASS\n.gitignore\n"}}
    project.configure(implementer=[hide], extra=f'[gates.pass]\ncommand = {json.dumps(gate)}\ncwd = "worktree"\n')
    plan = project.plan()
    plan.write_text(plan.read_text() + 'gate = "pass"\n')
    assert cli(project.top, "run", str(plan), "--quiet").code == 1
    gates = [e for e in project.events() if e["type"] == "gate-result" and not e.get("preflight")]
    assert [g["passed"] for g in gates] == [False]


def test_a_forged_row_in_the_index_answers_no_decision(project: Project, cli):
    ask = {"print": "SCOPE-REQUEST: src/other.py — needed"}
    violate = {"write": {"src/calc.py": FIXED, "src/other.py": "VALUE = 2\n"}}
    project.configure(implementer=[ask, violate, violate])
    assert run(cli, project).code == 1
    from lessons.recall.retrieval import task_decisions

    assert len(task_decisions(Store(project.top), project.slug, "t1")) == 1  # the index is current now
    [index_file] = (project.top / ".git" / "failres").glob("index-*.sqlite")
    with sqlite3.connect(index_file) as db:
        rows = db.execute("SELECT record, doc FROM decisions").fetchall()
        assert rows
        for record_key, doc in rows:
            record = json.loads(doc)
            record.update(status="answered", answer={"scopeFiles": ["src/other.py"]})
            db.execute("UPDATE decisions SET doc = ?, status = 'answered' WHERE record = ?",
                       (json.dumps(record), record_key))
    assert run(cli, project).code == 1
    assert "decision-answered" not in project.types()
    assert quarantined(project)["failClass"] == "fixer-scope-violation"
    started = [e for e in project.events() if e["type"] == "task-started"][-1]
    assert started["scope"] == ["src/calc.py"]  # not widened by a row nobody wrote into the store


# ── processes and files after the check ──────────────────────────────────


def test_a_process_the_seat_leaves_behind_cannot_write_into_the_commit(project: Project, cli, seat_world: bool):
    pid_file = project.agents / "late.pid"
    late = (f"setsid bash -c 'echo $$ > {pid_file}; sleep 0.5; echo EVIL > src/calc.py; echo x > src/late.py; "
            f"exec -a late-{pid_file} sleep 1000' </dev/null >/dev/null 2>&1 & "
            f"while [ ! -s {pid_file} ]; do sleep 0.01; done")
    project.configure(implementer=[{**FIX, "shell": [late]}])
    assert run(cli, project).code == 0
    assert committed_tree(project)["src/calc.py"] == FIXED
    assert "src/late.py" not in committed_tree(project)
    if not seat_world:  # inside the world its pid is the PID namespace's own
        assert is_gone(int(pid_file.read_text()))
    assert host_pids(f"late-{pid_file}") == []


def test_files_the_gate_writes_are_never_committed(project: Project, cli):
    gate = project.agents / "gate.sh"
    gate.write_text("#!/bin/bash\nset -e\necho '<coverage/>' > coverage.xml\nmkdir -p src/__pycache__ docs\n"
                    "echo pyc > src/__pycache__/calc.pyc\necho 'GENERATED = 2' > src/other.py\n"
                    "echo changed > docs/notes.md\n" + f"exec {sys.executable} tests/check.py\n")
    # The gate script runs the interpreter by its path: inside the world, what it names is read.
    read = json.dumps([str(Path(sys.executable).parent.parent), sys.base_prefix])
    gate.chmod(0o755)
    project.configure(implementer=[FIX], extra=f'[gates.gen]\ncommand = ["{gate}"]\ncwd = "worktree"\n'
                      f'[scope]\nprotected = ["docs/**"]\n[sandbox]\nread = {read}\n')
    plan = project.plan(files=["src/**"])
    plan.write_text(plan.read_text() + 'gate = "gen"\n')
    assert cli(project.top, "run", str(plan), "--quiet").code == 0
    tree = committed_tree(project)
    # The start's files with the seat's one change: nothing the gate wrote, generated or
    # cached, and nothing in the protected docs/.
    assert tree == {"docs/notes.md": "notes\n", "src/calc.py": FIXED, "src/other.py": "VALUE = 1\n",
                    "tests/check.py": CHECK}

    patch = project.agents / "fix.diff"
    patch.write_text(git(project.top, "diff", "main", f"failres/{project.slug}/t1", "--", "src/calc.py"))
    plan2 = project.plan(files=["src/**"], task="t2")
    plan2.write_text(plan2.read_text() + 'gate = "gen"\n')
    assert cli(project.top, "run", str(plan2), "--quiet", "--patch", str(patch)).code == 0
    patched = committed_tree(project, "t2")
    assert patched["src/calc.py"] == FIXED and patched["src/other.py"] == "VALUE = 1\n"
    assert set(patched) == set(tree)  # exactly the patch, nothing the gate wrote


def test_a_symlink_in_scope_pointing_at_a_protected_file_is_a_violation(project: Project, cli):
    link = {**FIX, "symlink": {"src/notes.md": "../docs/notes.md"}}
    project.configure(implementer=[link, FIX], extra='[scope]\nprotected = ["docs/**"]\n')
    assert run(cli, project, files=["src/**"]).code == 0
    assert [e["files"] for e in project.events() if e["type"] == "scope-violation"] == [["src/notes.md"]]
    assert "src/notes.md" not in committed_tree(project)


def test_the_seat_is_not_told_where_the_persons_repository_is(project: Project, cli, seat_world: bool):
    dump = project.agents / "env.json"
    project.configure(implementer=[{**FIX, "shell": [
        f"{sys.executable} -c 'import json, os; print(json.dumps(dict(os.environ)))' > {dump}"]}])
    assert run(cli, project).code == 0
    env = json.loads(dump.read_text())
    assert "FAILRES_REPO" not in env and "GIT_DIR" not in env
    if seat_world:  # the world lays the workspace at the repository's path: that path leads to it alone
        assert env["FAILRES_WORKTREE"] == str(project.top)
        return
    assert not any(str(project.top) == value for value in env.values())
    assert env["FAILRES_WORKTREE"] == str(project.workspace()) and not env["FAILRES_WORKTREE"].startswith(
        str(project.top))


def test_a_binding_that_asks_for_the_repository_path_is_refused_before_anything_runs(project: Project, cli):
    project.configure(implementer=[FIX])
    config = project.top / ".failres.toml"
    config.write_text(config.read_text().replace('[bindings.impl]\ncommand = [', '[bindings.impl]\ncommand = ["{repo}", '))
    result = run(cli, project)
    assert result.code == 2 and "{repo} is not available to a seat" in result.err
    assert project.events() == []


def test_an_agent_echoing_its_prompt_raises_no_decision_it_did_not_ask_for(project: Project, cli):
    ask = {"print": "SCOPE-REQUEST: src/other.py — the constant is wrong too"}
    project.configure(implementer=[ask])
    assert run(cli, project).code == 1
    echo = {**FIX, "shell": ["cat \"$FAILRES_PROMPT_FILE\"", "sed 's/^/> /' \"$FAILRES_PROMPT_FILE\""]}
    project.configure(implementer=[echo])
    prompt_before = project.events()
    assert run(cli, project).code == 0, project.types()
    new = project.events()[len(prompt_before):]
    assert not any(e["type"] in ("scope-request", "decision-requested") for e in new)
    decisions = json.loads(cli(project.top, "decisions", "--json").out)
    assert len(decisions) == 1  # only the one the seat really asked for


# ── --patch edges ────────────────────────────────────────────────────────


def test_a_patch_that_does_not_apply_leaves_no_trace(project: Project, cli):
    project.configure(implementer=[FIX])
    bad = project.agents / "bad.diff"
    bad.write_text("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n-def nothing():\n+def x():\n     pass\n")
    Store(project.top).create()
    tip = git(project.top, "rev-parse", "refs/failres/store").strip()
    result = run(cli, project, "--patch", str(bad))
    assert result.code == 2 and "does not apply" in result.err
    assert git(project.top, "rev-parse", "refs/failres/store").strip() == tip
    assert not project.workspace().exists()
    status = json.loads(cli(project.top, "status", "--json").out)
    assert status == []


def test_patch_on_a_committed_task_is_refused_without_force_and_keeps_the_old_commit_with_it(project: Project, cli):
    project.configure(implementer=[FIX])
    assert run(cli, project).code == 0
    old = git(project.top, "rev-parse", "failres/rr/t1").strip()
    patch = project.agents / "p.diff"
    patch.write_text(git(project.top, "diff", "main", old, "--", "src/calc.py"))
    refused = run(cli, project, "--patch", str(patch))
    assert refused.code == 2 and "--force" in refused.err
    assert git(project.top, "rev-parse", "failres/rr/t1").strip() == old
    assert run(cli, project, "--patch", str(patch), "--force").code == 0
    started = [e for e in project.events() if e["type"] == "task-started"][-1]
    assert started["replaces"] == old
    git(project.top, "cat-file", "-e", old)  # still in the repository, named by the journal


# ── live runs: interrupts, locks, cancel, hard kills ─────────────────────


def start_run(project: Project, plan: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan), "--quiet"], cwd=project.top,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def hanging_seat(project: Project) -> tuple[dict, Path, Path]:
    seat_pid = project.agents / "seat.pid"
    child_pid = project.agents / "child.pid"
    turn = {"shell": [f"setsid bash -c 'echo $$ > {child_pid}; exec -a child-{child_pid} sleep 1000' "
                      "</dev/null >/dev/null 2>&1 &",
                      f"echo $PPID > {seat_pid}; sleep 1000"]}
    return turn, seat_pid, child_pid


def seat_and_child(project: Project, seat_pid: Path, child_pid: Path) -> tuple[int, int]:
    """The hanging seat's and its child's pids on the host: those they wrote, or inside the
    world (where they wrote their PID namespace's) the processes found by their command lines."""
    if Project.sandbox_mode == "off":
        return int(seat_pid.read_text()), int(child_pid.read_text())
    [seat] = host_pids("", str(FAKE_AGENT), str(project.agents / "impl.json"))
    [child] = host_pids(f"child-{child_pid}")
    return seat, child


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_seat_journals_interrupted_and_the_next_run_resumes(project: Project, cli, signum, code):
    turn, seat_pid, child_pid = hanging_seat(project)
    project.configure(implementer=[turn, FIX])
    proc = start_run(project, project.plan())
    wait_for(lambda: seat_pid.exists() and child_pid.exists() and seat_pid.read_text().strip()
             and child_pid.read_text().strip())
    seat, child = seat_and_child(project, seat_pid, child_pid)
    proc.send_signal(signum)
    assert proc.wait(timeout=60) == code, proc.stderr.read()
    assert is_gone(seat) and is_gone(child)
    interrupted = [e for e in project.events() if e["type"] == "interrupted"]
    assert [e["reason"] for e in interrupted] == ["signal"]
    assert json.loads(cli(project.top, "status", "--json").out)[0]["state"] == "interrupted"
    assert not project.workspace().exists()
    assert read_lessons(Store(project.top))[0] == []  # an interrupt is not a lesson
    assert run(cli, project).code == 0  # resumed
    assert json.loads(cli(project.top, "status", "--json").out)[0]["state"] == "committed"


def test_a_second_run_of_a_live_task_is_refused_and_cancel_stops_the_first(project: Project, cli):
    turn, seat_pid, child_pid = hanging_seat(project)
    project.configure(implementer=[turn, FIX])
    plan = project.plan()
    first = start_run(project, plan)
    wait_for(lambda: seat_pid.exists() and child_pid.exists() and seat_pid.read_text().strip()
             and child_pid.read_text().strip())
    seat, child = seat_and_child(project, seat_pid, child_pid)
    assert_second_run_refused(project, cli, plan, first.pid)
    cancelled = cli(project.top, "cancel", project.slug, "t1", "--json")
    assert cancelled.code == 0, cancelled.err
    assert json.loads(cancelled.out)[0]["stopped"] is True
    assert first.wait(timeout=60) == 1
    assert is_gone(seat) and is_gone(child)
    assert [e["reason"] for e in project.events() if e["type"] == "interrupted"] == ["cancel"]
    assert read_lessons(Store(project.top))[0] == []  # no bogus seat-crashed lesson from the clash
    assert cli(project.top, "cancel", project.slug, "t1").code == 2  # nothing runs any more


def test_after_a_hard_kill_status_reports_interrupted_and_no_seat_is_left(project: Project, cli):
    turn, seat_pid, child_pid = hanging_seat(project)
    project.configure(implementer=[turn, FIX])
    proc = start_run(project, project.plan())
    wait_for(lambda: seat_pid.exists() and child_pid.exists() and seat_pid.read_text().strip()
             and child_pid.read_text().strip())
    seat, child = seat_and_child(project, seat_pid, child_pid)
    # the process that holds the seat: its supervisor, or inside the world bwrap itself
    supervisor = parent_of(seat)
    while not any(name in Path(f"/proc/{supervisor}/cmdline").read_bytes() for name in (b"supervise", b"bwrap")):
        supervisor = parent_of(supervisor)
    assert supervisor != proc.pid
    proc.kill()  # failres dies at once: no handler, no journal entry
    os.kill(supervisor, signal.SIGKILL)  # and so does the supervisor: only the recorded seat is left
    proc.wait()
    status = json.loads(cli(project.top, "status", "--json").out)[0]
    assert status["state"] == "interrupted"
    wait_for(lambda: is_gone(seat) and is_gone(child), seconds=10)
    assert run(cli, project).code == 0
    assert [e["reason"] for e in project.events() if e["type"] == "interrupted"] == ["lost"]
