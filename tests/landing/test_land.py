"""`git failres land`: a real merge commit into the integration branch, then the stamp.

Also home of `LoopProject`, the small real project with a scripted agent that the
lessons-loop tests (labelling, hooks, decisions, retrieval) drive through real runs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from conftest import git, run_failres
from failres.journal import read_journal
from failres.initialise import init_repository
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store

BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
CHECK = "import sys\nsys.path.insert(0, 'src')\nfrom calc import add\nsys.exit(0 if add(2, 3) == 5 else 1)\n"

# A scripted agent: each call plays the next turn of its JSON script (the last one repeats).
AGENT = """\
import json, pathlib, sys
script = pathlib.Path(sys.argv[1])
turns = json.loads(script.read_text())
counter = script.with_suffix(".count")
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
sys.stdin.read()
turn = turns[min(n, len(turns) - 1)]
for path, text in turn.get("write", {}).items():
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text(text)
if "print" in turn:
    print(turn["print"])
sys.exit(turn.get("exit", 0))
"""

FIX = {"write": {"src/calc.py": FIXED}}
IDLE = {}  # changes nothing: the gate stays red
ASK_FOR_DOCS = {"print": "SCOPE-REQUEST: docs/notes.md — the notes must describe the fix"}
FIX_WITH_DOCS = {"write": {"src/calc.py": FIXED, "docs/notes.md": "add adds\n"}}


class LoopProject:
    """A repository on main with a failing check, a scripted implementer and a one-task plan (rr/t1)."""

    slug = "rr"

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.top = tmp_path / "project"
        (self.top / "src").mkdir(parents=True)
        (self.top / "docs").mkdir()
        git(self.top, "init", "-q", "-b", "main")
        (self.top / "src" / "calc.py").write_text(BROKEN)
        (self.top / "check.py").write_text(CHECK)
        (self.top / "docs" / "notes.md").write_text("notes\n")
        (self.top / ".gitignore").write_text(".failres.toml\n")
        git(self.top, "add", ".")
        git(self.top, "commit", "-q", "-m", "a project with a failing check")
        self.agent = tmp_path / "agent.py"
        self.agent.write_text(AGENT)

    def configure(self, turns: list[dict], *, binding: str = "impl", protected: tuple[str, ...] = (),
                  resolver: str | None = None, resolver_may_answer: bool = False, extra: str = "") -> None:
        """Write .failres.toml: the check as gate, `binding` as implementer playing `turns`, no fixer."""
        state = self.tmp / "agent-state"  # where the agent counts its turns: writable in the seat world
        state.mkdir(exist_ok=True)
        script = state / f"{binding}.json"
        script.write_text(json.dumps(turns))
        script.with_suffix(".count").unlink(missing_ok=True)
        lines = [
            "[gates.check]",
            f"command = {json.dumps([sys.executable, 'check.py'])}",
            'cwd = "worktree"',
            f"[bindings.{binding}]",
            f"command = {json.dumps([sys.executable, str(self.agent), str(script)])}",
            f"write = {json.dumps([str(state)])}",
            "[seats]",
            f'implementer = "{binding}"',
        ]
        if resolver:
            lines.append(f'resolver = "{resolver}"')
        if resolver_may_answer:
            lines.append("resolver_may_answer = true")
        lines += ["[repair]", "max_attempts = 0", "[scope]", f"protected = {json.dumps(list(protected))}"]
        from project import Project

        if Project.sandbox_mode:  # set by the `seat_world` fixture
            lines += ["[sandbox]", f'mode = "{Project.sandbox_mode}"']
        (self.top / ".failres.toml").write_text("\n".join(lines) + "\n" + extra)
        init_repository(self.top, hooks=False)  # the store, as `git failres init` creates it

    def plan(self, files: tuple[str, ...] = ("src/calc.py",)) -> Path:
        path = self.tmp / "plan.toml"
        path.write_text(f'slug = "{self.slug}"\n[[tasks]]\nid = "t1"\ntitle = "Fix add"\n'
                        f'prompt = "Make check.py pass."\nfiles = {json.dumps(list(files))}\n')
        return path

    def run(self, cli, expect: int) -> None:
        result = cli(self.top, "run", str(self.plan()), "--quiet")
        assert result.code == expect, (result.out, result.err)

    def store(self) -> Store:
        return Store(self.top)

    def events(self, task: str = "t1") -> list[dict]:
        return read_journal(self.store(), self.slug).for_task(task)

    def types(self, task: str = "t1") -> list[str]:
        return [e["type"] for e in self.events(task)]

    def lessons(self) -> list[dict]:
        return read_lessons(self.store())[0]

    def store_tip(self) -> str:
        return git(self.top, "rev-parse", "refs/failres/store").strip()

    def move_main(self, name: str = "unrelated.txt") -> str:
        """A person's commit on main that has nothing to do with the task."""
        (self.top / name).write_text("elsewhere\n")
        git(self.top, "add", name)
        git(self.top, "commit", "-q", "-m", f"add {name}")
        return git(self.top, "rev-parse", "HEAD").strip()

    def decision_id(self) -> str:
        decisions = [r for r in _records(self.store(), "decisions")]
        assert len(decisions) == 1, decisions
        return decisions[0]["id"]


