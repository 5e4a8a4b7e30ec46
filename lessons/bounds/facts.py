"""Project facts with a timeline: what is true of this repository, and since when.

A fact is addressed by `(category, key)` — `("judge", "command")`, `("owner",
"src/dates.py")` — and has versions. Each version is its own add-only record in the
`facts` collection; a version is *current* while `valid_until` is unset. Changing a
fact writes the new version and an amendment closing the old one (`valid_until`,
`superseded_by`) in one commit, so the timeline replays every value in order and two
replicas that changed the same fact merge without conflict (both versions stay; the
newer is current, see `current_facts`).

Setting a value the fact already has is a confirmation, not a new version:

- equal ignoring case and spacing: the current version's `confirmation_count` goes up
  (an amendment; no new version, nothing to replay);
- word-similar at or above `similarity_threshold` (Jaccard over the sets of words, so
  word order and repetition do not matter — "pytest -q tests" and "pytest tests -q"
  are the same fact): a new version with the new wording that carries the count on,
  because what a person typed last is the phrasing they want to see;
- otherwise a contradiction of the current value, recorded in the new version with
  its severity (see `contradiction_severity`).

Values are redacted before they are compared or written, so a secret is neither
stored nor able to make two values differ.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from lessons.frozen import record
from lessons.bounds.archive import commit_planned, iter_archived
from lessons.bounds.capacity import Consolidation, reclaim_full_stores
from lessons.errors import InvalidInput
from lessons.bounds.policy import (
    Policy,
    age_days,
    decayed_confidence,
    format_ts,
    is_consolidation_candidate,
    reaches_archive,
)
from lessons.storage.records import (
    Put,
    amendment_put,
    change_of,
    content_id,
    make_amendment,
    read_collection,
    read_record,
    record_put,
)
from lessons.redaction.redact import redact
from lessons.storage.store import Change, Store

COLLECTION = "facts"
DEFAULT_CONFIDENCE = 1.0  # a person (or tool) stating a fact outright
DEFAULT_SOURCE = "manual"
FACTS_HEADING = "Project facts — advisory, not instructions"
MAX_VALUE_CHARS = 4000
PROMPT_VALUE_CHARS = 300  # one fact must not eat a prompt's budget

_CATEGORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_WORD = re.compile(r"\w+")


# ---- pure: comparing values ----

def same_value(a: str, b: str) -> bool:
    """Equal ignoring case and runs of whitespace."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def word_similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two values' word sets, case-insensitive (1.0 for two empty values)."""
    words_a = set(_WORD.findall(a.casefold()))
    words_b = set(_WORD.findall(b.casefold()))
    if not words_a and not words_b:
        return 1.0
    return len(words_a & words_b) / len(words_a | words_b)


def contradiction_severity(confidence: float, confirmations: int, policy: Policy) -> str:
    """high: the existing fact is near certain (>= 0.9) and confirmed at least twice;
    medium: at or above `contradiction_threshold`; low: otherwise."""
    if confidence >= 0.9 and confirmations >= 2:
        return "high"
    if confidence >= policy.contradiction_threshold:
        return "medium"
    return "low"


@record
class Contradiction:
    """A new value that disagrees with the current one, and how much that should worry anyone."""

    severity: str
    previous_id: str
    previous_value: str
    previous_confidence: float
    previous_confirmations: int
    similarity: float

    def document(self) -> dict[str, object]:
        return {"severity": self.severity, "previous_id": self.previous_id, "previous_value": self.previous_value,
                "previous_confidence": self.previous_confidence,
                "previous_confirmations": self.previous_confirmations, "similarity": round(self.similarity, 4)}


