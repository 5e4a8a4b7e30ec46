"""Housekeeping: gc of what landed tasks no longer need, run --dry-run, config show."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import git, run_failres
from failres.landing.gc import GcFacts, Snapshot, TaskBranch, Workspace, plan_gc
from project import FIXED, Project

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
NOTHING = {"print": "nothing"}


def refs(top: Path) -> str:
    return git(top, "for-each-ref", "--format=%(refname) %(objectname)")


# ---- gc: the decisions ----

def facts(**changes) -> GcFacts:
    base = dict(
        integration="main",
        landed_at={("s", "landed"): NOW - timedelta(days=40), ("s", "fresh"): NOW - timedelta(days=2)},
        branches=[TaskBranch("s", "landed", "refs/heads/failres/s/landed", merged=True),
                  TaskBranch("s", "fresh", "refs/heads/failres/s/fresh", merged=False),
                  TaskBranch("s", "open", "refs/heads/failres/s/open", merged=True)],
        snapshots=[Snapshot("s", "landed", "refs/failres/snapshots/s/landed/aa"),
                   Snapshot("s", "fresh", "refs/failres/snapshots/s/fresh/bb"),
                   Snapshot("s", "open", "refs/failres/snapshots/s/open/cc")],
    )
    return GcFacts(**{**base, **changes})


def test_gc_removes_merged_branches_and_old_snapshots_of_landed_tasks_only() -> None:
    plan = plan_gc(facts(), NOW, retention_days=30)
    assert [(i.kind, i.name) for i in plan.remove] == [
        ("branch", "refs/heads/failres/s/landed"), ("snapshot", "refs/failres/snapshots/s/landed/aa")]
    kept = {i.name: i.reason for i in plan.keep}
    assert "git branch -D failres/s/fresh" in kept["refs/heads/failres/s/fresh"]  # squash-landed: not merged here
    assert "kept 30 day(s) after the landing" in kept["refs/failres/snapshots/s/fresh/bb"]
    assert not any("open" in i.name for i in (*plan.remove, *plan.keep))  # a task that has not landed is not gc's


def test_gc_keeps_a_workspace_with_changes_and_its_branch() -> None:
    dirty = Workspace(Path("/w/landed"), "s", "landed", clean=False, state_dir=Path("/g/failres/workspaces/s/landed"))
    plan = plan_gc(facts(workspaces=[dirty], snapshots=[]), NOW, retention_days=30)
    assert plan.remove == ()
    assert {i.kind: i.reason for i in plan.keep}["workspace"].endswith("has changes; rm -rf /w/landed")
    assert {i.name: i.reason for i in plan.keep}["refs/heads/failres/s/landed"] == "its workspace is kept"


def test_a_retention_of_zero_days_drops_snapshots_at_once() -> None:
    plan = plan_gc(facts(branches=[]), NOW, retention_days=0)
    assert [i.name for i in plan.remove] == ["refs/failres/snapshots/s/landed/aa", "refs/failres/snapshots/s/fresh/bb"]


# ---- gc: a real repository ----

@pytest.fixture
def landed(tmp_path: Path) -> Project:
    """t1 quarantined once (a snapshot), then repaired, committed and landed, its workspace kept."""
    project = Project.create(tmp_path)
    keep = "[worktrees]\nkeep = true\n"
    project.configure(implementer=[NOTHING], fixer=[NOTHING], extra=keep)
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 1
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}], extra=keep)
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 0
    landing = run_failres(project.top, "land", "rr", "t1")
    assert landing.returncode == 0, landing.stderr
    return project


def workspace_of(top: Path) -> Path | None:
    """Where t1's workspace is, while failres has one for it."""
    record = top / ".git" / "failres" / "workspaces" / "rr" / "t1" / "path"
    return Path(record.read_text().strip()) if record.exists() else None


