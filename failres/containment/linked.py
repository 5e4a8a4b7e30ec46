"""The person's linked worktrees (`git worktree add`): their checkouts are guarded like the main one.

A seat finds them through `<git dir>/worktrees/*/gitdir` and can edit their files by
absolute path; the tamper check records each one's checkout with the main checkout's
record (`checkout`) and puts back what changed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from failres.containment import checkout as checkout_guard
from failres.containment.checkout import CheckoutState
from failres.containment.evidence import Evidence


def worktrees(git_dir: Path) -> list[tuple[Path, Path]]:
    """(git dir, checkout top) of each linked worktree, as `worktrees/*/gitdir` recorded it."""
    found = []
    try:
        entries = sorted(os.scandir(git_dir / "worktrees"), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        try:
            pointer = Path(entry.path, "gitdir").read_text(encoding="utf-8").strip()
        except (OSError, ValueError):
            continue
        top = Path(pointer).parent
        if pointer and top.is_dir():
            found.append((Path(entry.path), top))
    return found


def capture(git_dir: Path) -> dict[str, CheckoutState]:
    """Each linked worktree's checkout, by its git dir."""
    found: dict[str, CheckoutState] = {}
    for own_git_dir, top in worktrees(git_dir):
        try:
            found[str(own_git_dir)] = checkout_guard.capture(top, own_git_dir)
        except Exception:  # noqa: BLE001 - a worktree git cannot read (moved, pruned) has no checkout to guard
            continue
    return found


def undo(git_dir: Path, before: Mapping[str, CheckoutState], evidence: Evidence,
         shown: Callable[[Path], str]) -> list[str]:
    """Put back each linked worktree's changed paths; one line per worktree for the journal."""
    what: list[str] = []
    for own_git_dir, top in worktrees(git_dir):
        was = before.get(str(own_git_dir))
        if was is None:
            continue
        try:
            now = checkout_guard.capture(top, own_git_dir)
        except Exception:  # noqa: BLE001 - its git dir is guarded as files; nothing more to compare
            continue
        if not checkout_guard.differs(was, now):
            continue
        restored, failed, unkept = checkout_guard.restore(top, own_git_dir, was, now, evidence)
        what += unkept
        if restored:
            what.append(f"the linked worktree {shown(top)} changed at {', '.join(restored[:10])}: restored")
        if failed:
            what.append(f"the linked worktree {shown(top)} changed at {', '.join(failed[:10])}: could not be restored")
    return what
