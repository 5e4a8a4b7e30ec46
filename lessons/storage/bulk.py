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
from collections.abc import Sequence
from pathlib import Path

import pygit2

from lessons.storage.trees import Change

# Below this many files a batch goes through libgit2: starting fast-import costs more.
MIN_BULK_FILES = 500
# What a child git must not inherit: they would point it at another repository or index.
_LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")

# fast-import deflates every object with a fresh zlib stream (a quarter of a megabyte
# each), and glibc hands that memory back to the kernel after every object: a 30,000-record
# batch took 900,000 page faults and eight times the CPU of the writing itself. Told to
# keep freed memory (glibc only; other C libraries ignore the variable), the same batch
# takes a few thousand; what git writes is the same.
_KEEP_FREED_MEMORY = ("glibc.malloc.trim_threshold=536870912:glibc.malloc.mmap_threshold=33554432"
                      ":glibc.malloc.top_pad=16777216")


def available() -> bool:
    import shutil

    return shutil.which("git") is not None


def write_commit(git_dir: Path, parent: pygit2.Commit | None, change: Change, message: str,
                 signature: pygit2.Signature) -> str | None:
    """The id of a commit of `change` on `parent` made by fast-import; None when git failed
    (the caller then writes the batch the ordinary way)."""
    made = write_chain(git_dir, parent, [(change, message)], signature)
    return None if made is None else made[-1]


def write_chain(git_dir: Path, parent: pygit2.Commit | None, batches: Sequence[tuple[Change, str]],
                signature: pygit2.Signature) -> list[str] | None:
    """The ids of a chain of commits, one per (change, message), the first on `parent`, all
    written by one fast-import into one pack; None when git failed. No ref of the store
    moves: the caller makes the last one the store (or not) by compare-and-swap, so a
    chain is all or nothing."""
    if not batches:
        return []
    # Imported here: the store is read far more often than a chain is written (uuid alone
    # brings `platform`), and every read command imports this module with the store.
    import subprocess
    import tempfile
    import uuid

    temp_ref = f"refs/failres/bulk/{uuid.uuid4().hex}"
    # Every batch is checked for paths fast-import cannot take before git starts: a refused
    # path falls back to libgit2 with nothing half-written.
    for change, _ in batches:
        for path in (*change.puts, *change.deletes):
            _quoted(path)
    env = {k: v for k, v in os.environ.items() if k not in _LOCATING}
    env["GIT_DIR"] = str(git_dir)
    env.setdefault("GLIBC_TUNABLES", _KEEP_FREED_MEMORY)
    with tempfile.TemporaryDirectory(prefix="failres-bulk-") as scratch:
        marks = Path(scratch) / "marks"
        try:
            # Fed batch by batch through a pipe: git writes one batch while the next is built.
            with subprocess.Popen(["git", "-c", "gc.auto=0", "fast-import", "--quiet", "--done",
                                   f"--export-marks={marks}"], stdin=subprocess.PIPE, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as git:
                try:
                    for n, (change, message) in enumerate(batches):
                        git.stdin.write(_stream(temp_ref, parent if n == 0 else None, change, message, signature,
                                                mark=n + 1))
                    git.stdin.write(b"done\n")
                    git.stdin.close()
                except BrokenPipeError:  # git stopped reading: its exit status says why
                    pass
                if git.wait() != 0:
                    return None
            made = dict(line.split(" ", 1) for line in marks.read_text().split("\n") if line)
        except (OSError, ValueError):
            return None
        finally:
            subprocess.run(["git", "update-ref", "-d", temp_ref], env=env, capture_output=True, check=False)
    ids = [made.get(f":{n + 1}", "") for n in range(len(batches))]
    return ids if all(len(oid) in (40, 64) for oid in ids) else None


def _stream(ref: str, parent: pygit2.Commit | None, change: Change, message: str,
            signature: pygit2.Signature, *, mark: int) -> bytes:
    """One commit of a fast-import stream; a commit without `parent` follows the ref's last."""
    offset = signature.offset
    tz = f"{'+' if offset >= 0 else '-'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    who = f"{signature.name} <{signature.email}> {signature.time} {tz}".encode()
    text = message.encode()
    out = [b"commit " + ref.encode() + b"\n", b"mark :" + str(mark).encode() + b"\n", b"committer " + who + b"\n",
           b"data " + str(len(text)).encode() + b"\n" + text + b"\n"]
    if parent is not None:
        out.append(b"from " + str(parent.id).encode() + b"\n")
    for path in sorted(change.deletes - set(change.puts)):
        out.append(b"D " + _quoted(path) + b"\n")
    for path, data in sorted(change.puts.items()):
        if isinstance(data, pygit2.Oid):  # a blob the repository has already
            out.append(b"M 100644 " + str(data).encode() + b" " + _quoted(path) + b"\n")
            continue
        out.append(b"M 100644 inline " + _quoted(path) + b"\n")
        out.append(b"data " + str(len(data)).encode() + b"\n" + data + b"\n")
    return b"".join(out)


def _quoted(path: str) -> bytes:
    # Record paths are ASCII ids under fixed directory names; a path fast-import would read
    # differently (a quote, a space at the start, a newline) is refused by the caller's checks.
    if '"' in path or "\n" in path or "\\" in path or path.startswith(" "):
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


def commit_on(store, parent: pygit2.Commit | None, change: Change, message: str, body: str):
    """`change` written by fast-import on `parent` (a big reclaim, a restore), the ref moved
    to it only from `parent`: (True, the commit, or None when it changed nothing), (False,
    None) when the ref had moved, or None when fast-import could not write it."""
    if parent is None or len(change.puts) + len(change.deletes) < MIN_BULK_FILES or not available():
        return None
    try:
        made = write_commit(store.common_dir, parent, change, message.rstrip("\n") + "\n" + body,
                            store.signature())
    except ValueError:
        return None
    if made is None:
        return None
    oid = pygit2.Oid(hex=made)
    if store.repo[oid].peel(pygit2.Commit).tree.id == parent.tree.id:
        return True, None
    return (True, oid) if store.compare_and_swap(parent.id, oid, message.splitlines()[0]) else (False, None)