def _number(value: object, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def detect_contradiction(existing: Mapping[str, object] | None, value: str, policy: Policy) -> Contradiction | None:
    """The contradiction `value` makes with the existing version, or None when it agrees."""
    if existing is None:
        return None
    before = str(existing.get("value", ""))
    similarity = word_similarity(before, value)
    if same_value(before, value) or similarity >= policy.similarity_threshold:
        return None
    # Severity is judged on the confidence the fact was given, not its decayed value: a
    # contradiction of something a person asserted firmly deserves their attention.
    confidence = _number(existing.get("confidence"), 0.0)
    confirmations = _count(existing.get("confirmation_count"))
    return Contradiction(contradiction_severity(confidence, confirmations, policy), str(existing.get("id", "")),
                         before, confidence, confirmations, similarity)


# ---- pure: what a `set` writes ----

@record
class FactWrite:
    """What setting a fact does: its action, the records to write, the version now current."""

    action: str  # created | confirmed | refined | updated
    puts: tuple[Put, ...]
    fact: Mapping[str, object]
    contradiction: Contradiction | None = None


def check_address(category: str, key: str) -> None:
    if not _CATEGORY.fullmatch(category):
        msg = f"fact category {category!r} must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        raise InvalidInput(msg)
    if not key.strip() or len(key) > 200 or any(ord(c) < 0x20 for c in key):
        msg = f"fact key {key[:40]!r} must be 1-200 printable characters on one line"
        raise InvalidInput(msg)


def plan_fact_set(current: Sequence[Mapping[str, object]], *, category: str, key: str, value: str,
                  confidence: float, source: str, policy: Policy, ts: str, version_id: str) -> FactWrite:
    """The records one `facts set` writes, given the fact's current version(s) (newest first).

    More than one current version only happens after two replicas changed the same fact
    independently; a new value closes all of them, so the timeline converges.
    """
    newest = current[0] if current else None
    if newest is not None and same_value(str(newest.get("value", "")), value):
        count = _count(newest.get("confirmation_count")) + 1
        sets = {"confirmation_count": count, "last_confirmed": ts,
                "confidence": max(_number(newest.get("confidence"), 0.0), confidence)}
        amend = make_amendment(str(newest["id"]), sets, ts=ts, action="confirm", source=source)
        return FactWrite("confirmed", (amendment_put(COLLECTION, str(newest["id"]), amend),), {**newest, **sets})
    contradiction = detect_contradiction(newest, value, policy)
    carried = _count(newest.get("confirmation_count")) + 1 if newest is not None and contradiction is None else 1
    version = {
        "id": version_id, "ts": ts, "category": category, "key": key, "value": value,
        "confidence": confidence, "source": source, "confirmation_count": carried,
        "valid_from": ts, "valid_until": None, "last_confirmed": ts,
        "supersedes": str(newest["id"]) if newest is not None else None,
        "contradiction": contradiction.document() if contradiction else None,
    }
    puts = [record_put(COLLECTION, version)]
    for old in current:
        closing = make_amendment(str(old["id"]), {"valid_until": ts, "superseded_by": version_id}, ts=ts,
                                 action="supersede")
        puts.append(amendment_put(COLLECTION, str(old["id"]), closing))
    action = "created" if newest is None else ("updated" if contradiction else "refined")
    return FactWrite(action, tuple(puts), version, contradiction)


# ---- reading ----

def _version_order(fact: Mapping[str, object]) -> tuple[str, str]:
    return (str(fact.get("valid_from") or fact.get("ts") or ""), str(fact.get("id", "")))


def read_facts(store: Store, commit=None) -> list[dict]:
    """Every live fact version (all categories), oldest first."""
    return sorted(read_collection(store, COLLECTION, commit=commit).records, key=_version_order)


def current_versions(facts: Iterable[Mapping[str, object]], category: str, key: str) -> list[dict]:
    """The current version(s) of one fact, newest first."""
    found = [dict(f) for f in facts if f.get("category") == category and f.get("key") == key
             and f.get("valid_until") is None]
    return sorted(found, key=_version_order, reverse=True)


def current_facts(facts: Iterable[Mapping[str, object]]) -> dict[tuple[str, str], dict]:
    """(category, key) -> the newest current version."""
    out: dict[tuple[str, str], dict] = {}
    for fact in sorted(facts, key=_version_order):
        if fact.get("valid_until") is None:
            out[(str(fact.get("category")), str(fact.get("key")))] = dict(fact)
    return out


@record
class FactView:
    """A current fact as listings and prompts show it, its confidence decayed to `now`."""

    fact: Mapping[str, object]
    effective_confidence: float
    age_days: int
    candidate: bool

    def document(self) -> dict[str, object]:
        f = self.fact
        return {"id": f.get("id"), "category": f.get("category"), "key": f.get("key"), "value": f.get("value"),
                "confidence": f.get("confidence"), "effective_confidence": round(self.effective_confidence, 4),
                "confirmation_count": f.get("confirmation_count"), "source": f.get("source"),
                "valid_from": f.get("valid_from"), "last_confirmed": f.get("last_confirmed"),
                "age_days": self.age_days, "candidate": self.candidate}


def view_of(fact: Mapping[str, object], policy: Policy, now: datetime) -> FactView:
    days = age_days(fact.get("last_confirmed") or fact.get("valid_from") or fact.get("ts"), now)
    confidence = _number(fact.get("confidence"), 0.0)
    return FactView(fact, decayed_confidence(confidence, days, policy.decay_rate), days,
                    is_consolidation_candidate(confidence, days, policy))


def list_facts(store: Store, policy: Policy, *, category: str | None = None, now: datetime | None = None,
               limit: int | None = None) -> list[FactView]:
    """Current facts sorted by category, key then id, cut to `list_limit` (or `limit`)."""
    now = now or datetime.now(UTC)
    rows = [view_of(f, policy, now) for (cat, _), f in current_facts(read_facts(store)).items()
            if category is None or cat == category]
    rows.sort(key=lambda v: (str(v.fact.get("category")), str(v.fact.get("key")), str(v.fact.get("id"))))
    return rows[: policy.list_limit if limit is None else limit]


def fact_timeline(store: Store, category: str, key: str, policy: Policy, limit: int | None = None) -> list[dict]:
    """Every version of one fact, oldest first, limited to the newest `timeline_limit` (or `limit`).

    Versions the capacity manager archived are included (marked `archived: true`) when
    `archive_reach` lets timelines reach the archive, so eviction never shortens history.
    """
    versions = [{**f, "archived": False} for f in read_facts(store)
                if f.get("category") == category and f.get("key") == key]
    if reaches_archive(policy, "timeline"):
        versions += [{**f, "archived": True} for f in iter_archived(store, COLLECTION)
                     if f.get("category") == category and f.get("key") == key]
    versions.sort(key=_version_order)
    return versions[-(policy.timeline_limit if limit is None else limit):] if versions else []


def facts_block(store: Store, policy: Policy, now: datetime | None = None) -> str:
    """The prompt block of project facts; "" when there is nothing worth saying.

    Consolidation candidates (stale and low-confidence) stay out. The facts with the
    highest decayed confidence make the budget (`facts_per_prompt`; ties by category,
    key, id); they are then listed by category and key so the block reads as a table.
    """
    if policy.facts_per_prompt <= 0:
        return ""
    now = now or datetime.now(UTC)
    views = [view_of(f, policy, now) for f in current_facts(read_facts(store)).values()]
    views = [v for v in views if not v.candidate]
    views.sort(key=lambda v: (-round(v.effective_confidence, 9), str(v.fact.get("category")),
                              str(v.fact.get("key")), str(v.fact.get("id"))))
    chosen = sorted(views[: policy.facts_per_prompt],
                    key=lambda v: (str(v.fact.get("category")), str(v.fact.get("key")), str(v.fact.get("id"))))
    if not chosen:
        return ""
    lines = []
    for view in chosen:
        value = " ".join(str(view.fact.get("value", "")).split())
        if len(value) > PROMPT_VALUE_CHARS:
            value = value[: PROMPT_VALUE_CHARS - 3] + "..."
        lines.append(f"- {view.fact.get('category')}/{view.fact.get('key')}: {value}")
    return f"## {FACTS_HEADING}\n\n" + "\n".join(lines) + "\n"


# ---- writing ----

@record
class FactSetResult:
    """What `set_fact` did: the write, its commit, and any reclaim it triggered."""

    write: FactWrite
    commit: str | None
    reclaim: Consolidation | None


def set_fact(store: Store, category: str, key: str, value: str, *, policy: Policy,
             confidence: float = DEFAULT_CONFIDENCE, source: str = DEFAULT_SOURCE,
             now: datetime | None = None) -> FactSetResult:
    """Set (or confirm) one fact in one commit, then reclaim the facts store if it is full."""
    check_address(category, key)
    if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not 0.0 <= confidence <= 1.0:
        msg = f"confidence must be between 0 and 1, got {confidence}"
        raise InvalidInput(msg)
    clean_key, clean_value, clean_source = redact(key), redact(value).strip(), redact(source).strip()
    if not clean_value or len(clean_value) > MAX_VALUE_CHARS:
        msg = f"a fact value must be 1 to {MAX_VALUE_CHARS} characters"
        raise InvalidInput(msg)
    now = now or datetime.now(UTC)
    ts = format_ts(now)

    def plan_at(tip) -> tuple[FactWrite, Change]:
        # Decided on the tip the commit lands on, so two people setting the same fact at
        # once both land: the later one supersedes the earlier.
        current = current_versions(read_facts(store, tip), category, clean_key)
        # Derived from what is stated and when, so the same story writes the same
        # version in any repository; a counter only if that very version exists.
        version_id = content_id("fact", {"category": category, "key": clean_key, "value": clean_value,
                                         "confidence": float(confidence), "source": clean_source, "ts": ts},
                                taken=lambda rec_id: read_record(store, COLLECTION, rec_id, commit=tip) is not None)
        write = plan_fact_set(current, category=category, key=clean_key, value=clean_value,
                              confidence=float(confidence), source=clean_source or DEFAULT_SOURCE,
                              policy=policy, ts=ts, version_id=version_id)
        return write, change_of(write.puts)

    write, oid = commit_planned(store, plan_at, lambda w: f"failres: fact set {category}/{clean_key}{_suffix(w)}")
    reclaim = reclaim_full_stores(store, policy, names=(COLLECTION,), now=now)
    return FactSetResult(write, oid, reclaim)


def _suffix(write: FactWrite) -> str:
    if write.action == "confirmed":
        return " (confirmed)"
    return f" (contradiction: {write.contradiction.severity})" if write.contradiction else ""
