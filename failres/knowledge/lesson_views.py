"""Lessons as people and programs read them: contract fields, one lesson, its snapshot.

A lesson's `snapshotBundle` is the id of a commit that captured the task worktree
at the moment of failure, kept reachable under `refs/failres/snapshots/`. `show
--diff` is that commit against the integration head the failed run started from;
`show --bundle FILE` packs it into a git bundle someone else can fetch from.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from failres.engine.quarantine import snapshot_ref
from failres.errors import UsageError
from failres.gitops.git import run_git, try_git
from lessons.errors import NotFound
from lessons.recall.lesson import COLLECTION
from lessons.storage.records import read_record, resolve_id
from lessons.storage.store import Store

# The fields `lessons list --json` promises, in the contract's order.
CONTRACT_FIELDS = ("id", "ts", "slug", "task", "failClass", "signature", "package", "message", "snapshotBundle",
                   "intHead", "resolved_by", "resolved_at")


def lesson_document(lesson: Mapping[str, object]) -> dict:
    """The contract's fields of a lesson (absent ones as null)."""
    return {key: lesson.get(key) for key in CONTRACT_FIELDS}


def find_lesson(store: Store, prefix: str) -> dict:
    """One lesson by a unique prefix of its id."""
    lesson_id = resolve_id(store, COLLECTION, prefix)
    lesson = read_record(store, COLLECTION, lesson_id)
    if lesson is None:
        msg = f"no lesson {lesson_id}"
        raise NotFound(msg)
    return lesson


def _snapshot(top: Path, lesson: Mapping[str, object]) -> str:
    snapshot = lesson.get("snapshotBundle")
    if not isinstance(snapshot, str) or not snapshot:
        msg = f"lesson {lesson.get('id')} has no snapshot"
        raise UsageError(msg, hint="lessons of stop-loss quarantines and imported ones often have none")
    found = try_git(top, ["rev-parse", "-q", "--verify", f"{snapshot}^{{commit}}"])
    if found.returncode != 0:
        msg = f"the snapshot {snapshot[:12]} of lesson {lesson.get('id')} is not in this repository"
        raise UsageError(msg, hint="fetch refs/failres/snapshots/* from the repository that wrote it")
    return found.stdout.decode().strip()


def snapshot_diff(top: Path, lesson: Mapping[str, object]) -> str:
    """The failed state against the integration head its run started from, as `git diff` prints it."""
    snapshot = _snapshot(top, lesson)
    base = lesson.get("intHead")
    if not isinstance(base, str) or try_git(top, ["rev-parse", "-q", "--verify", f"{base}^{{commit}}"]).returncode:
        base = f"{snapshot}^"  # the snapshot's parent is the base the task worktree started from
    return run_git(top, ["diff", "--no-color", "--no-ext-diff", base, snapshot]).decode("utf-8", "replace")


def write_bundle(top: Path, lesson: Mapping[str, object], target: Path) -> str:
    """A git bundle of the lesson's snapshot ref; returns the ref it holds.

    The bundle carries the snapshot and what it adds to the integration head it
    started from, so a receiver needs that head (any clone of the repository has it).
    """
    snapshot = _snapshot(top, lesson)
    ref = snapshot_ref(str(lesson.get("slug")), str(lesson.get("task")), str(lesson.get("id")))
    if try_git(top, ["rev-parse", "-q", "--verify", ref]).returncode != 0:
        # The ref is gone (pruned, or never fetched) but the commit is here: name it again.
        run_git(top, ["update-ref", ref, snapshot])
    args = ["bundle", "create", "-q", str(target.resolve()), ref]
    base = lesson.get("intHead")
    if isinstance(base, str) and base and base != snapshot and try_git(
            top, ["merge-base", "--is-ancestor", base, snapshot]).returncode == 0:
        args.append(f"^{base}")
    run_git(top, args)
    return ref
