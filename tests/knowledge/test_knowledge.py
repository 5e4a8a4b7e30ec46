"""What the store knows reaches the prompt (rules, facts) and the ledger hears the outcome."""

from __future__ import annotations

from pathlib import Path

from lessons.rulebook.ledger import read_validations
from lessons.storage.store import Change, Store
from project import FIXED, Project

USER_RULES = b'[[rules]]\ntext = "Run the judge command before you finish."\n'


def test_rules_and_facts_ride_in_the_prompt_and_the_ledger_records_the_outcome(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    Store(project.top).commit(Change({"rules/behavior.user.toml": USER_RULES}), "failres: a person's rule")
    assert cli(project.top, "facts", "set", "judge", "command", "python tests/check.py").code == 0
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 0
    prompt = project.prompt(1)
    assert "Run the judge command before you finish." in prompt
    assert "- judge/command: python tests/check.py" in prompt
    validations, problems = read_validations(Store(project.top))
    assert problems == []
    assert [(v["outcome"], v["slug"], v["task"]) for v in validations] == [("committed", "rr", "t1")]


def test_without_rules_nothing_is_measured_and_no_block_is_shown(tmp_path: Path, cli) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"write": {"src/calc.py": FIXED}}])
    assert cli(project.top, "run", str(project.plan()), "--quiet").code == 0
    prompt = project.prompt(1)
    assert "Project facts" not in prompt
    assert read_validations(Store(project.top))[0] == []