def test_gc_dry_run_lists_what_would_go_and_changes_nothing(landed: Project) -> None:
    before = (refs(landed.top), workspace_of(landed.top))
    assert before[1] is not None and before[1].is_dir()
    proc = run_failres(landed.top, "gc", "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["dryRun"] is True and doc["schemaVersion"] == 1
    assert doc["removed"] == {"branches": 1, "workspaces": 1, "snapshots": 0, "staleRecords": 0}
    assert [i["kind"] for i in doc["kept"]] == ["snapshot"]
    assert (refs(landed.top), workspace_of(landed.top)) == before and before[1].is_dir()


def test_gc_removes_the_landed_tasks_branch_and_workspace_and_keeps_recent_snapshots(landed: Project) -> None:
    workspace = workspace_of(landed.top)
    assert workspace is not None and workspace.is_dir()
    proc = run_failres(landed.top, "gc")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "removed 1 merged task branch, 1 workspace"
    assert "refs/heads/failres/rr/t1" not in refs(landed.top)
    assert not workspace.exists() and workspace_of(landed.top) is None
    assert "refs/failres/snapshots/rr/t1/" in refs(landed.top)
    # A second gc finds nothing more to do.
    assert run_failres(landed.top, "gc").stdout.splitlines()[-1] == "nothing to remove"


def test_gc_drops_snapshots_past_the_policys_retention(landed: Project) -> None:
    env = {**os.environ, "FAILRES_POLICY_SNAPSHOT_RETENTION_DAYS": "0"}
    proc = run_failres(landed.top, "gc", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "refs/failres/snapshots/" not in refs(landed.top)
    assert "1 snapshot ref" in proc.stdout.splitlines()[-1]
    # The store and main are untouched.
    assert "refs/failres/store" in refs(landed.top) and "refs/heads/main" in refs(landed.top)


# ---- run --dry-run ----

def snapshot_of_everything(top: Path) -> tuple[str, str, list[str]]:
    failres_dir = top / ".git" / "failres"
    files = sorted(str(p.relative_to(top)) for p in failres_dir.rglob("*")) if failres_dir.exists() else []
    return refs(top), git(top, "status", "--porcelain", "--ignored"), files


def test_a_dry_run_of_a_good_plan_says_what_would_run_and_writes_nothing(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING], fixer=[NOTHING])
    plan = project.plan()
    before = snapshot_of_everything(project.top)
    proc = run_failres(project.top, "run", str(plan), "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] is True and doc["problems"] == []
    assert [(t["task"], t["action"], t["gate"], t["matchedFiles"]) for t in doc["tasks"]] == [("t1", "run", "check", 1)]
    assert snapshot_of_everything(project.top) == before
    assert project.calls("impl") == 0


def test_a_dry_run_names_every_problem_and_exits_2(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING], extra='[scope]\nprotected = ["src/calc.py"]\n')
    text = (project.top / ".failres.toml").read_text().replace('command = ["', 'command = ["no-such-agent-xyz", "', 1)
    (project.top / ".failres.toml").write_text(text)
    plan = project.plan(files=["src/calc.py", "src/new_module.py"])
    proc = run_failres(project.top, "run", str(plan), "--dry-run")
    assert proc.returncode == 2
    lines = proc.stdout.splitlines()
    assert ('error: gate check: its program "no-such-agent-xyz" cannot be found: name it in the command as a '
            'program on PATH, or a path from the repository top (e.g. "no-such-agent-xyz", '
            '".venv/bin/no-such-agent-xyz")') in lines
    assert ('error: task t1: its scope entry "src/calc.py" is protected (scope.protected): no seat may touch it'
            in lines)
    assert 'warning: task t1: "src/new_module.py" matches no file at main (fine if the task creates it)' in lines
    assert "warning: seats.fixer: no fixer seat: a red gate quarantines at once" in lines
    assert lines[-1] == "the plan cannot run as it is"


def test_a_dry_run_predicts_the_stop_loss_the_run_then_applies(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING, NOTHING], fixer=[NOTHING, NOTHING])
    plan = project.plan()
    for _ in range(2):
        assert run_failres(project.top, "run", str(plan), "--quiet").returncode == 1
    predicted = json.loads(run_failres(project.top, "run", str(plan), "--dry-run", "--json").stdout)
    assert predicted["tasks"][0]["action"] == "stop"
    outcome = json.loads(run_failres(project.top, "run", str(plan), "--json").stdout)
    assert outcome[0]["state"] == "stopped"


