"""The objects of a quarantine snapshot: hashed aside, and only redacted ones kept for it.

A snapshot records what a failing seat left in its workspace. Hashing those files
straight into an object database that lasts would keep every secret the seat wrote
there as a loose blob (unreachable, but in `git fsck --unreachable` and in every copy
of `.git`) whatever the snapshot itself then redacts. So the files are hashed into a
scratch object directory beside failres's private index, with the task's and the
person's databases as alternates; from there each changed text file enters the task's
object directory only redacted (a binary one as it is), and the scratch directory is
removed. The person's database gets the snapshot's objects only when the snapshot is
committed (`TaskObjects.bring_in`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pygit2

from failres.gitops.task_objects import TaskObjects
from lessons.redaction.redact import is_secret_bearing_path, redact


def promote_redacted(objects: TaskObjects, scratch: Path, tree: str, paths: Iterable[str]) -> str:
    """`tree` (built in `scratch`) written into the task's object directory, each of `paths` redacted first."""
    aside = objects.repo(scratch)
    task = objects.repo()
    index = pygit2.Index()
    index.read_tree(aside[pygit2.Oid(hex=tree)])
    for path in paths:
        try:
            entry = index[path]
        except KeyError:
            continue  # deleted in the workspace: nothing to write
        if task.odb.exists(entry.id):
            continue  # the person's already, or a file failres accepted (the snapshot redacts it)
        if is_secret_bearing_path(path):
            index.remove(path)
            continue
        blob = aside[entry.id]
        data = blob.data
        if not blob.is_binary:
            data = redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        index.add(pygit2.IndexEntry(path, task.create_blob(data), entry.mode))
    return str(index.write_tree(task))
