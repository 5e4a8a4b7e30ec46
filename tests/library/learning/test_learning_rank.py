"""Which candidate rule takes a slot first: the one people said in more sessions, on more
days, never the one a single paste or sitting produced many times.

Regression: pooled over real transcripts, `learn` filled every slot with "rules" from
pasted blocks (one session, many hits each) and left the one rule a person had said in
three sessions waiting.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from lessons.learning.candidates import evidence_rank, words_candidates
from lessons.learning.interventions import Intervention, Trigger
from lessons.learning.learner import learn_domain
from lessons.learning.provenance import Origin
from lessons.learning.store_io import BEHAVIOR, make_reflection, reflection_from_record, reflection_put
from lessons.rulebook.rules import Budget
from lessons.storage.records import change_of
from lessons.storage.store import Store

TRUE_RULE = "Always run ruff before you say you're done."


def _doc(session: str, index: int, words: str, said_at: str) -> dict:
    moment = Intervention(trigger=Trigger.FOLLOWUP, message_index=index, intervention=words,
                          context="The agent said: done", aftermath="", session_id=session,
                          followup="correction", said_at=said_at)
    return make_reflection(moment, Origin.CLEAN, directive=words, model_derived=False,
                           created_at=f"2026-03-01T10:{index:02d}:00Z")


def _pooled() -> list[dict]:
    # One session pasting a log whose lines each read as a correction, several times over...
    pasted = [_doc("paste-session", n, f"ERROR line {n % 4} is wrong, revert the build", "2026-02-27T09:00:00Z")
              for n in range(12)]
    # ...and the person's one rule, said in three sessions on two days, once with praise first.
    said = [_doc("monday-a", 1, "thanks, that works. " + TRUE_RULE, "2026-02-23T10:00:00Z"),
            _doc("monday-b", 1, TRUE_RULE, "2026-02-23T15:00:00Z"),
            _doc("tuesday", 3, "no. " + TRUE_RULE, "2026-02-24T11:00:00Z")]
    return pasted + said


def test_the_rule_said_in_three_sessions_on_two_days_takes_the_first_slot(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "repo"))
    store = Store(repo, "refs/failres/store")
    store.create()
    store.commit(change_of(reflection_put(d) for d in _pooled()), "pool reflections")
    outcome = learn_domain(store, BEHAVIOR, None, Budget(max_rules=1, max_chars=1600),
                           clock=lambda: "2026-03-02T00:00:00Z")
    assert outcome.proposal is not None
    assert [r.text for r in outcome.proposal.rules if r.active()] == [TRUE_RULE]
    assert outcome.waiting == 4  # the paste's four distinct lines wait; they are not lost


def test_one_session_counts_once_however_many_moments_it_produced() -> None:
    reflections = [reflection_from_record(d) for d in _pooled()]
    rules = words_candidates(reflections)
    assert rules[0].text == TRUE_RULE
    assert rules[0].based_on_count == 3  # three sessions, not three messages
    assert {r.based_on_count for r in rules[1:]} == {1}  # twelve pasted hits, one session
    true_members = [r for r in reflections if r.session_id != "paste-session"]
    assert evidence_rank(true_members) == (3, 2, 0)


def test_a_steer_is_quoted_without_the_thanks_around_it() -> None:
    moment = Intervention(trigger=Trigger.STEER, message_index=2, intervention="ok thanks. Never touch vendor/.",
                          context="", aftermath="", session_id="s1", followup="correction")
    doc = make_reflection(moment, Origin.CLEAN, directive=moment.intervention, model_derived=False,
                          created_at="2026-03-01T10:00:00Z")
    (rule,) = words_candidates([reflection_from_record(doc)])
    assert rule.text == 'A person steered a run and said: "Never touch vendor/."'


def _correction(session: str, words: str) -> dict:
    return _doc(session, 1, words, "2026-02-23T10:00:00Z")


def test_a_correction_that_only_reports_a_breakage_proposes_no_rule() -> None:
    """"the setting is not applied" corrects this agent, but as a rule it tells no later agent
    anything to do: it is kept as the person's correction and never proposed."""
    reports = ["setting GIT_USER_NAME is not applied to .git/config", "the build still fails with the same error",
               "but I did add the require there", "Ты зациклился", "sigue sin funcionar"]
    reflections = [reflection_from_record(_correction(f"s{n}", words)) for n, words in enumerate(reports)]
    reflections += [reflection_from_record(_correction(f"t{n}", reports[0])) for n in range(3)]  # said often
    assert words_candidates(reflections) == ()


def test_a_breakage_beside_a_directive_proposes_the_directive_alone() -> None:
    words = "It still does not work. Use pathlib instead of os.path."
    (rule,) = words_candidates([reflection_from_record(_correction("s1", words))])
    assert rule.text == "Use pathlib instead of os.path."
