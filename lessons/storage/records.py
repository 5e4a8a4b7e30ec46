"""Records: how a JSON document becomes a file in the store, and back.

Layout, one file per record, fanned out by the record id so that no tree grows
without bound and an append rewrites the same number of small trees whatever the
store's size::

    <collection>/[<scope>/]<id[0:2]>/<id[2:4]>/<id>.json            the record
    <collection>/[<scope>/]<id[0:2]>/<id[2:4]>/<id>+<amend-id>.json  a later fact about it

Records are add-only: a later fact (a stamp, a status change) is a new amendment
file beside its record, never an edit, so two diverged stores always merge as a
union of files. Reading folds the amendments into the record (see `fold`).

Every document passes through `redact_value` on its way to bytes: no write path
can forget it.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _string  # the C encoder json.dumps uses with ensure_ascii=False

from typing import TYPE_CHECKING

from lessons.errors import CorruptRecord, InvalidInput
from lessons.storage.trees import Change

if TYPE_CHECKING:  # records are read over a `StoreView` too, which need not load libgit2
    import pygit2

    from lessons.storage.store import Store

_ID = re.compile(r"^[0-9a-f]{16}$")
_SCOPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
AMEND_SEP = "+"


def new_id() -> str:
    """A fresh record id: 16 random hex digits (ids must not collide across machines)."""
    return os.urandom(8).hex()


def derived_id(*parts: str) -> str:
    """A deterministic id: writing the same fact twice lands on the same path (idempotence)."""
    import hashlib  # here, with `now_ts`'s datetime: a process that only reads records never needs them

    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).hexdigest()


MAX_ID_COUNTER = 10_000


def content_id(kind: str, document: Mapping[str, object], taken: Callable[[str], bool] | None = None) -> str:
    """An id derived from a record's content (everything but its id), so the same
    inputs give the same record in any repository.

    When two records of the same content must both exist (two equal measurements in
    one instant), `taken` says which ids are in use and a counter tells them apart.
    """
    body = json.dumps({k: v for k, v in document.items() if k != "id"}, sort_keys=True, ensure_ascii=False,
                      default=str)
    for counter in range(MAX_ID_COUNTER):
        rec_id = derived_id(kind, body, *([str(counter)] if counter else []))
        if taken is None or not taken(rec_id):
            return rec_id
    msg = f"no free {kind} id after {MAX_ID_COUNTER} tries"
    raise InvalidInput(msg)


def now_ts() -> str:
    """RFC 3339 UTC with microseconds; fixed width, so string order is time order."""
    from datetime import UTC, datetime

    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def encode(data: Mapping[str, object]) -> bytes:
    """Canonical bytes of a record: redacted, sorted keys, 2-space indent, newline."""
    return encoded(data)[0]


def encoded(data: Mapping[str, object]) -> tuple[bytes, dict]:
    """`encode`'s bytes and the redacted document they spell (what `decode` of them returns,
    where the record holds only JSON's own types)."""
    # Imported here: redaction compiles its patterns, which a read of records never needs.
    from lessons.redaction.redact import redact_value

    clean = redact_value(dict(data))
    try:
        text = _flat(clean) if _is_flat(clean) else _indented(clean, 0)
    except _Unusual:
        text = json.dumps(clean, sort_keys=True, indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8"), clean


_SCALARS = (str, type(None), bool, int, float)
# One line per member, as `indent=2` writes a flat object; a newline inside a string is
# escaped, so the separator can only ever stand between members.
_FLAT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",\n  ", ": "))


def _is_flat(value: object) -> bool:
    """A non-empty object of string keys and scalar values, written whole by json's C encoder."""
    return (type(value) is dict and bool(value)
            and all(type(key) is str and type(item) in _SCALARS for key, item in value.items()))


def _flat(value: dict) -> str:
    """`_indented(value, 0)` of a flat object, character for character, without a call per member."""
    return "{\n  " + _FLAT.encode(value)[1:-1] + "\n}"


class _Unusual(Exception):
    """A value `_indented` leaves to `json.dumps` (a subclass, a key that is no string)."""


