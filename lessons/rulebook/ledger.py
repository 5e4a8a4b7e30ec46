"""The validation ledger: measured outcomes under a rule set, written down and folded.

Every time work runs with a rules block in its prompt, what came of it (a task
committed or quarantined, a probe that improved or regressed) is one record,
keyed by a hash of the exact block the prompt carried -- a tally that mixed
generations of a rule set would measure nothing. Folded per rule, the records
say how often each rule rode along and what happened while it did; a proposal
to retire a rule can cite those rows.

Records live under `validations/<block hash>/...`, one file each, add-only like
every record in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import pygit2

from lessons.frozen import record
from lessons.errors import InvalidInput
from lessons.storage.records import Put, change_of, content_id, now_ts, read_collection, record_path, record_put
from lessons.storage.store import Change, Store

COLLECTION = "validations"
# What a run or a probe can measure. `committed`/`quarantined` come from the task
# loop; the others from a counterfactual probe comparing a block with its absence.
OUTCOMES = ("committed", "quarantined", "improved", "regressed", "unchanged_pass", "unchanged_fail",
            "inconclusive")
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = 0xFFFFFFFFFFFFFFFF


def fnv1a64(text: str) -> str:
    """FNV-1a 64 of the UTF-8 bytes, as 16 hex digits.

    Written out rather than taken from `hash()`, which is salted per process: a
    ledger key that changed between runs would silently split every tally. A change
    to this function is a migration of the ledger, not a refactor.
    """
    value = _FNV_OFFSET
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * _FNV_PRIME) & _MASK
    return f"{value:016x}"


EMPTY_BLOCK_HASH = fnv1a64("")


def make_validation(block_hash: str, rule_ids: Sequence[str], outcome: str, *,
                    attributed_rule_id: str | None = None, ts: str | None = None,
                    taken: Callable[[str], bool] | None = None, **context: object) -> dict:
    """One measured outcome. `context` says what was measured (slug, task, domain, model...).

    Its id is derived from what it measured; `taken` (ids in use) lets two equal
    measurements of one instant both be kept, told apart by a counter.
    """
    if outcome not in OUTCOMES:
        msg = f"unknown validation outcome {outcome!r} (one of {', '.join(OUTCOMES)})"
        raise InvalidInput(msg)
    if len(block_hash) != 16 or any(c not in "0123456789abcdef" for c in block_hash):
        msg = f"a rules hash is 16 lowercase hex digits, not {block_hash!r}"
        raise InvalidInput(msg)
    stamp = ts or now_ts()
    doc = {"ts": stamp, "created_at": stamp, "rules_hash": block_hash, "rule_ids": list(rule_ids),
           "outcome": outcome, "attributed_rule_id": attributed_rule_id}
    doc.update(context)
    return {"id": content_id("validation", doc, taken), **doc}


def validation_put(doc: Mapping[str, object]) -> Put:
    """Where a validation record goes, so a caller can add it to a commit of its own."""
    return record_put(COLLECTION, doc, scope=str(doc["rules_hash"]))


def record_outcome(store: Store, block_hash: str, rule_ids: Sequence[str], outcome: str,
                   **context: object) -> pygit2.Oid | None:
    """Write one outcome under the rule set `block_hash`, in its own store commit.

    Nothing is written for an empty block: with no rules in the prompt there is
    nothing to measure.
    """
    if block_hash == EMPTY_BLOCK_HASH and not rule_ids:
        return None
    make_validation(block_hash, rule_ids, outcome, **context)  # refuses a malformed outcome before any write
    stamp = str(context.pop("ts", "") or now_ts())

    def change(tip: pygit2.Commit | None) -> Change:
        def taken(rec_id: str) -> bool:
            return store.read_bytes(record_path(COLLECTION, rec_id, block_hash), tip) is not None

        return change_of([validation_put(make_validation(block_hash, rule_ids, outcome, ts=stamp, taken=taken,
                                                         **context))])

    where = ""
    if context.get("slug") and context.get("task"):
        where = f" for {context['slug']}/{context['task']}"
    message = f"failres: validation {outcome}{where} under rules {block_hash}"
    return store.commit(change, message)


def read_validations(store: Store, block_hash: str | None = None) -> tuple[list[dict], list[str]]:
    """Validation records (of one rule set, or all), oldest first, and unreadable paths."""
    result = read_collection(store, COLLECTION, scope=block_hash)
    records = sorted(result.records, key=lambda r: (str(r.get("ts", "")), str(r.get("id", ""))))
    return records, [str(p) for p in result.problems]


@record
class RuleTally:
    """What the ledger says about one rule.

    `observations` counts measurements whose block carried the rule; the outcome
    counts are block-level context, not credit. `attributed_regressions` counts
    regressions pinned on this rule alone -- the number retirement argues from.
    """

    observations: int = 0
    committed: int = 0
    quarantined: int = 0
    improved: int = 0
    regressed: int = 0
    attributed_regressions: int = 0
    last_validated: str | None = None

    def to_dict(self) -> dict:
        return {"observations": self.observations, "committed": self.committed, "quarantined": self.quarantined,
                "improved": self.improved, "regressed": self.regressed,
                "attributed_regressions": self.attributed_regressions, "last_validated": self.last_validated}


_COUNTED = ("committed", "quarantined", "improved", "regressed")


def rule_tallies(records: Iterable[Mapping[str, object]]) -> dict[str, RuleTally]:
    """Fold ledger records into per-rule tallies (rule id -> tally), sorted by id."""
    counts: dict[str, dict] = {}
    for rec in records:
        outcome = str(rec.get("outcome", ""))
        created = str(rec.get("created_at") or rec.get("ts") or "")
        ids = rec.get("rule_ids")
        for rule_id in dict.fromkeys(str(i) for i in (ids if isinstance(ids, list) else [])):
            tally = counts.setdefault(rule_id, {})
            tally["observations"] = tally.get("observations", 0) + 1
            if outcome in _COUNTED:
                tally[outcome] = tally.get(outcome, 0) + 1
            if created and created > (tally.get("last_validated") or ""):
                tally["last_validated"] = created
        attributed = rec.get("attributed_rule_id")
        if isinstance(attributed, str) and attributed:
            tally = counts.setdefault(attributed, {})
            tally["attributed_regressions"] = tally.get("attributed_regressions", 0) + 1
    return {rule_id: RuleTally(**counts[rule_id]) for rule_id in sorted(counts)}
