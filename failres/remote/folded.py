"""The plan's record of finished tasks: their claims folded into one ref, so a plan's refs stay few.

Every finished task kept its claim ref forever: a plan of ten thousand tasks left ten
thousand refs on the remote, and a compare-and-swap push there took 0.4 s instead of 0.05 s,
since receive-pack advertises every ref. A finished claim (committed, quarantined) is
instead folded into `refs/failres/claims/<slug>/_done` (no task id starts with `_`), in
one atomic push that deletes the claim ref and moves the record, both leased on what was
read: at no instant is a finished task both unclaimed and unrecorded.

The record is a commit without parents (fetching it brings the record, not every fold
before it) whose tree holds one blob per finished task, in 256 subtrees named by the first
two hex digits of the sha256 of the task id, so a fold rewrites two small trees, not one
listing every task. Each blob is the task's last claim message with a `claim:` line naming
that claim commit.

The commit carries the header `encoding failres-claims-layout-2`. That is the layout's
version, and it is what stops a runner of the code before folding: it reads every ref
under the plan's claims as a claim and asks for its message in the commit's encoding,
which no codec has, so it stops with one line (`unknown encoding: failres-claims-layout-2`)
before claiming anything, instead of reading a folded task as unclaimed and running it
again. A record is read only when it has exactly this shape; anything else (another
layout, a blob that is not text, an entry in the wrong subtree, too many entries) is
refused with one line and never read as a task done or not done.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

from typing import TYPE_CHECKING

from failres.errors import GitError
from failres.gitops.git import FALLBACK_EMAIL, FALLBACK_NAME
from failres.remote.claims import CLAIMS_PREFIX, Claim, parse_claim

if TYPE_CHECKING:  # a record is read over a `PlainRepository` too (a look at the remote), written with pygit2
    import pygit2

RECORD_NAME = "_done"
LAYOUT = "failres-claims-layout-2"
FOLDABLE = ("committed", "quarantined")
_LAYOUT_OF = re.compile(r"failres-claims-layout-(\d+)")
_TASK = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
_BUCKET = re.compile(r"[0-9a-f]{2}")
MAX_ENTRY_BYTES = 4096  # a claim message is a few hundred bytes
MAX_BUCKET_ENTRIES = 4096  # a million finished tasks in all


class CorruptRecord(GitError):
    """The remote's record of finished tasks is not one this failres reads: nothing is judged by it."""


def record_ref(slug: str) -> str:
    return f"{CLAIMS_PREFIX}{slug}/{RECORD_NAME}"


def bucket_of(task: str) -> str:
    import hashlib  # only a fold or a look into the record hashes: a plain `status --remote` need not load it

    return hashlib.sha256(task.encode()).hexdigest()[:2]


@dataclass(frozen=True)
class Record:
    """One plan's record as read: its commit ("" when the remote has none), its subtrees, its entries."""

    slug: str
    oid: str = ""
    buckets: dict[str, str] = field(default_factory=dict)  # "ab" -> subtree oid
    entries: dict[str, Claim] = field(default_factory=dict)  # task -> its folded claim (folded=True)


def entry_text(claim: Claim) -> str:
    return claim.message() + (f"claim: {claim.oid}\n" if claim.oid else "")


def _refuse(slug: str, what: str) -> CorruptRecord:
    return CorruptRecord(f"the record of finished tasks of {slug} on the remote ({record_ref(slug)}) {what}; "
                         "nothing was claimed by it",
                         hint="a runner of this failres rewrites it only from a record it could read; "
                              "restore it or delete the ref on the remote")


def _entry(repo: pygit2.Repository, slug: str, task: str, oid: pygit2.Oid) -> Claim:
    blob = repo.get(oid)
    if getattr(blob, "type_str", None) != "blob" or blob.size > MAX_ENTRY_BYTES:
        raise _refuse(slug, f"holds an entry for {task} that is not a small blob")
    try:
        text = blob.data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(slug, f"holds an entry for {task} that is not UTF-8 text") from None
    claim = parse_claim(slug, task, text, str(oid)) if "\0" not in text else None
    if claim is None or claim.state not in FOLDABLE:
        raise _refuse(slug, f"holds an entry for {task} that is no finished claim")
    last = next((line[len("claim: "):] for line in text.splitlines() if line.startswith("claim: ")), "")
    return replace(claim, folded=True, folded_from=last.strip())