def _indented(value: object, level: int) -> str:
    """`json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)`, character for character.

    The standard library writes indented JSON in pure Python, one generator step per
    token, and a bulk import spent a tenth of its time there; this builds the same text
    from the C string encoder. Anything but plain JSON types is handed back to json.
    """
    kind = type(value)
    if kind is str:
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if value != value:
            return "NaN"
        if value in (math.inf, -math.inf):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if kind is dict:
        if not value:
            return "{}"
        if any(type(key) is not str for key in value):
            raise _Unusual
        inner = "\n" + "  " * (level + 1)
        return ("{" + inner + ("," + inner).join(_string(key) + ": " + _indented(value[key], level + 1)
                                                 for key in sorted(value)) + "\n" + "  " * level + "}")
    if kind is list or kind is tuple:
        if not value:
            return "[]"
        inner = "\n" + "  " * (level + 1)
        return "[" + inner + ("," + inner).join(_indented(item, level + 1) for item in value) + "\n" + "  " * level + "]"
    raise _Unusual


def decode(path: str, raw: bytes) -> dict:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptRecord(path, f"not valid JSON ({exc.__class__.__name__}: {exc})") from None
    except (RecursionError, ValueError) as exc:  # a record nested past the parser's stack, a 5,000-digit number
        raise CorruptRecord(path, f"not a readable record ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise CorruptRecord(path, "a record must be a JSON object")
    return data


def _check(rec_id: str, scope: str | None) -> None:
    if not _ID.match(rec_id):
        msg = f"invalid record id {rec_id!r} (16 lowercase hex digits expected)"
        raise InvalidInput(msg)
    if scope is not None and not _SCOPE.match(scope):
        msg = f"invalid record scope {scope!r}"
        raise InvalidInput(msg)


def record_dir(collection: str, rec_id: str, scope: str | None = None) -> str:
    base = f"{collection}/{scope}" if scope else collection
    return f"{base}/{rec_id[0:2]}/{rec_id[2:4]}"


def record_path(collection: str, rec_id: str, scope: str | None = None) -> str:
    _check(rec_id, scope)
    return f"{record_dir(collection, rec_id, scope)}/{rec_id}.json"


def amendment_path(collection: str, target_id: str, amend_id: str, scope: str | None = None) -> str:
    _check(target_id, scope)
    _check(amend_id, None)
    return f"{record_dir(collection, target_id, scope)}/{target_id}{AMEND_SEP}{amend_id}.json"


@dataclass(frozen=True)
class Put:
    """One record (or amendment) to write: where, and the document."""

    path: str
    data: Mapping[str, object]


def record_put(collection: str, data: Mapping[str, object], scope: str | None = None) -> Put:
    return Put(record_path(collection, str(data["id"]), scope), data)


def amendment_put(collection: str, target_id: str, data: Mapping[str, object], scope: str | None = None) -> Put:
    return Put(amendment_path(collection, target_id, str(data["id"]), scope), data)


def change_of(puts: Iterable[Put], deletes: Iterable[str] = ()) -> Change:
    return Change({p.path: encode(p.data) for p in puts}, frozenset(deletes))


def make_amendment(target_id: str, sets: Mapping[str, object], *, first_wins: bool = False,
                   amend_id: str | None = None, ts: str | None = None, **extra: object) -> dict:
    """A later fact about a record. `first_wins` amendments never override an earlier one
    (a lesson's `resolved_by`: the first landing is what resolved it, whichever replica
    saw it first)."""
    doc = {"ts": ts or now_ts(), "target": target_id, "set": dict(sets), "fold": "first" if first_wins else "last"}
    doc.update(extra)
    # Derived from what it says: the same fact written twice is one file, and the same
    # story in two repositories writes the same amendments.
    return {"id": amend_id or content_id("amendment", doc), **doc}


def fold(record: Mapping[str, object], amendments: Iterable[Mapping[str, object]]) -> dict:
    """The record as its amendments say it is now.

    Amendments apply in (ts, id) order, so every replica folds the same files to
    the same result. A "last" amendment overrides; a "first" one only sets keys
    that no earlier "first" amendment set.
    """
    out = dict(record)
    firsts: set[str] = set()
    for amend in sorted(amendments, key=lambda a: (str(a.get("ts", "")), str(a.get("id", "")))):
        sets = amend.get("set")
        if not isinstance(sets, Mapping):
            continue
        for key, value in sets.items():
            if amend.get("fold") == "first":
                if key in firsts:
                    continue
                firsts.add(key)
            out[key] = value
    return out


@dataclass
class ReadResult:
    """Records read from one collection, and the files that could not be read."""

    records: list[dict] = field(default_factory=list)
    problems: list[CorruptRecord] = field(default_factory=list)


def _split_name(name: str) -> tuple[str, str | None] | None:
    if not name.endswith(".json"):
        return None
    stem = name[: -len(".json")]
    if AMEND_SEP in stem:
        target, amend = stem.split(AMEND_SEP, 1)
        return target, amend
    return stem, None


def iter_record_files(store: Store, prefix: str, commit: pygit2.Commit | None = None
                      ) -> Iterator[tuple[str, str, str | None, pygit2.Oid]]:
    """(path, record id, amendment id or None, blob) for every record file under prefix."""
    for path, oid in store.walk(prefix, commit):
        parsed = _split_name(path.rsplit("/", 1)[-1])
        if parsed is not None:
            yield path, parsed[0], parsed[1], oid


def read_collection(store: Store, collection: str, scope: str | None = None,
                    commit: pygit2.Commit | None = None) -> ReadResult:
    """Every record of a collection (or of one scope in it), amendments folded in.

    A corrupt file costs that one record (or amendment), never the read: it is
    returned in `problems` with its path.
    """
    prefix = f"{collection}/{scope}" if scope else collection
    return read_files(store, iter_record_files(store, prefix, commit))


def read_files(store: Store, files: Iterable[tuple[str, str, str | None, pygit2.Oid]]) -> ReadResult:
    result = ReadResult()
    bases: dict[str, dict] = {}
    amends: dict[str, list[dict]] = {}
    for path, rec_id, amend_id, oid in files:
        try:
            doc = decode(path, store.blob(oid))
        except CorruptRecord as problem:
            result.problems.append(problem)
            continue
        if amend_id is None:
            bases[rec_id] = doc
        else:
            amends.setdefault(rec_id, []).append(doc)
    for rec_id, doc in bases.items():
        result.records.append(fold(doc, amends.get(rec_id, ())))
    return result


def read_record(store: Store, collection: str, rec_id: str, scope: str | None = None,
                commit: pygit2.Commit | None = None) -> dict | None:
    """One record by id, folded; None when absent. A corrupt base file raises CorruptRecord."""
    _check(rec_id, scope)
    directory = record_dir(collection, rec_id, scope)
    commit = commit if commit is not None else store.commit_at()
    names = [n for n in store.list_dir(directory, commit) if n.startswith(rec_id)]
    if f"{rec_id}.json" not in names:
        return None
    files = []
    for name in names:
        parsed = _split_name(name)
        if parsed is not None and parsed[0] == rec_id:
            path = f"{directory}/{name}"
            files.append((path, rec_id, parsed[1], commit.tree[path].id))
    result = read_files(store, files)
    base_problem = [p for p in result.problems if p.path.endswith(f"/{rec_id}.json")]
    if base_problem:
        raise base_problem[0]
    return result.records[0] if result.records else None


def resolve_id(store: Store, collection: str, prefix: str, scope: str | None = None) -> str:
    """A full record id from a unique prefix of at least 4 hex digits (as git does for commits)."""
    prefix = prefix.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{4,16}", prefix):
        msg = f"{prefix!r} is not a record id (4 to 16 hex digits)"
        raise InvalidInput(msg)
    base = f"{collection}/{scope}" if scope else collection
    fan1 = prefix[0:2]
    matches: set[str] = set()
    for name2 in store.list_dir(f"{base}/{fan1}"):
        if not name2.startswith(prefix[2:4]) and len(prefix) >= 4:
            continue
        for name in store.list_dir(f"{base}/{fan1}/{name2}"):
            parsed = _split_name(name)
            if parsed and parsed[1] is None and parsed[0].startswith(prefix):
                matches.add(parsed[0])
    if not matches:
        msg = f"no {collection} record with id {prefix}"
        raise InvalidInput(msg)
    if len(matches) > 1:
        msg = f"id {prefix} is ambiguous in {collection}: {', '.join(sorted(matches)[:5])}"
        raise InvalidInput(msg, hint="give more digits")
    return matches.pop()
