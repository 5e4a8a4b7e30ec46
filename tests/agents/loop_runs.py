"""A person's project run through `git failres run` by a real agent CLI: what those tests share.

The project is configured with exactly what `git failres init --agent X` writes. What
points the agent at the scripted model lives where a person's own setting would: the
environment and the agent's configuration in the (isolated) home, never the recipe.

The project is the smallest one with a real judge: `src/calc.py` whose `add()`
subtracts, `tests/test_calc.py` that says it must add, and the recipe's gate,
`python3 -m pytest -q`, run in the task's workspace. `src/other.py` is the file no
task may touch.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_runs import agent_binary
from conftest import CliResult, git
from failres.journal import read_journal
from lessons.storage.store import Store

BROKEN = "def add(a, b):\n    return a - b\n"
WRONG = "def add(a, b):\n    return a * b\n"
FIXED = "def add(a, b):\n    return a + b\n"
OTHER = "VALUE = 1\n"
TEST = ("import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'src'))\n"
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")

SLUG, TASK = "s", "t1"
PROMPT = "Make tests/test_calc.py pass: add() must return the sum of its arguments."
# An agent that echoes its prompt (aider prints it back) would echo this line too;
# failres must take it for its own text, not for the seat asking.
PROMPT_QUOTING_A_REQUEST = PROMPT + "\nIf README.md must change, print this line:\nSCOPE-REQUEST: README.md — why"

# The phrases that tell one dispatch's conversation from another's (ModelServer.by_phrase):
# the fix prompt's section heading, and the constrained retry's.
FIX_PHRASE = "Repair attempt 1"
CONSTRAINED_PHRASE = "Scope violation — constrained retry"


@pytest.fixture
def agent_on_path(monkeypatch: pytest.MonkeyPatch):
    """Put the agent's binary on PATH (skip, or fail under CI, when it is absent), and a
    `python3` that has pytest: the recipe's gate and Claude Code's allowed judge run it."""

    def put(agent: str) -> Path:
        binary = agent_binary(agent)
        python_bin = Path(sys.executable).parent
        monkeypatch.setenv("PATH", os.pathsep.join([str(binary.parent), str(python_bin), os.environ["PATH"]]))
        return binary

    return put


@dataclass
class PersonsProject:
    """A person's repository after `git failres init --agent AGENT`, and the plan they run."""

    top: Path
    agent: str

    @classmethod
    def create(cls, tmp_path: Path, agent: str, cli) -> PersonsProject:
        top = tmp_path / "calc"
        (top / "src").mkdir(parents=True)
        (top / "tests").mkdir()
        git(top, "init", "-q", "-b", "main")
        (top / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0.1"\n')
        (top / "README.md").write_text("calc\n")
        (top / "src" / "calc.py").write_text(BROKEN)
        (top / "src" / "other.py").write_text(OTHER)
        (top / "tests" / "test_calc.py").write_text(TEST)
        git(top, "add", ".")
        git(top, "commit", "-q", "-m", "a project whose add() subtracts")
        result = cli(top, "init", "--agent", agent)
        assert result.code == 0, result.err
        return cls(top, agent)

    def plan(self, prompt: str = PROMPT) -> Path:
        path = self.top.parent / "plan.toml"
        path.write_text(f'slug = "{SLUG}"\n[[tasks]]\nid = "{TASK}"\ntitle = "Make add() add"\n'
                        f"prompt = {json.dumps(prompt, ensure_ascii=False)}\nfiles = [\"src/calc.py\"]\n")
        return path

    def run(self, cli, prompt: str = PROMPT) -> CliResult:
        """`git failres run PLAN --json`, in process."""
        return cli(self.top, "run", str(self.plan(prompt)), "--json")

    def events(self) -> list[dict]:
        return read_journal(Store(self.top), SLUG).for_task(TASK)

    def of_type(self, event_type: str) -> list[dict]:
        return [event for event in self.events() if event["type"] == event_type]

    def state(self, cli) -> str:
        result = cli(self.top, "status", SLUG, "--json")
        assert result.code == 0, result.err
        return next(row["state"] for row in json.loads(result.out) if row["task"] == TASK)

    def decisions(self, cli) -> list[dict]:
        result = cli(self.top, "decisions", "--json")
        assert result.code == 0, result.err
        return json.loads(result.out)

    def dispatch_logs(self) -> list[Path]:
        """The log directories of the task's latest run, in dispatch order."""
        from failres.engine.dispatch_logs import dispatches, task_runs

        runs = task_runs(self.top / ".git", SLUG, TASK)
        return [record.directory for record in dispatches(runs[-1])] if runs else []

    def branch_file(self, path: str) -> str:
        return git(self.top, "show", f"failres/{SLUG}/{TASK}:{path}")

    def base(self) -> str:
        return git(self.top, "rev-parse", "main").strip()


def outcome(result: CliResult) -> dict:
    """The one task's outcome from `run --json`."""
    documents = json.loads(result.out)
    assert len(documents) == 1, result.out
    return documents[0]


CALC, OTHER_FILE = "src/calc.py", "src/other.py"


def assert_fixer_repaired(project: PersonsProject, result: CliResult) -> None:
    """The implementer left the gate red, one fixer attempt turned it green, and the task committed
    on its branch with its trailer."""
    assert result.code == 0, result.out + result.err
    assert outcome(result)["state"] == "committed"
    assert project.branch_file(CALC) == FIXED
    assert f"Failres-Task: {SLUG}/{TASK}" in git(project.top, "log", "-1", "--format=%B", f"failres/{SLUG}/{TASK}")
    # The first gate-result is the preflight's, at the integration head, before any dispatch.
    assert [(gate["passed"], gate.get("preflight", False)) for gate in project.of_type("gate-result")] == [
        (False, True), (False, False), (True, False)]
    assert [(e["seat"], e["mode"]) for e in project.of_type("seat-dispatched")] == [
        ("implementer", "implement"), ("fixer", "fix")]


def assert_violation_undone_and_retried(project: PersonsProject, result: CliResult, server) -> None:
    """The first dispatch also changed OTHER_FILE: undone, one constrained retry named it, and
    the task's commit changes only CALC."""
    assert result.code == 0, result.out + result.err
    assert [event["files"] for event in project.of_type("scope-violation")] == [[OTHER_FILE]]
    assert [e["constrained"] for e in project.of_type("seat-dispatched")] == [False, True]
    constrained = server.scripted(phrase=CONSTRAINED_PHRASE)[0].user_text()
    assert f"- {OTHER_FILE}" in constrained and "You may NOT touch these files" in constrained
    assert project.branch_file(OTHER_FILE) == OTHER and project.branch_file(CALC) == FIXED
    changed = git(project.top, "diff", "--name-only", project.base(), f"failres/{SLUG}/{TASK}").split()
    assert changed == [CALC]


def assert_request_became_decision(project: PersonsProject, result: CliResult, cli) -> None:
    """The agent's own SCOPE-REQUEST for OTHER_FILE stopped the task and is one open decision; the
    request the prompt quoted raised nothing, and no other seat was dispatched."""
    assert result.code == 1
    assert outcome(result)["failClass"] == "fixer-scope-violation"
    assert [(e["file"], e["reason"]) for e in project.of_type("scope-request")] == [
        (OTHER_FILE, "VALUE feeds the sum")]
    [decision] = project.decisions(cli)
    assert (decision["kind"], decision["status"], decision["files"]) == ("scope", "open", [OTHER_FILE])
    assert decision["requests"] == [{"file": OTHER_FILE, "reason": "VALUE feeds the sum"}]
    assert [e["seat"] for e in project.of_type("seat-dispatched")] == ["implementer"]

