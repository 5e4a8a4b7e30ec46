"""Large store writes through `git fast-import`: one pack instead of a loose object per record.

A batch of thousands of records written through libgit2 makes a loose object for every
blob and every touched fan-out tree — two files created, compressed and renamed per
record — and a 200,000-line `lessons import` spent minutes doing nothing else. `git
fast-import` builds the same trees (tree ids are canonical: the same entries give the same
id whoever writes them) and writes every object of the batch into one pack.

It never moves the store ref itself: it writes the commit onto a private ref
(`refs/failres/bulk/<random>`), which is then deleted, and the store ref moves from the tip
the batch was built on to that commit by the store's own compare-and-swap. A lost race
rebuilds the batch on the new tip, exactly as `Store.commit` does; the objects of the lost
attempt stay unreferenced until `git gc`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pygit2

from lessons.storage.trees import Change

# Below this many files a batch goes through libgit2: starting fast-import costs more.
MIN_BULK_FILES = 500
# What a child git must not inherit: they would point it at another repository or index.
_LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")


def available() -> bool:
    return shutil.which("git") is not None


def write_commit(git_dir: Path, parent: pygit2.Commit | None, change: Change, message: str,
                 signature: pygit2.Signature) -> str | None:
    """The id of a commit of `change` on `parent` made by fast-import; None when git failed
    (the caller then writes the batch the ordinary way)."""
    temp_ref = f"refs/failres/bulk/{uuid.uuid4().hex}"
    stream = _stream(temp_ref, parent, change, message, signature)
    env = {k: v for k, v in os.environ.items() if k not in _LOCATING}
    env["GIT_DIR"] = str(git_dir)
    try:
        done = subprocess.run(["git", "-c", "gc.auto=0", "fast-import", "--quiet", "--done"], input=stream, env=env,
                              capture_output=True, check=False)
        if done.returncode != 0:
            return None
        shown = subprocess.run(["git", "rev-parse", "--verify", "-q", temp_ref], env=env, capture_output=True,
                               check=False)
        oid = shown.stdout.decode().strip()
        return oid if shown.returncode == 0 and oid else None
    finally:
        subprocess.run(["git", "update-ref", "-d", temp_ref], env=env, capture_output=True, check=False)


def _stream(ref: str, parent: pygit2.Commit | None, change: Change, message: str,
            signature: pygit2.Signature) -> bytes:
    offset = signature.offset
    tz = f"{'+' if offset >= 0 else '-'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    who = f"{signature.name} <{signature.email}> {signature.time} {tz}".encode()
    text = message.encode()
    out = [b"commit " + ref.encode() + b"\n", b"committer " + who + b"\n",
           b"data " + str(len(text)).encode() + b"\n" + text + b"\n"]
    if parent is not None:
        out.append(b"from " + str(parent.id).encode() + b"\n")
    for path in sorted(change.deletes - set(change.puts)):
        out.append(b"D " + _quoted(path) + b"\n")
    for path, data in sorted(change.puts.items()):
        out.append(b"M 100644 inline " + _quoted(path) + b"\n")
        out.append(b"data " + str(len(data)).encode() + b"\n" + data + b"\n")
    out.append(b"done\n")
    return b"".join(out)


def _quoted(path: str) -> bytes:
    # Record paths are ASCII ids under fixed directory names; a path fast-import would read
    # differently (a quote, a space at the start, a newline) is refused by the caller's checks.
    if any(c in path for c in '"\n\\') or path.startswith(" "):
        msg = f"record path {path!r} cannot be streamed"
        raise ValueError(msg)
    return path.encode()


def commit_batch(store, change: Change, message: str, body: str, *, attempts: int = 20):
    """Write one batch of `store.commit_batches` on the current tip; the new commit's id, or None
    when the batch changed nothing. Small batches, and any fast-import failure, go through
    `store.commit` (the same result, written object by object)."""
    import random
    import time

    if len(change.puts) + len(change.deletes) < MIN_BULK_FILES or not available():
        return store.commit(change, message)
    store.require()
    for attempt in range(attempts):
        parent = store.commit_at()
        if parent is None:
            store.require()  # deleted while we were writing: refuse, never start afresh
        try:
            made = write_commit(store.common_dir, parent, change, message.rstrip("\n") + "\n" + body,
                                store.signature())
        except ValueError:
            made = None
        if made is None:
            return store.commit(change, message)
        oid = pygit2.Oid(hex=made)
        if parent is not None and store.repo[oid].peel(pygit2.Commit).tree.id == parent.tree.id:
            return None
        if store.compare_and_swap(parent.id if parent is not None else None, oid, message.splitlines()[0]):
            return oid
        time.sleep(min(0.05, 0.001 * (attempt + 1)) * random.random())
    return store.commit(change, message)  # raises StoreBusy the ordinary way if the ref keeps moving
