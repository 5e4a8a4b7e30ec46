"""Prompt text and journal-derived task state: pure functions, no git."""

from __future__ import annotations

from failres.engine.prompts import ADVISORY_HEADING, JudgeInvocation, PastOutcome, PromptInput, render_prompt
from failres.engine.state import prior_failure_reasons, task_state


def prompt_input(**overrides) -> PromptInput:
    base = dict(slug="rr", task="t1", title="Fix add", prompt="Make it pass.", files=("src/calc.py",), mode="fix",
                judge=JudgeInvocation(("bash", "lib/gates.sh", "gate0", "fix", "/wt", "/repo", "rr"), "/repo"))
    base.update(overrides)
    return PromptInput(**base)


def test_the_fix_prompt_carries_the_exact_judge_invocation_and_its_directory() -> None:
    text = render_prompt(prompt_input())
    assert "cd /repo && bash lib/gates.sh gate0 fix /wt /repo rr" in text
    assert "is NOT the judge" in text


def test_the_judge_block_is_omitted_whole_when_a_value_is_missing() -> None:
    for judge in (JudgeInvocation(("bash", "lib/gates.sh", "gate0", "", "/wt"), "/repo"),
                  JudgeInvocation(("bash", "x"), ""), None):
        text = render_prompt(prompt_input(judge=judge))
        assert "How this task is judged" not in text
        assert "lib/gates.sh gate0  " not in text


def test_the_constrained_retry_names_each_rejected_file_and_the_scope_request_escape() -> None:
    text = render_prompt(prompt_input(rejected_files=("src/other.py", "docs/x.md")))
    assert "- src/other.py\n- docs/x.md" in text
    assert "You may NOT touch these files" in text and "SCOPE-REQUEST: <file> — <reason>" in text


def test_the_advisory_block_appears_only_with_outcomes_and_shows_each_with_its_count() -> None:
    assert ADVISORY_HEADING not in render_prompt(prompt_input())
    outcomes = tuple(PastOutcome(f"s/t{i}", f"sig{i}", ("scope-widened",), f"2026-11-0{i}T00:00:00Z", count=i)
                     for i in range(1, 6))
    text = render_prompt(prompt_input(past_outcomes=outcomes))
    assert ADVISORY_HEADING in text
    assert "- `sig1` — resolved by scope-widened (task s/t1, 2026-11-01)" in text
    assert "- `sig5` — resolved by scope-widened, 5 times (latest: task s/t5, 2026-11-05)" in text


def test_prompts_are_deterministic() -> None:
    assert render_prompt(prompt_input()) == render_prompt(prompt_input())


def events(*types_and_fields):
    return [{"type": t, **f} for t, f in types_and_fields]


def test_task_state_follows_the_milestones() -> None:
    assert task_state([]) == "pending"
    assert task_state(events(("task-started", {}))) == "running"
    assert task_state(events(("task-started", {}), ("quarantined", {"failClass": "unknown"}))) == "quarantined"
    assert task_state(events(("task-started", {}), ("quarantined", {"failClass": "repeated-failure-stop"}))) == "stopped"
    assert task_state(events(("task-started", {}), ("task-committed", {}))) == "committed"
    assert task_state(events(("task-committed", {}), ("landed", {}), ("task-started", {}))) == "landed"


def test_prior_failures_are_the_last_three_newest_first() -> None:
    found = events(*[("quarantined", {"failClass": "unknown", "message": f"failure {i}\ndetail"}) for i in range(5)])
    assert prior_failure_reasons(found) == ("unknown: failure 4", "unknown: failure 3", "unknown: failure 2")
