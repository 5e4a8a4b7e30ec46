"""The classifier measured on person turns labelled by hand (tests/data/interventions/labelled.jsonl).

Each line is one turn after the agent's: the words, the agent's last words, the label
(`correction` or `request`) and, for a correction, its directive; real turns say where
they were read (repository@commit:path#line), the others are marked `"source": "written"`
(written by hand with the rules in view). The `split` field holds part of the set out:
the rules were written against `dev` and are judged on `holdout` too; real sessions were
put in a split before the classifier was run on them.

The goal (precision 0.95, recall 0.70) holds where the rules were written, on real `dev`
turns and on all held-out turns; recall on real held-out turns misses it. The test holds
the measured figures as a floor, for real turns and for real Claude Code turns apart
(docs/transcript-format.md has the table and why).
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from lessons.learning.followups import Followup, classify_followup, directive, gives_rule
from lessons.learning.candidates import normalized

LABELLED = Path(__file__).resolve().parents[2] / "data" / "interventions" / "labelled.jsonl"
PRECISION_GOAL = 0.95
RECALL_GOAL = 0.70


def _turns() -> list[dict]:
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines() if line.strip()]


def _figures(turns: list[dict]) -> tuple[float, float, int, int, int]:
    found = [classify_followup(t["text"], t["agent_said"]) is Followup.CORRECTION for t in turns]
    wanted = [t["label"] == "correction" for t in turns]
    hits = sum(f and w for f, w in zip(found, wanted))
    false = sum(f and not w for f, w in zip(found, wanted))
    missed = sum(w and not f for f, w in zip(found, wanted))
    return hits / max(hits + false, 1), hits / max(hits + missed, 1), hits, false, missed


def _real(turn: dict) -> bool:
    return turn["source"] != "written"


def test_the_labelled_set_is_wide_enough_to_measure_by() -> None:
    """At least 150 turns from 20 sessions, the three CLIs and four languages, each labelled,
    each correction with its directive, each turn saying where it came from; of them at
    least 150 real turns from 30 sessions, Codex among them, 40 of Claude Code from 6 sessions,
    four languages besides English, and a third of the real sessions held out."""
    turns = _turns()
    assert len(turns) >= 150
    assert len({t["session"] for t in turns}) >= 20
    real = [t for t in turns if _real(t)]
    assert len(real) >= 150 and len({t["session"] for t in real}) >= 30
    assert {"codex", "claude-code", "aider"} <= {t["cli"] for t in real}
    claude = [t for t in real if t["cli"] == "claude-code"]
    assert len(claude) >= 40 and len({t["session"] for t in claude}) >= 6
    assert len({t["language"] for t in real} - {"en"}) >= 4
    assert all("@" in t["source"] for t in real)  # a repository at a commit, and where in it
    held = {t["session"] for t in real if t["split"] == "holdout"}
    assert 3 * len(held) >= len({t["session"] for t in real})
    assert set(Counter(t["cli"] for t in turns)) == {"claude-code", "codex", "aider"}
    assert len(set(t["language"] for t in turns)) >= 4
    assert {t["label"] for t in turns} == {"correction", "request"}
    assert all(t["directives"] for t in turns if t["label"] == "correction")
    assert all(t["source"] and t["context"] and t["split"] in ("dev", "holdout") for t in turns)
    assert len({t["id"] for t in turns}) == len(turns)


# (split, which turns) -> the precision and recall that must hold: what was measured, so
# that a change which loses ground fails here (docs/transcript-format.md), and never less
# than the goal where the rules were written (`dev`, all turns).
FLOORS = {
    ("dev", "all"): (max(PRECISION_GOAL, 0.98), max(RECALL_GOAL, 0.86)),
    ("holdout", "all"): (0.96, 0.72),
    ("dev", "real"): (0.97, 0.75),
    ("holdout", "real"): (1.00, 0.44),
    ("dev", "claude-code"): (1.00, 0.62),
    ("holdout", "claude-code"): (1.00, 0.50),
}


def _which(turn: dict, which: str) -> bool:
    return which == "all" or (_real(turn) and which in ("real", turn["cli"]))


@pytest.mark.parametrize(("split", "which"), list(FLOORS))
def test_corrections_are_told_from_requests_at_the_measured_precision_and_recall(split: str, which: str) -> None:
    turns = [t for t in _turns() if t["split"] == split and _which(t, which)]
    precision, recall, hits, false, missed = _figures(turns)
    print(f"\n{split}/{which}: {len(turns)} turns, precision {precision:.2f}, recall {recall:.2f} "
          f"({hits} corrections found, {false} false, {missed} missed)")
    least_precision, least_recall = FLOORS[(split, which)]
    assert precision >= least_precision
    assert recall >= least_recall


def _same(words: str) -> str:
    # The person's own words are read in NFKC form (full-width "，" is ","), the labels
    # keep what was typed.
    return normalized(unicodedata.normalize("NFKC", words))


def test_the_directive_of_a_found_correction_is_the_labelled_one() -> None:
    """Without a model a rule is the person's directive: praise, agreement, an opening "no,"
    and pastes trimmed. Most found corrections give exactly the sentence(s) labelled."""
    found = [t for t in _turns() if t["label"] == "correction"
             and classify_followup(t["text"], t["agent_said"]) is Followup.CORRECTION]
    exact = [t for t in found if _same(directive(t["text"])) in {_same(d) for d in t["directives"]}]
    print(f"\ndirectives: {len(exact)} of {len(found)} exactly the labelled sentence(s)")
    assert len(exact) >= 0.8 * len(found)


# Of the real turns read as corrections that give a rule (`gives_rule`: not a report alone),
# how many are corrections: measured, as a floor (docs/transcript-format.md).
RULE_FLOORS = {"dev": 1.00, "holdout": 1.00}


@pytest.mark.parametrize("split", list(RULE_FLOORS))
def test_what_would_be_proposed_from_real_turns_is_mostly_a_correction(split: str) -> None:
    """A rule is proposed only from a correction that holds a directive: a report that the
    work is broken corrects the agent but gives no later agent a rule. Counted on real turns,
    the precision that matters to a person reading proposals."""
    real = [t for t in _turns() if t["split"] == split and _real(t)]
    found = [t for t in real if classify_followup(t["text"], t["agent_said"]) is Followup.CORRECTION]
    ruled = [t for t in found if gives_rule(t["text"])]
    true = sum(t["label"] == "correction" for t in ruled)
    print(f"\n{split}/real rules: {len(ruled)} of {len(found)} found corrections give a rule, {true} of them true;"
          f" {len(found) - len(ruled)} are reports alone")
    assert ruled and true / len(ruled) >= RULE_FLOORS[split]


@pytest.mark.parametrize(("words", "wanted"), [
    ("thanks, that works. Always run ruff before you say you're done.", "Always run ruff before you say you're done."),
    ("perfecto, eso es. Siempre corre los tests antes de decir que terminaste.",
     "Siempre corre los tests antes de decir que terminaste."),
    ("No, the tests should be in tests/unit/, not next to the module.",
     "the tests should be in tests/unit/, not next to the module."),
])
def test_a_directive_keeps_the_instruction_and_drops_the_praise(words: str, wanted: str) -> None:
    assert directive(words) == wanted


@pytest.mark.parametrize("words", [
    "Here is what the reviewer wrote:\n> Don't use mutable default arguments.\n> This is wrong.\nCan you address these?",
    "The server log says:\n```\nERROR wrong password for user backup\n```",
    "Next: build the settings page with three tabs. Do NOT add a dependency and do not change the router.",
])
def test_a_do_not_inside_a_paste_a_quote_or_a_new_tasks_prompt_is_no_correction(words: str) -> None:
    assert classify_followup(words, "Done.") is Followup.REQUEST


def test_a_person_sentence_that_opens_with_a_log_word_is_still_theirs() -> None:
    """Only a log's own shape ("ERROR ...", "fatal: ...") marks a pasted line, not the word."""
    assert classify_followup("error messages should be in Spanish, not English", "Done.") is Followup.CORRECTION
    assert classify_followup("fatal: could not connect\nERROR wrong password", "Done.") is Followup.REQUEST
