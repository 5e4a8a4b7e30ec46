"""What `run` tells a person and a script: a stop's reasons in full, and exit codes as documented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project import BROKEN, FIXED, Project

NOTHING = {"print": "looked around, changed nothing"}
ASKS = {"write": {"src/calc.py": FIXED, "docs/notes.md": "mine\n"},
        "print": "SCOPE-REQUEST: docs/notes.md — the notes describe add"}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def run(cli, project: Project, *args: str):
    return cli(project.top, "run", str(project.plan()), "--quiet", *args)


def test_a_stop_loss_stop_prints_its_whole_reason_and_what_would_change_the_outcome(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING])
    assert run(cli, project).code == 1
    assert run(cli, project).code == 1
    stopped = run(cli, project)
    assert stopped.code == 1
    signature = [e for e in project.events() if e["type"] == "stop-loss"][0]["signature"]
    lines = stopped.out.splitlines()
    assert lines[0] == ("rr/t1: stopped (repeated-failure-stop): stopped before dispatch: the last 2 runs failed the "
                        f"same way under the same conditions ({signature})")
    assert lines[1:] == [
        "  what would change the outcome:",
        "    - move the integration head",
        "    - change the task's files (its scope)",
        "    - change the binding",
        "    - change the gate (its command, env, setup or cwd) or [workspace] in .failres.toml",
        '    - set stop_loss.mode = "off"',
    ]
    assert "decision" not in stopped.out  # none is open: nothing to answer
    doc = json.loads(run(cli, project, "--json").out)
    assert doc[0]["advice"] == [line.removeprefix("    - ") for line in lines[2:]]


def test_a_stop_names_the_open_decision_that_would_change_its_outcome(project: Project, cli) -> None:
    project.configure(implementer=[ASKS])
    assert run(cli, project).code == 1
    assert run(cli, project).code == 1
    stopped = run(cli, project, "--json")
    decisions = json.loads(cli(project.top, "decisions", "--open", "--json").out)
    assert len(decisions) == 2
    advice = json.loads(stopped.out)[0]["advice"]
    assert [a for a in advice if "decision" in a] == [
        f"answer the open decision {d['id'][:8]} (git failres decisions --open)" for d in decisions]


def test_a_run_that_leaves_a_task_pending_exits_1(project: Project, cli) -> None:
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    plan = project.agents.parent / "after.toml"
    plan.write_text('slug = "rr"\n'
                    '[[tasks]]\nid = "t1"\ntitle = "one"\nprompt = "p"\nfiles = ["src/calc.py"]\n'
                    '[[tasks]]\nid = "t2"\ntitle = "two"\nprompt = "p"\nfiles = ["src/calc.py"]\nafter = ["t1"]\n')
    result = cli(project.top, "run", str(plan), "--quiet", "--task", "t2")
    assert result.code == 1
    assert result.out.startswith("rr/t2: pending (waits for t1 to land")
    assert project.types("t2") == ["task-planned"]  # nothing dispatched


def test_status_lists_every_task_of_a_plan_that_ran_pending_ones_included(project: Project, cli) -> None:
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    plan = project.agents.parent / "three.toml"
    plan.write_text('slug = "rr"\n'
                    '[[tasks]]\nid = "t1"\ntitle = "one"\nprompt = "p"\nfiles = ["src/calc.py"]\n'
                    '[[tasks]]\nid = "t2"\ntitle = "two"\nprompt = "p"\nfiles = ["src/calc.py"]\nafter = ["t1"]\n'
                    '[[tasks]]\nid = "t3"\ntitle = "three"\nprompt = "p"\nfiles = ["src/other.py"]\n')
    assert cli(project.top, "run", str(plan), "--quiet", "--task", "t1").code == 0
    rows = json.loads(cli(project.top, "status", "--json").out)
    assert [(r["task"], r["state"], r["waitsFor"], r["runs"]) for r in rows] == [
        ("t1", "committed", [], 1), ("t2", "pending", ["t1"], 0), ("t3", "pending", [], 0)]
    shown = cli(project.top, "status").out.splitlines()
    assert [line.split()[1:3] for line in shown[1:4]] == [["t1", "committed"], ["t2", "pending"], ["t3", "pending"]]
    assert "waits for t1" in shown[2]
    # Running the plan again records nothing twice.
    cli(project.top, "run", str(plan), "--quiet", "--task", "t1")
    assert project.types("t2") == ["task-planned"]


def test_status_shows_the_pid_of_a_live_run(project: Project, cli) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    project.configure(implementer=[{"sleep": 120}])
    child = subprocess.Popen([sys.executable, "-m", "failres", "run", str(project.plan()), "--quiet"],
                             cwd=project.top, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        rows: list[dict] = []
        while time.monotonic() < deadline:
            rows = json.loads(cli(project.top, "status", "--json").out or "[]")
            if rows and rows[0]["state"] == "running" and "seat-dispatched" in project.types():
                break
            time.sleep(0.2)
        assert [(r["state"], r["pid"]) for r in rows] == [("running", child.pid)]
        shown = cli(project.top, "status").out.splitlines()
        assert shown[0].split()[:4] == ["slug", "task", "state", "pid"]
        assert shown[1].split()[:4] == ["rr", "t1", "running", str(child.pid)]
    finally:
        os.killpg(child.pid, signal.SIGINT)
        child.wait(timeout=300)
    assert json.loads(cli(project.top, "status", "--json").out)[0]["pid"] is None


@pytest.mark.parametrize("args", [("journal", "demo"), ("journal", "demo", "--json"), ("status",),
                                  ("prompt", "demo", "t4")], ids=["table", "json", "status", "text"])
def test_output_into_a_closed_pipe_is_quiet_and_exits_141(kept_demo: Path, args: tuple[str, ...]) -> None:
    """`git failres journal demo | head -1`, with the reader gone before the first write."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone: every write meets a closed pipe
    try:
        proc = subprocess.run([sys.executable, "-m", "failres", *args], cwd=kept_demo, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (141, "")


def test_a_crashed_fixer_is_named_once_and_as_the_one_who_failed(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING], fixer=[{"exit": 1}])
    result = run(cli, project)
    assert result.code == 1
    quarantined = [e for e in project.events() if e["type"] == "quarantined"][-1]
    assert (quarantined["signature"], quarantined["seat"]) == ("seat-crashed|fixer exited with code 1", "fixer")
    assert result.out.splitlines()[0] == "rr/t1: quarantined (seat-crashed, by the fixer): fixer exited with code 1"


