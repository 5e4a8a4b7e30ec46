"""A workspace a stopped or killed run leaves behind is inert: the person's git there runs nothing of the seat's.

Incident: a quarantined workspace kept a gate-written `core.fsmonitor`, and the person's
`git status` in it ran the seat's code. A quarantine rebuilds the `.git` it leaves; these
are the other ways a workspace outlives its run: Ctrl-C while the seat runs (with
`[worktrees] keep`, so it stays), and a runner killed outright, whose workspace is found
by the next `git failres status` or the next `run` of its plan. The seat poisons its `.git`
every way git would obey (fsmonitor, hooksPath, a hook, an alias, a clean filter, an include,
also through `.git/config` by absolute path), then waits to be stopped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git, run_failres
from project import Project

pytestmark = pytest.mark.usefixtures("seat_world")
SEAT_CHANGE = "def add(a, b):\n    return a + b  # the seat's edit\n"


def poisoning(agents: Path) -> str:
    """Python that makes the workspace's `.git` run a marker-writing script at the person's next git command."""
    script = agents / "ran.sh"
    return (f"import os, pathlib\n"
            f"script = pathlib.Path({str(script)!r})\n"
            f"script.write_text('#!/bin/sh\\necho \"$0 $*\" >> {agents / 'marker'}\\ncat\\n')\n"
            f"script.chmod(0o755)\n"
            f"with open('.git/config', 'a') as config:\n"
            f"    config.write('[core]\\n\\tfsmonitor = %s\\n\\thooksPath = %s\\n[alias]\\n\\tst = !%s\\n'\n"
            f"                 '[filter \"x\"]\\n\\tclean = %s\\n\\tsmudge = %s\\n' % ((script, script.parent) + (script,) * 3))\n"
            # The same again by absolute path, as a seat that does not trust its cwd would.
            f"with open(os.path.join(os.getcwd(), '.git', 'config'), 'a') as config:\n"
            f"    config.write('[include]\\n\\tpath = %s\\n[core]\\n\\tpager = %s\\n' % ({str(agents / 'more')!r}, script))\n"
            f"pathlib.Path({str(agents / 'more')!r}).write_text('[diff]\\n\\texternal = %s\\n' % script)\n"
            f"os.makedirs('.git/info', exist_ok=True)\n"
            f"pathlib.Path('.git/info/attributes').write_text('* filter=x\\n')\n"
            f"os.makedirs('.git/hooks', exist_ok=True)\n"
            f"for hook in ('post-checkout', 'post-index-change', 'pre-commit', 'reference-transaction'):\n"
            f"    pathlib.Path('.git/hooks', hook).write_text(script.read_text())\n"
            f"    os.chmod('.git/hooks/' + hook, 0o755)\n"
            f"for hook in ('post-checkout', 'post-index-change'):\n"
            f"    pathlib.Path({str(agents)!r}, hook).write_text(script.read_text())\n"
            f"    os.chmod(os.path.join({str(agents)!r}, hook), 0o755)\n"
            f"pathlib.Path({str(agents / 'poisoned')!r}).write_text(str(os.getpid()))\n")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project.create(tmp_path)
    attack = poisoning(project.agents)
    project.configure(implementer=[{"write": {"src/calc.py": SEAT_CHANGE, "poison.py": attack},
                                    "shell": ["python3 poison.py && rm poison.py"], "sleep": 300},
                                   {"write": {"docs/notes.md": "notes\n"}}],
                      extra="[worktrees]\nkeep = true\n[repair]\nrollback = false\n")
    return project


def two_task_plan(project: Project) -> Path:
    plan = project.agents.parent / "plan.toml"
    plan.write_text(f'slug = "{project.slug}"\n'
                    '[[tasks]]\nid = "t1"\ntitle = "Fix add"\nprompt = "Make tests/check.py pass."\n'
                    'files = ["src/calc.py"]\n'
                    '[[tasks]]\nid = "t2"\ntitle = "Docs"\nprompt = "Write docs."\nfiles = ["docs/*.md"]\n')
    return plan


def start_run(project: Project, plan: Path, *args: str) -> subprocess.Popen:
    """`git failres run PLAN` as its own process; returns once the seat has poisoned its `.git`."""
    run = subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan), "--quiet", *args], cwd=project.top,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 240
    while not (project.agents / "poisoned").exists():
        if run.poll() is not None or time.monotonic() > deadline:
            out, err = run.communicate(timeout=60) if run.poll() is not None else (b"", b"")
            run.kill()
            pytest.fail(f"the seat never poisoned its workspace: {out.decode()} {err.decode()}")
        time.sleep(0.05)
    return run


def assert_inert_with_the_seats_change(project: Project, task: str = "t1") -> None:
    """The person's own git in the left workspace runs nothing of the seat's; the seat's edit is there."""
    left = project.workspace(task)
    assert (left / "src" / "calc.py").read_text() == SEAT_CHANGE
    (project.agents / "marker").unlink(missing_ok=True)  # what the seat's own git commands wrote
    person = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    status = subprocess.run(["git", "status", "--porcelain"], cwd=left, capture_output=True, text=True, env=person)
    assert status.returncode == 0, status.stderr
    assert " M src/calc.py" in status.stdout.splitlines()
    for command in (["diff"], ["diff", "HEAD"], ["log", "-1", "-p"], ["st"], ["add", "-A"],
                    ["checkout", "-q", "-b", "the-persons-look"]):
        subprocess.run(["git", "-c", "core.pager=cat", *command], cwd=left, capture_output=True, env=person)
    assert not (project.agents / "marker").exists(), (project.agents / "marker").read_text()
    config = (left / ".git" / "config").read_text()
    for word in ("fsmonitor", "hooksPath", "alias", "filter", "include", "pager", "external"):
        assert word not in config, config
    assert not any((left / ".git" / "hooks").glob("*"))
    assert not (left / ".git" / "info" / "attributes").exists()
    assert git(project.top, "rev-parse", "main") == git(project.top, "rev-parse", "main^{commit}")


