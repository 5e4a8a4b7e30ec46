"""The objects of a quarantine snapshot: hashed aside, and only redacted ones enter the person's database.

A snapshot records what a failing seat left in its workspace. Hashing those files
straight into the person's object database would keep every secret the seat wrote
there as a loose blob (unreachable, but in `git fsck --unreachable` and in every copy
of `.git`) whatever the snapshot itself then redacts. So the files are hashed into a
scratch object directory beside failres's private index, with the person's database as
an alternate; from there each changed text file enters the person's database only
redacted (a binary one as it is), and the scratch directory is removed.

The files a dispatch's accepted changes hold are hashed in place (the gate judges them
from there, and the task commit names them); once the task is committed or
quarantined, those of them that neither the commit nor a snapshot names (an earlier
version a fixer replaced, a quarantined task's code) are removed again (`drop_unnamed`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pygit2

from lessons.redaction.redact import is_secret_bearing_path, redact


def promote_redacted(git_dir: Path, scratch: Path, tree: str, paths: Iterable[str]) -> str:
    """`tree` (built in `scratch`) written into the person's database, each of `paths` redacted first."""
    aside = pygit2.Repository(str(git_dir))
    aside.odb.add_disk_alternate(str(scratch))
    person = pygit2.Repository(str(git_dir))
    index = pygit2.Index()
    index.read_tree(aside[pygit2.Oid(hex=tree)])
    for path in paths:
        try:
            entry = index[path]
        except KeyError:
            continue  # deleted in the workspace: nothing to write
        if person.odb.exists(entry.id):
            continue
        if is_secret_bearing_path(path):
            index.remove(path)
            continue
        blob = aside[entry.id]
        data = blob.data
        if not blob.is_binary:
            data = redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        index.add(pygit2.IndexEntry(path, person.create_blob(data), entry.mode))
    return str(index.write_tree(person))


def not_yet_stored(git_dir: Path, top: Path, paths: Iterable[str]) -> dict[str, str]:
    """Before `git add`: the blob id each regular file at `paths` will have, for those the database lacks."""
    repo = pygit2.Repository(str(git_dir))
    found = {}
    for path in paths:
        full = top / path
        try:
            if full.is_symlink() or not full.is_file():
                continue
            oid = pygit2.hashfile(str(full))
        except (OSError, pygit2.GitError, ValueError):
            continue
        if not repo.odb.exists(oid):
            found[path] = str(oid)
    return found


def fresh_blobs(git_dir: Path, tree: str, missing: dict[str, str]) -> dict[str, str]:
    """The blobs `tree` holds that `git add` wrote new (as `not_yet_stored` foresaw them): oid -> path.

    A file a filter changed on the way in has another id than foreseen: not counted, so
    never removed (an object that existed before, freshened by git, is never taken for new).
    """
    repo = pygit2.Repository(str(git_dir))
    root = repo[pygit2.Oid(hex=tree)].peel(pygit2.Tree)
    found = {}
    for path, oid in missing.items():
        try:
            if str(root[path].id) == oid:
                found[oid] = path
        except KeyError:
            continue
    return found


def drop_unnamed(git_dir: Path, fresh: dict[str, str], trees: Iterable[str]) -> int:
    """Remove each loose blob of `fresh` that none of `trees` names at its path; how many went."""
    repo = pygit2.Repository(str(git_dir))
    roots = []
    for tree in trees:
        try:
            roots.append(repo[pygit2.Oid(hex=tree)].peel(pygit2.Tree))
        except (KeyError, ValueError, pygit2.GitError):
            continue
    dropped = 0
    for oid, path in fresh.items():
        named = False
        for root in roots:
            try:
                named = str(root[path].id) == oid
            except KeyError:
                named = False
            if named:
                break
        if not named:
            try:
                (git_dir / "objects" / oid[:2] / oid[2:]).unlink()
                dropped += 1
            except OSError:
                pass
    return dropped