def test_a_dry_run_skips_a_committed_task(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    plan = project.plan()
    assert run_failres(project.top, "run", str(plan), "--quiet").returncode == 0
    doc = json.loads(run_failres(project.top, "run", str(plan), "--dry-run", "--json").stdout)
    assert (doc["tasks"][0]["action"], doc["tasks"][0]["reason"]) == ("skip", "already committed")


def test_a_dry_run_of_an_unknown_task_is_exit_2(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING])
    proc = run_failres(project.top, "run", str(project.plan()), "--task", "t7", "--dry-run")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")
    assert 'has no task "t7"' in proc.stderr.splitlines()[0]


# ---- config show ----

def test_config_show_names_where_every_value_came_from(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING], extra='[stop_loss]\nthreshold = 3\n')
    env = {**os.environ, "FAILRES_POLICY_MAX_LESSONS": "100"}
    proc = run_failres(project.top, "config", "show", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    rows = {row["key"]: row for row in json.loads(proc.stdout)["settings"]}
    assert rows["stop_loss.threshold"] == {"key": "stop_loss.threshold", "value": 3, "source": "file",
                                           "from": str(project.top / ".failres.toml")}
    assert rows["stop_loss.mode"] == {"key": "stop_loss.mode", "value": "on", "source": "default", "from": ""}
    assert rows["gates.check.timeout"]["value"] == "60s"  # as the file spells it
    assert rows["probe.backoff"]["value"] == "10ms"
    assert rows["output.head_bytes"]["source"] == "default"
    assert rows["policy.max_lessons"] == {"key": "policy.max_lessons", "value": 100, "source": "env",
                                          "from": "FAILRES_POLICY_MAX_LESSONS"}
    assert rows["policy.snapshot_retention_days"]["value"] == 30


def test_config_show_names_the_environment_that_required_the_seat_world(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING], extra='[sandbox]\nmode = "off"\n')
    env = {**os.environ, "FAILRES_SANDBOX_MODE": "required"}
    proc = run_failres(project.top, "config", "show", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    rows = {row["key"]: row for row in json.loads(proc.stdout)["settings"]}
    assert rows["sandbox.mode"] == {"key": "sandbox.mode", "value": "required", "source": "env",
                                    "from": "FAILRES_SANDBOX_MODE"}


def test_config_show_redacts_a_secret_in_a_binding_env(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[NOTHING])
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with (project.top / ".failres.toml").open("a") as config:
        config.write(f'[bindings.other]\ncommand = ["x"]\nenv = {{ GITHUB_TOKEN = "{token}" }}\n')
    proc = run_failres(project.top, "config", "show")
    assert proc.returncode == 0, proc.stderr
    assert token not in proc.stdout
    assert "bindings.other.env" in proc.stdout and "REDACTED" in proc.stdout


def test_config_show_without_a_file_shows_the_defaults(repo: Path) -> None:
    proc = run_failres(repo, "config", "show")
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0] == f"no {repo / '.failres.toml'}: every value is the default " \
                                          "(git failres init writes one)"
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines()[2:]}
    assert rows["integration.branch"] == ["default", '"main"']
    assert rows["gates"] == ["default", "{}"]


def test_gc_keeps_a_landed_tasks_workspace_a_person_changed(landed: Project) -> None:
    workspace = workspace_of(landed.top)
    assert workspace is not None
    (workspace / "src" / "calc.py").write_text("# my experiment\n")
    proc = run_failres(landed.top, "gc")
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "src" / "calc.py").read_text() == "# my experiment\n"
    assert f"kept workspace {workspace}" in proc.stdout
    assert "refs/heads/failres/rr/t1" in refs(landed.top)  # its branch stays with it
