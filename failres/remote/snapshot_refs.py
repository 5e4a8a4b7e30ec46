"""Snapshot refs between machines: which each side lacks, which clash, and taking the remote's in.

A snapshot is one failing state, named by its lesson; names never move once made, so a
sync only ever creates them, here and there.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2

from failres.remote.wire import tracking_ref

SNAPSHOT_PREFIX = "refs/failres/snapshots/"


def missing_snapshots(local: dict[str, pygit2.Oid], remote: dict[str, pygit2.Oid]) -> list[str]:
    """Local snapshot refs (by name under refs/failres/snapshots/) the remote does not have at all."""
    return sorted(name for name in local if name not in remote)


def clashing_snapshots(local: dict[str, pygit2.Oid], remote: dict[str, pygit2.Oid]) -> list[str]:
    """Snapshot names both sides hold with different commits: each side keeps its own.

    A snapshot is one failing state, named by its lesson; moving the name (even a
    fast-forward) would take another machine's snapshot away from its lesson.
    """
    return sorted(name for name, oid in local.items() if name in remote and remote[name] != oid)


def adopt_snapshots(repo: pygit2.Repository, remote: str) -> int:
    """Create local snapshot refs for the remote's that are missing here (names never clash).

    Only refs that name a commit: anything else under the remote's snapshots is not one.
    """
    import pygit2

    adopted = 0
    local = refs_under(repo, SNAPSHOT_PREFIX)
    for name, oid in refs_under(repo, tracking_ref(remote, SNAPSHOT_PREFIX)).items():
        if name in local or not isinstance(repo.get(oid), pygit2.Commit):
            continue
        try:
            _note_move(Path(repo.path), SNAPSHOT_PREFIX + name, None, str(oid))
            repo.create_reference(SNAPSHOT_PREFIX + name, oid, force=False,
                                  message=f"failres: sync snapshot from {remote}")
            adopted += 1
        except (pygit2.AlreadyExistsError, ValueError, pygit2.GitError):
            pass  # written meanwhile by this machine: ours stays
    return adopted


def refs_under(repo: pygit2.Repository, prefix: str) -> dict[str, pygit2.Oid]:
    out: dict[str, pygit2.Oid] = {}
    for name in repo.references:
        if name.startswith(prefix):
            out[name[len(prefix):]] = repo.references[name].target
    return out


def _note_move(git_dir: Path, ref: str, old: str | None, new: str | None) -> None:
    from failres.containment import moves

    moves.note(git_dir, ref, old, new)