def test_ctrl_c_while_the_seat_runs_leaves_its_workspace_inert(project: Project) -> None:
    run = start_run(project, project.plan())
    os.kill(run.pid, signal.SIGINT)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 128 + signal.SIGINT, out.decode() + err.decode()
    assert "interrupted" in project.types()
    assert_inert_with_the_seats_change(project)


def test_a_killed_runners_workspace_is_made_inert_by_the_next_status(project: Project) -> None:
    run = start_run(project, project.plan())
    os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=120)
    # Killed outright, failres rebuilt nothing: the seat's `.git` is as the seat left it.
    assert "fsmonitor" in (project.workspace() / ".git" / "config").read_text()
    status = run_failres(project.top, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert_inert_with_the_seats_change(project)
    again = run_failres(project.top, "status")  # a workspace left once is not rebuilt again
    assert again.returncode == 0, again.stderr
    assert (project.workspace() / ".git" / "refs" / "heads" / "the-persons-look").exists()


def test_a_killed_runners_workspace_is_made_inert_by_gc(project: Project) -> None:
    run = start_run(project, project.plan())
    os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=120)
    collected = run_failres(project.top, "gc")
    assert collected.returncode == 0, collected.stderr
    assert_inert_with_the_seats_change(project)


def test_a_killed_runners_workspace_is_made_inert_by_the_next_run_of_its_plan(project: Project) -> None:
    plan = two_task_plan(project)
    run = start_run(project, plan, "--task", "t1")
    os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=120)
    later = run_failres(project.top, "run", str(plan), "--task", "t2", "--quiet", timeout=300)
    assert later.returncode in (0, 1), later.stderr
    assert_inert_with_the_seats_change(project, "t1")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_sighup_while_the_seat_runs_stop_it_as_ctrl_c_does(project: Project, signum: int) -> None:
    """The exit code names the signal (143, 129) and the task reads `interrupted`, as README says."""
    run = start_run(project, project.plan())
    os.kill(run.pid, signum)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 128 + signum, out.decode() + err.decode()
    assert project.types()[-1] == "interrupted"
    assert_inert_with_the_seats_change(project)