def read_record(repo: pygit2.Repository, slug: str, oid: str, known: Record | None = None) -> Record:
    """The record at commit `oid`; CorruptRecord when it is not of this layout's exact shape.
    `known`: an earlier read, whose unchanged subtrees are not read again."""
    commit = repo.get(oid)
    if getattr(commit, "type_str", None) != "commit":
        raise _refuse(slug, "is not a commit")
    encoding = commit.message_encoding or ""
    if encoding != LAYOUT:
        newer = _LAYOUT_OF.fullmatch(encoding)
        if newer and int(newer.group(1)) > 2:
            msg = f"the claims of {slug} on the remote are of layout {newer.group(1)}; this failres reads layout 2"
            raise CorruptRecord(msg, hint="upgrade failres on this machine to run this plan with the others")
        raise _refuse(slug, f"is not of the claim layout {LAYOUT}")
    buckets: dict[str, str] = {}
    entries: dict[str, Claim] = {}
    old_entries = known.entries if known is not None else {}
    for item in commit.tree:
        if not _BUCKET.fullmatch(item.name or "") or item.type_str != "tree":
            raise _refuse(slug, f"holds {item.name!r}, which is not one of its 256 subtrees")
        buckets[item.name] = str(item.id)
        if known is not None and known.buckets.get(item.name) == str(item.id):
            entries.update({t: c for t, c in old_entries.items() if bucket_of(t) == item.name})
            continue
        subtree = repo.get(item.id)
        if len(subtree) > MAX_BUCKET_ENTRIES:
            raise _refuse(slug, f"holds more than {MAX_BUCKET_ENTRIES} entries in {item.name}")
        for entry in subtree:
            task = entry.name or ""
            if not _TASK.fullmatch(task) or bucket_of(task) != item.name or entry.type_str != "blob":
                raise _refuse(slug, f"holds {item.name}/{task!r}, which is no task's entry in its subtree")
            entries[task] = _entry(repo, slug, task, entry.id)
    return Record(slug, str(commit.id), buckets, entries)


def write_record(repo: pygit2.Repository, record: Record, folds: list[Claim], drops: tuple[str, ...] = ()) -> str:
    """A new record commit (in the local object store): `record` with `folds` added, `drops` removed."""
    import pygit2

    touched: dict[str, pygit2.TreeBuilder] = {}

    def builder(bucket: str) -> pygit2.TreeBuilder:
        if bucket not in touched:
            base = record.buckets.get(bucket)
            touched[bucket] = repo.TreeBuilder(repo.get(base)) if base else repo.TreeBuilder()
        return touched[bucket]

    for claim in folds:
        text = entry_text(claim).encode()
        builder(bucket_of(claim.task)).insert(claim.task, repo.create_blob(text), pygit2.GIT_FILEMODE_BLOB)
    for task in drops:
        tree = builder(bucket_of(task))
        if tree.get(task) is not None:
            tree.remove(task)
    root = repo.TreeBuilder(repo.get(repo.get(record.oid).tree_id)) if record.oid else repo.TreeBuilder()
    for bucket, tree in touched.items():
        if len(tree):
            root.insert(bucket, tree.write(), pygit2.GIT_FILEMODE_TREE)
        elif root.get(bucket) is not None:
            root.remove(bucket)
    count = len((set(record.entries) | {c.task for c in folds}) - set(drops))
    stamp = f"{FALLBACK_NAME} <{FALLBACK_EMAIL}> {int(time.time())} +0000"
    body = (f"tree {root.write()}\nauthor {stamp}\ncommitter {stamp}\nencoding {LAYOUT}\n\n"
            f"failres claims of {record.slug}: {count} finished tasks\n")
    commit_type = getattr(pygit2, "GIT_OBJECT_COMMIT", None) or pygit2.enums.ObjectType.COMMIT
    return str(repo.odb.write(commit_type, body.encode()))
