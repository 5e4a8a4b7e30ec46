"""The task loop end to end: real repositories, real gates, scripted agents as seats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from failres.decisions.records import read_decisions
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store
from project import BROKEN, FIXED, Project

FIX = {"write": {"src/calc.py": FIXED}, "print": "fixed add"}
NOTHING = {"print": "looked around, changed nothing"}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def run(cli, project: Project, *args: str):
    return cli(project.top, "run", str(project.plan()), "--quiet", *args)


def quarantine_event(project: Project) -> dict:
    return [e for e in project.events() if e["type"] == "quarantined"][-1]


def test_an_implementer_green_first_time_is_committed_with_the_trailer(project: Project, cli) -> None:
    project.configure(implementer=[FIX])
    result = run(cli, project)
    assert result.code == 0, result.err
    # The gate runs once at the integration head (the preflight), then judges the change.
    assert project.types() == ["task-started", "gate-result", "seat-dispatched", "seat-finished", "gate-result",
                               "task-committed"]
    assert project.events()[1]["preflight"] is True and project.events()[1]["verdict"] == "red"
    committed = project.events()[-1]["commit"]
    message = git(project.top, "log", "-1", "--format=%B", committed)
    assert "Failres-Task: rr/t1" in message
    assert project.branch_file("src/calc.py") == FIXED
    assert git(project.top, "rev-parse", f"{committed}^").strip() == project.events()[0]["intHead"]
    # The person's checkout is untouched and the task's workspace is gone.
    assert (project.top / "src" / "calc.py").read_text() == BROKEN
    assert git(project.top, "worktree", "list").count("\n") == 1
    assert not project.workspace().exists()


def test_a_second_run_skips_a_committed_task(project: Project, cli) -> None:
    project.configure(implementer=[FIX])
    assert run(cli, project).code == 0
    before = len(project.events())
    result = cli(project.top, "run", str(project.plan()), "--json")
    assert result.code == 0
    assert json.loads(result.out)[0]["skipped"] is True
    assert len(project.events()) == before and project.calls("impl") == 1


def test_a_red_gate_is_repaired_by_the_fixer(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING], fixer=[FIX])
    assert run(cli, project).code == 0
    gates = [e for e in project.events() if e["type"] == "gate-result"]
    assert [(g["passed"], g.get("preflight", False)) for g in gates] == [(False, True), (False, False), (True, False)]
    fixer = [e for e in project.events() if e["type"] == "seat-dispatched" and e["seat"] == "fixer"]
    assert [(f["mode"], f["attempt"], f["constrained"]) for f in fixer] == [("fix", 1, False)]
    prompt = project.prompt(2)
    assert "FAILED tests/check.py::test_add" in prompt  # the fixer sees the judge's output
    assert "How this task is judged" in prompt and "tests/check.py" in prompt


def test_an_exhausted_fixer_budget_quarantines_and_rolls_back(project: Project, cli) -> None:
    half = {"write": {"src/calc.py": "def add(a, b):\n    return a * b\n"}}
    project.configure(implementer=[half], fixer=[half], extra="[repair]\nmax_attempts = 2\n")
    result = run(cli, project)
    assert result.code == 1
    assert project.calls("fix") == 2
    q = quarantine_event(project)
    assert q["failClass"] == "gate-not-green-after-fixer"
    assert q["signature"].startswith("gate-not-green-after-fixer|gate check still red after 2 fixer attempts")
    # Rolled back: the task branch is back at its base, no worktree is left behind.
    assert git(project.top, "rev-parse", "failres/rr/t1").strip() == q["intHead"]
    lessons, _ = read_lessons(Store(project.top))
    assert [lesson["failClass"] for lesson in lessons] == ["gate-not-green-after-fixer"]
    assert lessons[0]["id"] == q["lesson"] and lessons[0]["package"] == "src"


def test_without_rollback_the_failed_worktree_is_left_for_a_person(project: Project, cli) -> None:
    half = {"write": {"src/calc.py": "def add(a, b):\n    return a * b\n"}}
    project.configure(implementer=[half], fixer=[half], extra="[repair]\nrollback = false\n")
    assert run(cli, project).code == 1
    worktree = project.workspace()
    assert (worktree / "src/calc.py").read_text() == "def add(a, b):\n    return a * b\n"


@pytest.mark.parametrize("config", ["", "[repair]\nmax_attempts = 0\n", "[repair]\nenabled = false\n"])
def test_no_fixer_or_no_budget_quarantines_at_once(project: Project, cli, config: str) -> None:
    fixer = [FIX] if config else None
    project.configure(implementer=[NOTHING], fixer=fixer, extra=config)
    assert run(cli, project).code == 1
    assert project.calls("fix") == 0
    assert quarantine_event(project)["failClass"] == "gate-not-green-after-fixer"


def test_a_scope_violation_is_undone_and_gets_one_constrained_retry(project: Project, cli) -> None:
    violate = {"write": {"src/calc.py": FIXED, "src/other.py": "VALUE = 2\n"}}
    project.configure(implementer=[violate, FIX])
    assert run(cli, project).code == 0
    assert project.types() == ["task-started", "gate-result", "seat-dispatched", "seat-finished", "scope-violation",
                               "seat-dispatched", "seat-finished", "gate-result", "task-committed"]
    violation = project.events()[4]
    assert violation["files"] == ["src/other.py"]
    retry = project.events()[5]
    assert retry["constrained"] is True and retry["attempt"] == 1
    prompt = project.prompt(2)
    assert "- src/other.py" in prompt and "You may NOT touch these files" in prompt and "SCOPE-REQUEST:" in prompt
    assert project.branch_file("src/other.py") == "VALUE = 1\n"


def test_a_second_violation_quarantines_and_raises_a_decision(project: Project, cli) -> None:
    violate = {"write": {"src/calc.py": FIXED, "src/other.py": "VALUE = 2\n"}}
    project.configure(implementer=[violate])
    assert run(cli, project).code == 1
    assert project.calls("impl") == 2
    q = quarantine_event(project)
    assert q["failClass"] == "fixer-scope-violation"
    decisions, _ = read_decisions(Store(project.top))
    assert len(decisions) == 1
    assert decisions[0]["files"] == ["src/other.py"] and decisions[0]["status"] == "open"
    assert project.types()[-1] == "decision-requested"


def test_a_scope_request_short_circuits_without_a_redispatch(project: Project, cli) -> None:
    ask = {"print": "SCOPE-REQUEST: src/other.py — the constant is wrong too"}
    project.configure(implementer=[ask, FIX])
    assert run(cli, project).code == 1
    assert project.calls("impl") == 1
    assert "scope-request" in project.types()
    q = quarantine_event(project)
    assert q["failClass"] == "fixer-scope-violation"
    assert "SCOPE-REQUEST: src/other.py — the constant is wrong too" in q["message"]
    decision = read_decisions(Store(project.top))[0][0]
    assert decision["requests"] == [{"file": "src/other.py", "reason": "the constant is wrong too"}]


@pytest.mark.parametrize(
    ("name", "turn"),
    [
        ("commits an out-of-scope file", {"write": {"docs/notes.md": "x\n"}, "git": [["add", "-A"], ["commit", "-qm", "x"]]}),
        ("deletes a file", {"delete": ["src/other.py"]}),
        ("adds an untracked directory", {"mkdir": ["build/deep"], "write": {"build/deep/out.txt": "x"}}),
        ("creates a symlink to outside the repo", {"symlink": {"src/passwd": "/etc/passwd"}}),
        ("switches branch", {"git": [["checkout", "-q", "-b", "elsewhere"]], "write": {"docs/notes.md": "y\n"}}),
    ],
)
def test_out_of_scope_changes_of_every_kind_are_caught_and_restored(project: Project, cli, name: str, turn: dict) -> None:
    turn = {**turn, "write": {**turn.get("write", {}), "src/calc.py": FIXED}}
    project.configure(implementer=[turn, FIX])
    result = run(cli, project)
    assert result.code == 0, (name, result.err)
    assert "scope-violation" in project.types(), name
    tree = git(project.top, "ls-tree", "-r", "--name-only", "failres/rr/t1").split()
    assert sorted(tree) == ["docs/notes.md", "src/calc.py", "src/other.py", "tests/check.py"], name
    assert project.branch_file("docs/notes.md") == "notes\n"


def test_an_engine_that_is_down_then_healthy_is_probed_and_retried(project: Project, cli, tmp_path: Path) -> None:
    flag = project.agents / "engine-up"  # the binding may write there, inside the seat world too
    health = ["sh", "-c", f"test -e {flag} || (touch {flag}; exit 1)"]
    down = {"stderr": "Error: connect ECONNREFUSED 127.0.0.1:443", "exit": 1}
    project.configure(implementer=[down, FIX], health=health)
    assert run(cli, project).code == 0
    probes = [e for e in project.events() if e["type"] == "repair"]
    assert [(p["kind"], p["outcome"]) for p in probes] == [("wrapper-probe", "down"), ("wrapper-probe", "healthy")]
    assert project.calls("impl") == 2


def test_an_engine_down_for_good_is_quarantined_after_exactly_the_configured_probes(project: Project, cli) -> None:
    down = {"stderr": "API error 529: overloaded", "exit": 1}
    project.configure(implementer=[down], health=["false"])
    assert run(cli, project).code == 1
    probes = [e for e in project.events() if e["type"] == "repair"]
    assert len(probes) == 2 and all(p["outcome"] == "down" for p in probes)
    assert quarantine_event(project)["failClass"] == "wrapper-engine-down"
    assert project.calls("impl") == 1


def test_a_missing_agent_executable_is_an_engine_down(project: Project, cli) -> None:
    project.configure(implementer=[FIX])
    config = (project.top / ".failres.toml").read_text()
    (project.top / ".failres.toml").write_text(config.replace('[bindings.impl]\ncommand = [', '[bindings.impl]\ncommand = ["/nonexistent/agent", '))
    assert run(cli, project).code == 1
    assert quarantine_event(project)["failClass"] == "wrapper-engine-down"


def test_a_seat_timeout_quarantines(project: Project, cli) -> None:
    project.configure(implementer=[{"sleep": 30}], timeout="1s")
    assert run(cli, project).code == 1
    assert quarantine_event(project)["failClass"] == "seat-timeout"


def test_fifty_megabytes_of_binary_seat_output_stay_bounded(project: Project, cli) -> None:
    project.configure(implementer=[{"spew": 50_000_000, "write": {"src/calc.py": FIXED}}])
    assert run(cli, project).code == 0
    finished = [e for e in project.events() if e["type"] == "seat-finished"][0]
    assert finished["outputBytes"] == 50_000_000
    store_size = sum(len(Store(project.top).blob(oid)) for _, oid in Store(project.top).walk())
    assert store_size < 100_000


def test_stop_loss_suppresses_the_third_identical_run_until_the_head_moves(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING])
    assert run(cli, project).code == 1
    assert run(cli, project).code == 1
    assert project.calls("impl") == 2
    third = run(cli, project)
    assert third.code == 1
    assert project.calls("impl") == 2  # nothing was dispatched
    stop = [e for e in project.events() if e["type"] == "stop-loss"]
    assert len(stop) == 1 and stop[0]["count"] == 2
    assert quarantine_event(project)["failClass"] == "repeated-failure-stop"
    assert "move the integration head" in quarantine_event(project)["message"]
    # A changed condition is a new experiment: move main, and the task runs again.
    (project.top / "README.md").write_text("moved\n")
    git(project.top, "add", "README.md")
    git(project.top, "commit", "-qm", "move the integration head")
    assert run(cli, project).code == 1
    assert project.calls("impl") == 3


def test_stop_loss_off_always_dispatches(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING], extra='[stop_loss]\nmode = "off"\n')
    for _ in range(3):
        run(cli, project)
    assert project.calls("impl") == 3 and "stop-loss" not in project.types()


def test_prior_failures_ride_in_the_next_prompt(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING, NOTHING])
    run(cli, project)
    result = cli(project.top, "prompt", "rr", "t1", "--mode", "implement")
    assert result.code == 0
    assert "Earlier attempts at this task failed" in result.out
    assert "gate-not-green-after-fixer: gate check red after the implementer" in result.out


def _objects(top: Path) -> set[str]:
    listed = git(top, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(listed.split())


def test_an_exact_patch_that_stays_red_is_rolled_back_and_never_repaired(project: Project, cli, tmp_path: Path) -> None:
    project.configure(implementer=[NOTHING], fixer=[FIX])
    before = _objects(project.top)
    patch = tmp_path / "approved.diff"
    patch.write_text(
        "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a * b\n"
    )
    result = cli(project.top, "run", str(project.plan()), "--task", "t1", "--patch", str(patch), "--quiet")
    assert result.code == 1
    assert project.calls("fix") == 0 and project.calls("impl") == 0
    q = quarantine_event(project)
    assert q["failClass"] == "exact-patch-red"
    assert git(project.top, "rev-parse", "failres/rr/t1").strip() == q["intHead"]
    # What entered the person's objects is what a ref names (the quarantine's snapshot), nothing loose.
    added = _objects(project.top) - before
    named = {line.split()[0] for line in git(project.top, "rev-list", "--objects", "--all").splitlines()}
    assert added and added <= named


def test_an_exact_patch_that_turns_the_gate_green_is_committed(project: Project, cli, tmp_path: Path) -> None:
    project.configure(implementer=[NOTHING])
    patch = tmp_path / "approved.diff"
    patch.write_text(
        "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    )
    result = cli(project.top, "run", str(project.plan()), "--task", "t1", "--patch", str(patch), "--quiet")
    assert result.code == 0, result.err
    assert project.branch_file("src/calc.py") == FIXED
    check = subprocess.run(["git", "fsck", "--strict"], cwd=project.top, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr  # the committed patch's objects were brought in


def test_an_exact_patch_whose_gate_cannot_run_adds_nothing_to_the_persons_objects(project: Project, cli,
                                                                                   tmp_path: Path) -> None:
    """The patch is checked before anything runs, into an object directory that goes with the check."""
    project.configure(implementer=[NOTHING])
    toml = project.top / ".failres.toml"
    toml.write_text(toml.read_text().replace(json.dumps([sys.executable, "tests/check.py"]),
                                             json.dumps(["no-such-gate-program-here"])))
    patch = tmp_path / "approved.diff"
    patch.write_text("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
                     "+    return a + 40\n")
    before = _objects(project.top)
    result = cli(project.top, "run", str(project.plan()), "--task", "t1", "--patch", str(patch), "--quiet")
    assert result.code == 1, result.err
    assert quarantine_event(project)["failClass"] == "gate-unavailable"
    blob = subprocess.run(["git", "hash-object", "--stdin"], cwd=project.top, capture_output=True, text=True,
                          input="def add(a, b):\n    return a + 40\n").stdout.strip()
    assert subprocess.run(["git", "cat-file", "-e", blob], cwd=project.top, capture_output=True).returncode != 0
    named = {line.split()[0] for line in git(project.top, "rev-list", "--objects", "--all").splitlines()}
    assert _objects(project.top) - before <= named


def test_a_patch_that_does_not_apply_is_a_clear_error(project: Project, cli, tmp_path: Path) -> None:
    project.configure(implementer=[NOTHING])
    patch = tmp_path / "stale.diff"
    patch.write_text("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def nope():\n-    pass\n+    return 1\n")
    result = cli(project.top, "run", str(project.plan()), "--task", "t1", "--patch", str(patch), "--quiet")
    assert result.code == 2
    assert result.err.startswith("error: ") and "hint:" in result.err


def test_a_patch_file_that_cannot_be_read_is_a_clear_error_and_nothing_is_written(project: Project, cli,
                                                                                 tmp_path: Path) -> None:
    project.configure(implementer=[NOTHING])
    store_before = git(project.top, "rev-parse", "refs/failres/store")
    result = cli(project.top, "run", str(project.plan()), "--task", "t1", "--patch", str(tmp_path / "gone.diff"),
                 "--quiet")
    assert result.code == 2
    assert result.err.startswith("error: patch ") and len(result.err.strip().splitlines()) <= 2
    assert git(project.top, "rev-parse", "refs/failres/store") == store_before
    assert "failres/rr/t1" not in git(project.top, "branch", "--list", "failres/*")


def test_status_reports_each_state(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING])
    run(cli, project)
    result = cli(project.top, "status", "--json")
    rows = json.loads(result.out)
    assert [(r["slug"], r["task"], r["state"], r["quarantines"]) for r in rows] == [("rr", "t1", "quarantined", 1)]


def test_no_implementer_configured_is_bad_input(project: Project, cli) -> None:
    (project.top / ".failres.toml").write_text('[gates.check]\ncommand = ["true"]\n')
    assert cli(project.top, "init", "--no-hooks").code == 0
    result = run(cli, project)
    assert result.code == 2 and "implementer" in result.err


def test_a_run_killed_mid_dispatch_resumes_from_a_fresh_worktree(project: Project, cli) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    project.configure(implementer=[{"sleep": 60}, FIX])
    proc = subprocess.Popen([sys.executable, "-m", "failres", "run", str(project.plan()), "--quiet"],
                            cwd=project.top, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while project.calls("impl") == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert project.calls("impl") == 1
    os.killpg(proc.pid, signal.SIGKILL)  # failres and its seat die mid-dispatch
    proc.wait(timeout=30)
    assert "seat-dispatched" in project.types() and project.types()[-1] == "seat-dispatched"
    assert run(cli, project).code == 0
    assert project.types().count("task-started") == 2
    assert project.branch_file("src/calc.py") == FIXED
    subprocess.run(["git", "fsck", "--strict"], cwd=project.top, check=True, capture_output=True)