def _records(store: Store, collection: str) -> list[dict]:
    from lessons.storage.records import read_collection

    return read_collection(store, collection).records


@pytest.fixture
def project(tmp_path: Path) -> LoopProject:
    return LoopProject(tmp_path)


def quarantine_then_commit(project: LoopProject, cli, first: dict = IDLE, second: dict = FIX) -> None:
    """One quarantined run (the gate stays red), then a run that goes green."""
    project.configure([first, second])
    project.run(cli, expect=1)
    project.run(cli, expect=0)


# ── the merge ───────────────────────────────────────────────────────────────


def test_land_makes_a_merge_commit_in_the_checked_out_integration_worktree(project: LoopProject, cli) -> None:
    project.configure([FIX])
    project.run(cli, expect=0)
    before = git(project.top, "rev-parse", "main").strip()
    result = cli(project.top, "land", "rr", "t1", "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["how"] == "worktree"
    merge = git(project.top, "rev-parse", "main").strip()
    assert doc["commit"] == merge and doc["intHead"] == before
    parents = git(project.top, "rev-list", "--parents", "-n", "1", merge).split()[1:]
    assert parents == [before, git(project.top, "rev-parse", "failres/rr/t1").strip()]
    assert "Failres-Task: rr/t1" in git(project.top, "log", "-1", "--format=%B", merge)
    assert (project.top / "src" / "calc.py").read_text() == FIXED  # the person's checkout got the merge
    assert git(project.top, "status", "--porcelain", "--untracked-files=no") == ""
    landed = [e for e in project.events() if e["type"] == "landed"]
    assert [(e["commit"], e["intHead"]) for e in landed] == [(merge, before)]


def test_land_refuses_a_dirty_integration_checkout_and_changes_nothing(project: LoopProject, cli) -> None:
    project.configure([FIX])
    project.run(cli, expect=0)
    (project.top / "docs" / "notes.md").write_text("work in progress\n")
    before, tip = git(project.top, "rev-parse", "main").strip(), project.store_tip()
    result = cli(project.top, "land", "rr", "t1")
    assert result.code == 2
    assert result.err.startswith("error: ") and "uncommitted changes" in result.err and "hint: " in result.err
    assert git(project.top, "rev-parse", "main").strip() == before
    assert (project.top / "docs" / "notes.md").read_text() == "work in progress\n"
    assert project.store_tip() == tip


def test_land_merges_in_memory_when_the_integration_branch_is_checked_out_nowhere(project: LoopProject,
                                                                                  cli) -> None:
    project.configure([FIX])
    project.run(cli, expect=0)
    git(project.top, "checkout", "-q", "-b", "elsewhere")
    before = git(project.top, "rev-parse", "main").strip()
    result = cli(project.top, "land", "rr", "t1", "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["how"] == "in-memory"
    merge = git(project.top, "rev-parse", "main").strip()
    assert doc["commit"] == merge
    assert git(project.top, "rev-list", "--parents", "-n", "1", merge).split()[1:2] == [before]
    assert git(project.top, "show", f"{merge}:src/calc.py") == FIXED
    assert (project.top / "src" / "calc.py").read_text() == BROKEN  # the checkout on `elsewhere` is untouched
    assert "land rr/t1" in git(project.top, "reflog", "-1", "--format=%gs", "main")


def test_land_in_memory_refuses_a_conflict_with_exit_2(project: LoopProject, cli) -> None:
    project.configure([FIX])
    project.run(cli, expect=0)
    (project.top / "src" / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    git(project.top, "commit", "-q", "-am", "a competing fix on main")
    git(project.top, "checkout", "-q", "-b", "elsewhere")
    before = git(project.top, "rev-parse", "main").strip()
    result = cli(project.top, "land", "rr", "t1")
    assert result.code == 2
    assert "conflicts" in result.err and "src/calc.py" in result.err
    assert git(project.top, "rev-parse", "main").strip() == before
    assert "landed" not in project.types()


def test_land_in_the_checkout_aborts_its_own_conflicted_merge(project: LoopProject, cli) -> None:
    project.configure([FIX])
    project.run(cli, expect=0)
    (project.top / "src" / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    git(project.top, "commit", "-q", "-am", "a competing fix on main")
    before = git(project.top, "rev-parse", "main").strip()
    result = cli(project.top, "land", "rr", "t1")
    assert result.code == 2
    assert "conflicts in" in result.err
    assert git(project.top, "rev-parse", "HEAD").strip() == before
    assert git(project.top, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(project.top, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False) == ""


@pytest.mark.parametrize("checked_out", [True, False], ids=["in-the-checkout", "in-memory"])
def test_land_works_on_a_machine_without_a_git_identity(project: LoopProject, cli, checked_out: bool) -> None:
    project.configure([FIX])
    project.run(cli, expect=0)
    if not checked_out:
        git(project.top, "checkout", "-q", "--detach")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    proc = run_failres(project.top, "land", "rr", "t1", env=env)
    assert proc.returncode == 0, proc.stderr
    assert git(project.top, "log", "-1", "--format=%an <%ae>", "main").strip() == "failres <failres@localhost>"


def test_landing_twice_is_not_an_error_and_writes_nothing(project: LoopProject, cli) -> None:
    quarantine_then_commit(project, cli)
    assert cli(project.top, "land", "rr", "t1").code == 0
    tip, main = project.store_tip(), git(project.top, "rev-parse", "main").strip()
    again = cli(project.top, "land", "rr", "t1", "--json")
    assert again.code == 0, again.err
    assert json.loads(again.out)["how"] == "already-landed"
    assert project.store_tip() == tip and git(project.top, "rev-parse", "main").strip() == main


def test_land_refuses_a_task_branch_with_nothing_new(project: LoopProject, cli) -> None:
    project.configure([IDLE])
    project.run(cli, expect=1)  # quarantined: the task branch has no commit of its own
    result = cli(project.top, "land", "rr", "t1")
    assert result.code == 2
    assert "nothing" in result.err and "git failres label" in result.err


def test_land_refuses_an_unknown_task(project: LoopProject, cli) -> None:
    project.configure([FIX])
    result = cli(project.top, "land", "rr", "t9")
    assert result.code == 2 and "no run of rr/t9" in result.err


def test_a_task_that_never_failed_gets_its_landed_event_and_no_stamps(project: LoopProject, cli) -> None:
    project.configure([FIX])
    project.run(cli, expect=0)
    result = cli(project.top, "land", "rr", "t1", "--json")
    stamp = json.loads(result.out)["stamp"]
    assert stamp["landedEvent"] is True and stamp["stamped"] == []
    assert project.types()[-1] == "landed"
    status = json.loads(cli(project.top, "status", "--json").out)
    assert [row["state"] for row in status] == ["landed"]


def test_land_with_the_hooks_installed_stamps_once_and_reports_it(project: LoopProject, cli) -> None:
    quarantine_then_commit(project, cli)
    assert cli(project.top, "hooks", "install").code == 0
    result = cli(project.top, "land", "rr", "t1", "--json")
    assert result.code == 0, result.err
    stamp = json.loads(result.out)["stamp"]
    assert stamp["stamped"] == [project.lessons()[0]["id"]] and stamp["resolvedBy"] == ["unknown"]
    assert project.types().count("landed") == 1
