"""Learning from failres's own outcomes, end to end: real runs of the engine with a scripted
agent, real decisions answered by a person, real landings, then `learn`, a person's
acceptance, the rule riding in the next prompt and the ledger's tally after that run.

Also: a hopeless task stopped by the stop-loss leaves one lesson per failure, not one
per refusal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import git
from failres.journal import read_journal
from failres.knowledge.outcome_evidence import outcome_with_journal, resolution_window
from lessons.learning.outcomes import ResolvedOutcome, area_of, outcome_rules
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store

FAKE_AGENT = Path(__file__).resolve().parents[1] / "fake_agent.py"
BROKEN = {"add": "def add(a, b):\n    return a - b\n", "sub": "def sub(a, b):\n    return a + b\n",
          "mul": "def mul(a, b):\n    return a + b\n"}
FIXED = {"add": "def add(a, b):\n    return a + b\n", "sub": "def sub(a, b):\n    return a - b\n",
         "mul": "def mul(a, b):\n    return a * b\n"}
CHECK = """\
import importlib, sys
sys.path.insert(0, "src/calc")
name = {"t1": "add", "t2": "sub", "t3": "mul", "t9": "add"}[sys.argv[1]]
want = {"add": 5, "sub": -1, "mul": 6}[name]
got = getattr(importlib.import_module(name), name)(2, 3)
print(f"{name}(2, 3) = {got}, want {want}")
sys.exit(0 if got == want else 1)
"""
WIDENING_RULE = ("2 tasks touching `src/calc/*` hit `fixer-scope-violation`; each was resolved by widening the "
                 "scope to `src/calc/util.py`.")


def ask_for_util(task: str) -> dict:
    return {"print": f"SCOPE-REQUEST: src/calc/util.py — {task} needs the shared helper"}


def fix(name: str) -> dict:
    return {"write": {f"src/calc/{name}.py": FIXED[name], "src/calc/util.py": f"HELP = {name!r}\n"}}


class Story:
    """A repository with three broken functions, one task each, and one scripted agent."""

    def __init__(self, tmp_path: Path, cli, turns: list[dict]) -> None:
        self.cli = cli
        self.top = tmp_path / "project"
        (self.top / "src" / "calc").mkdir(parents=True)
        for name, text in BROKEN.items():
            (self.top / "src" / "calc" / f"{name}.py").write_text(text)
        (self.top / "src" / "calc" / "util.py").write_text("HELP = None\n")
        (self.top / "check.py").write_text(CHECK)
        (self.top / ".gitignore").write_text(".failres.toml\n")
        git(self.top, "init", "-q", "-b", "main")
        git(self.top, "add", ".")
        git(self.top, "commit", "-q", "-m", "calc with three bugs")
        state = tmp_path / "agent-state"  # the fake agent counts its turns here: writable in the seat world
        state.mkdir()
        script = state / "agent.json"
        script.write_text(json.dumps(turns))
        (self.top / ".failres.toml").write_text("\n".join([
            "[gates.check]",
            f"command = {json.dumps([sys.executable, 'check.py', '{task}'])}",
            'cwd = "worktree"',
            "[bindings.agent]",
            f"command = {json.dumps([sys.executable, str(FAKE_AGENT), str(script)])}",
            f"write = {json.dumps([str(state)])}",
            "[seats]",
            'implementer = "agent"',
            "[repair]",
            "max_attempts = 0",
        ]) + "\n")
        assert cli(self.top, "init", "--no-hooks").code == 0  # the store, as a person creates it
        self.plan = tmp_path / "plan.toml"
        self.plan.write_text('slug = "rr"\n' + "".join(
            f'[[tasks]]\nid = "{task}"\ntitle = "Fix {name}"\nprompt = "Make check.py pass for {task}."\n'
            f'files = ["src/calc/{name}.py"]\n' for task, name in (("t1", "add"), ("t2", "sub"), ("t3", "mul"),
                                                                 ("t9", "add"))))

    def failres(self, *args: str, expect: int = 0) -> str:
        out = self.cli(self.top, *args)
        assert out.code == expect, (args, out.out, out.err)
        return out.out

    def json(self, *args: str, expect: int = 0):
        return json.loads(self.failres(*args, "--json", expect=expect))

    def run(self, task: str, expect: int) -> None:
        self.failres("run", str(self.plan), "--task", task, "--quiet", expect=expect)

    def widen_and_land(self, task: str) -> None:
        """The scope request quarantines; a person widens to util.py; the rerun is green and lands."""
        self.run(task, expect=1)
        (decision,) = self.json("decisions", "--open")
        self.failres("decide", decision["id"], "--scope-files", "src/calc/util.py")
        self.run(task, expect=0)
        self.failres("land", "rr", task)


def test_a_rule_learned_from_failres_outcomes_is_accepted_rides_in_the_next_prompt_and_is_tallied(
        tmp_path: Path, cli) -> None:
    story = Story(tmp_path, cli, [ask_for_util("t1"), fix("add"), ask_for_util("t2"), fix("sub"),
                                  {"write": {"src/calc/mul.py": FIXED["mul"]}}])
    story.widen_and_land("t1")
    story.widen_and_land("t2")
    lessons = story.json("lessons", "list")
    assert sorted(lesson["resolved_by"] == ["decision-answered", "scope-widened"] for lesson in lessons) == [True, True]

    (outcome,) = story.json("learn")
    proposal = outcome["proposal"]
    assert (proposal["mode"], proposal["status"]) == ("counts", "pending")
    (rule,) = proposal["rules"]
    assert rule["text"] == WIDENING_RULE
    assert sorted(rule["sources"]) == sorted(lesson["id"] for lesson in lessons)  # the evidence, by lesson id
    assert proposal["lesson_ids"] == sorted(rule["sources"])
    assert story.json("proposals", "accept", proposal["id"])["status"] == "accepted"

    prompt = story.failres("prompt", "rr", "t3", "--mode", "implement", "--plan", str(story.plan))
    assert f"- {WIDENING_RULE}" in prompt
    story.run("t3", expect=0)
    shown = (story.top / ".git" / "failres" / "logs" / "rr" / "t3")
    assert any(WIDENING_RULE in p.read_text() for p in shown.glob("*/*/prompt.md")), "the seat was given the rule"
    (learned,) = story.json("rules")["domains"][0]["learned"]
    assert (learned["id"], learned["in_prompts"]) == (rule["id"], True)
    tally = learned["tally"]
    assert (tally["observations"], tally["committed"], tally["quarantined"]) == (1, 1, 0)


def test_a_hopeless_task_leaves_one_lesson_per_failure_and_its_stops_as_events(tmp_path: Path, cli) -> None:
    story = Story(tmp_path, cli, [{"print": "looked around, changed nothing"}])
    for _ in range(5):
        story.run("t9", expect=1)
    events = read_journal(Store(story.top), "rr").for_task("t9")
    stops = [e for e in events if e["type"] == "stop-loss"]
    assert len(stops) == 3
    lessons = read_lessons(Store(story.top))[0]
    assert [lesson["failClass"] for lesson in lessons] == ["gate-not-green-after-fixer"] * 2
    stopped = [e for e in events if e["type"] == "quarantined" and e["failClass"] == "repeated-failure-stop"]
    assert len(stopped) == 3 and all(e["lesson"] is None for e in stopped)
    assert {row["task"]: row["state"] for row in story.json("status")}["t9"] == "stopped"


# ── the pure parts ───────────────────────────────────────────────────────────


def test_the_area_of_a_task_is_the_directory_its_files_share() -> None:
    assert area_of(["src/calc/add.py", "src/calc/*.py"]) == "src/calc/*"
    assert area_of(["src/calc.py", "src/util/dates.py"]) == "src/*"
    assert area_of(["src/**/x.py"]) == "src/*"
    assert area_of(["setup.py"]) == "*"


def test_a_gate_failure_resolved_by_a_new_binding_is_counted_per_gate() -> None:
    def outcome(n: int, kinds: tuple[str, ...], bindings=(("fixer", "codex"),)) -> ResolvedOutcome:
        return ResolvedOutcome(f"l{n}", f"rr/t{n}", "gate-not-green-after-fixer", kinds, area=f"pkg{n}/*",
                               gate="tests", bindings=bindings if "binding-changed" in kinds else ())

    rules = outcome_rules([outcome(1, ("binding-changed",)), outcome(2, ("binding-changed",)),
                           outcome(3, ("binding-changed", "integration-head-moved")),
                           outcome(4, ("integration-head-moved",))])
    assert [r.text for r in rules] == [
        "`gate-not-green-after-fixer` on gate `tests` was resolved by changing the fixer binding to `codex` "
        "3 times out of 4."]
    assert rules[0].basis == "outcomes/gate-not-green-after-fixer/gate/tests"


def test_one_task_quarantined_three_times_is_one_resolution_and_stops_never_count() -> None:
    same_task = [ResolvedOutcome(f"l{n}", "rr/t1", "seat-timeout", ("binding-changed",), area="lib/*")
                 for n in range(3)]
    stops = [ResolvedOutcome(f"s{n}", f"rr/s{n}", "repeated-failure-stop", ("binding-changed",), area="lib/*")
             for n in range(3)]
    assert outcome_rules([*same_task, *stops]) == ()


def test_the_resolution_window_is_the_one_labelling_reads() -> None:
    events = [
        {"type": "task-started", "definition": {"files": ["src/calc/add.py"], "gate": "check"}},
        {"type": "quarantined", "lesson": "a"},
        {"type": "decision-answered", "answer": {"scopeFiles": ["src/old.py"]}},
        {"type": "quarantined", "lesson": "b"},
        {"type": "decision-answered", "answer": {"scopeFiles": ["src/calc/util.py"]}},
        {"type": "binding-changed", "seat": "fixer", "from": "a", "to": "b"},
        {"type": "landed", "commit": "c"},
        {"type": "decision-answered", "answer": {"scopeFiles": ["later.py"]}},
    ]
    assert [e["type"] for e in resolution_window(events, "a")] == ["decision-answered", "binding-changed"]
    lesson = {"id": "a", "slug": "rr", "task": "t1", "failClass": "fixer-scope-violation", "package": "src",
              "resolved_by": ["decision-answered", "scope-widened", "binding-changed"]}
    outcome = outcome_with_journal(lesson, events)
    assert (outcome.area, outcome.gate, outcome.widened, outcome.bindings) == (
        "src/calc/*", "check", ("src/calc/util.py",), (("fixer", "b"),))