def test_a_red_gate_with_no_fixer_says_why_no_fixer_ran(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING])
    assert run(cli, project).code == 1
    message = [e for e in project.events() if e["type"] == "quarantined"][-1]["message"]
    assert message.startswith("gate check red after the implementer (no fixer seat is configured): exit 1")
    assert "0 fixer attempt" not in message


def test_a_scope_violation_by_the_implementer_is_recorded_as_the_implementers(project: Project, cli) -> None:
    wanders = {"write": {"src/calc.py": FIXED, "docs/notes.md": "mine\n"}}
    project.configure(implementer=[wanders, wanders], fixer=[NOTHING])
    result = run(cli, project)
    assert result.code == 1
    quarantined = [e for e in project.events() if e["type"] == "quarantined"][-1]
    assert (quarantined["failClass"], quarantined["seat"]) == ("fixer-scope-violation", "implementer")
    assert project.calls("fix") == 0
    assert result.out.startswith("rr/t1: quarantined (fixer-scope-violation, by the implementer): implementer changed")


def test_the_constrained_retry_is_told_the_whole_workspace_was_put_back_and_it_was(project: Project, cli) -> None:
    wanders = {"write": {"src/calc.py": FIXED, "docs/notes.md": "mine\n"}}
    looks = {"shell": ["cat src/calc.py docs/notes.md"]}
    project.configure(implementer=[wanders, looks], fixer=[NOTHING])
    run(cli, project)
    prompt = project.prompt(2)
    assert "the whole workspace was put back to where that attempt started" in " ".join(prompt.split())
    assert "those inside the scope too" in prompt
    seen = (project.dispatch_logs()[1] / "seat.log").read_text()
    assert seen == BROKEN + "notes\n"  # the in-scope edit is gone as the prompt says; the out-of-scope one too


def test_the_gate_after_a_fixer_is_the_second_gate_attempt(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING], fixer=[{"write": {"src/calc.py": FIXED}}])
    result = cli(project.top, "run", str(project.plan()))  # not quiet: the progress lines on stderr
    assert result.code == 0
    steps = [line.split("  ")[1:3] for line in result.err.splitlines() if line.startswith("[failres] rr/t1")]
    assert [step for step in steps if step[0] in ("seat", "gate")] == [
        ["seat", "implementer"], ["gate", "attempt 1"], ["seat", "fixer"], ["gate", "attempt 2"]]


def test_a_slug_with_a_capital_letter_is_refused_with_the_rule(project: Project, cli) -> None:
    project.configure(implementer=[NOTHING])
    plan = project.agents.parent / "capital.toml"
    plan.write_text('slug = "Fix1"\n[[tasks]]\nid = "t1"\ntitle = "x"\nprompt = "p"\nfiles = ["src/calc.py"]\n')
    result = cli(project.top, "run", str(plan))
    assert (result.code, result.out) == (2, "")
    assert result.err.splitlines()[0] == (f'error: {plan}: slug: "Fix1" is not a valid id: capital letters are not '
                                          'allowed (F); use lowercase a-z, 0-9, ".", "_" and "-", starting with a '
                                          'letter or digit, e.g. "fix1"')
    assert project.events() == [] and "failres/" not in git_branches(project)
    refused = cli(project.top, "prompt", "Fix1", "t1")
    assert refused.code == 2 and "capital letters are not allowed (F)" in refused.err


def git_branches(project: Project) -> str:
    from conftest import git

    return git(project.top, "branch", "--list")


def test_init_on_a_feature_branch_says_which_integration_branch_it_chose_and_how_to_change_it(
        plain_repo: Path, cli) -> None:
    from conftest import git

    git(plain_repo, "checkout", "-q", "-b", "feature-x")
    result = cli(plain_repo, "init", "--no-hooks")
    assert result.code == 0, result.err
    assert 'branch = "feature-x"' in (plain_repo / ".failres.toml").read_text()
    lines = result.out.splitlines()
    assert lines[1] == ('integration branch: feature-x (the branch checked out now); tasks start from it and land '
                        'into it; change it with [integration] branch = "NAME" in .failres.toml')
    assert lines[2] == 'note: main exists too; if tasks should land there, set [integration] branch = "main"'
    again = json.loads(cli(plain_repo, "init", "--no-hooks", "--json").out)
    assert again["integrationBranch"] == "feature-x"
