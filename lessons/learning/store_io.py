"""Reflections and the mined ledger as records in the store.

A reflection is one intervention with what was learned from it: the person's
words, the context, the directive (a model's, or the person's own words when no
model is configured) and, decided by code, its origin. The mined ledger holds
one record per session (or landed edit) saying how far it has been mined, so
`reflect` never reads the same moment twice and picks up a session that grew.

Both are ordinary records (`lessons.storage.records`): add-only, redacted on the way in,
with later facts (a reflection consumed by an accepted proposal; a session mined
further) written as amendments beside them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pygit2

from lessons.errors import CorruptRecord
from lessons.learning.interventions import Intervention, Trigger
from lessons.learning.provenance import Origin, learnable, origin_of_record
from lessons.storage.records import (
    Put,
    amendment_put,
    derived_id,
    make_amendment,
    read_collection,
    read_record,
    record_put,
)
from lessons.storage.store import Store

REFLECTIONS = "reflections"
MINED = "mined"
# Edits teach how this code base is written; every other trigger teaches how an
# agent should behave while it works. The domain decides which rules file a
# reflection can ever feed.
BEHAVIOR = "behavior"
CODE = "code"


def domain_of(trigger: str) -> str:
    return CODE if trigger == Trigger.EDIT else BEHAVIOR


def reflection_id(session_id: str, trigger: str, message_index: int) -> str:
    """Derived from the moment, so mining it twice (two processes, a re-run) lands on one file."""
    return derived_id("reflection", session_id, trigger, str(message_index))


@dataclass(frozen=True)
class Reflection:
    """A reflection as read back from the store, origin normalised to fail closed."""

    id: str
    session_id: str
    trigger: str
    origin: Origin
    intervention: str
    context: str
    reflexion_text: str
    domain: str
    created_at: str
    model_derived: bool
    is_processed: bool
    error_type: str | None = None
    confidence: float | None = None
    source_path: str = ""
    message_index: int = -1
    aftermath: str = ""
    refused_tool: str = ""
    refused: str = ""
    files: tuple[str, ...] = ()
    followup: str = ""
    line: int = 0
    said_at: str = ""

    def learnable(self) -> bool:
        """Only clean reflections feed learning; there is no switch that loosens this."""
        return learnable(self.origin)


def reflection_from_record(doc: Mapping[str, object]) -> Reflection:
    """A stored reflection. A record without a recognised origin (written before the
    field existed, or torn) loads as untrusted: unknown provenance is never clean."""

    def text(key: str) -> str:
        value = doc.get(key)
        return value if isinstance(value, str) else ""

    confidence = doc.get("confidence")
    index = doc.get("message_index")
    trigger = text("trigger")
    return Reflection(
        id=text("id"),
        session_id=text("session_id"),
        trigger=trigger,
        origin=origin_of_record(doc),
        intervention=text("intervention"),
        context=text("context"),
        reflexion_text=text("reflexion_text"),
        domain=text("domain") or domain_of(trigger),
        created_at=text("created_at") or text("ts"),
        # Absent means unknown, and unknown is not "a model said so".
        model_derived=doc.get("model_derived") is True,
        is_processed=doc.get("is_processed") is True,
        error_type=text("error_type") or None,
        confidence=float(confidence) if isinstance(confidence, (int, float)) and not isinstance(confidence, bool)
        else None,
        source_path=text("source_path"),
        message_index=index if isinstance(index, int) and not isinstance(index, bool) else -1,
        aftermath=text("aftermath"),
        refused_tool=text("refused_tool"),
        refused=text("refused"),
        files=tuple(str(f) for f in files) if isinstance(files := doc.get("files"), list) else (),
        followup=text("followup"),
        line=line if isinstance(line := doc.get("line"), int) and not isinstance(line, bool) else 0,
        said_at=text("said_at"),
    )


def make_reflection(intervention: Intervention, origin: Origin, *, directive: str, model_derived: bool,
                    created_at: str, source_path: str = "", error_type: str | None = None,
                    confidence: float | None = None) -> dict:
    """The record of one reflection, with every field the contract names."""
    trigger = str(intervention.trigger)
    doc: dict[str, object] = {
        "id": reflection_id(intervention.session_id, trigger, intervention.message_index),
        "session_id": intervention.session_id,
        "trigger": trigger,
        "origin": str(origin),
        "intervention": intervention.intervention,
        "context": intervention.context,
        "aftermath": intervention.aftermath,
        "reflexion_text": directive,
        "domain": domain_of(trigger),
        "created_at": created_at,
        "ts": created_at,
        "error_type": error_type,
        "confidence": confidence,
        "is_processed": False,
        "model_derived": model_derived,
        "source_path": source_path,
        "message_index": intervention.message_index,
    }
    # Optional fields, present only where they say something.
    if intervention.refused_tool:
        doc.update(refused_tool=intervention.refused_tool, refused=intervention.refused)
    if intervention.files:
        doc["files"] = list(intervention.files)
    if intervention.followup:
        doc["followup"] = intervention.followup
    if intervention.line:
        doc["line"] = intervention.line
    if intervention.said_at:
        doc["said_at"] = intervention.said_at
    return doc


def reflection_put(doc: Mapping[str, object]) -> Put:
    return record_put(REFLECTIONS, doc)


def processed_put(reflection: str, proposal: str, ts: str) -> Put:
    """Mark a reflection consumed by a resolved proposal (an amendment; the id is
    derived, so resolving twice writes one file)."""
    amend = make_amendment(reflection, {"is_processed": True, "proposal": proposal},
                           amend_id=derived_id("processed", reflection, proposal), ts=ts)
    return amendment_put(REFLECTIONS, reflection, amend)


def read_reflections(store: Store, commit: pygit2.Commit | None = None) -> tuple[list[Reflection], list[str]]:
    """Every reflection, oldest first, and the paths of files that could not be read."""
    result = read_collection(store, REFLECTIONS, commit=commit)
    found = [reflection_from_record(doc) for doc in result.records]
    found.sort(key=lambda r: (r.created_at, r.id))
    return found, [str(p) for p in result.problems]


# ── the mined ledger ─────────────────────────────────────────────────────────


def mined_id(session_key: str) -> str:
    return derived_id("mined", session_key)


def mined_extent(store: Store, session_key: str, commit: pygit2.Commit | None = None) -> int | None:
    """How many messages of this session were mined before; None when never.

    A ledger record that cannot be read counts as never mined: mining again
    writes the same derived reflection ids, which costs nothing.
    """
    try:
        doc = read_record(store, MINED, mined_id(session_key), commit=commit)
    except CorruptRecord:
        return None
    if doc is None:
        return None
    extent = doc.get("messages")
    return extent if isinstance(extent, int) and not isinstance(extent, bool) else None


def mined_put(session_key: str, *, messages: int, reflections: int, source_path: str, ts: str,
              first_time: bool) -> Put:
    """The ledger entry for a session mined up to `messages`: the record the first
    time, an amendment moving the extent afterwards."""
    rec_id = mined_id(session_key)
    if first_time:
        return record_put(MINED, {"id": rec_id, "session_id": session_key, "messages": messages,
                                  "reflections": reflections, "source_path": source_path, "ts": ts})
    amend = make_amendment(rec_id, {"messages": messages}, ts=ts, reflections=reflections)
    return amendment_put(MINED, rec_id, amend)


def unprocessed_learnable(reflections: Iterable[Reflection], domain: str) -> list[Reflection]:
    """What a learning pass of `domain` may consume: clean and not yet consumed."""
    return [r for r in reflections if r.domain == domain and r.learnable() and not r.is_processed]
