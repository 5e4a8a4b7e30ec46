"""The small exception family of the knowledge store.

`lessons` is a library: it raises, it never prints or exits. A caller (failres's
CLI is one) maps these to exit codes at one boundary.
"""

from __future__ import annotations


class LessonsError(Exception):
    """Base of every error the store raises on purpose."""

    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class InvalidInput(LessonsError):
    """Input from a person or another harness is malformed; nothing was written."""


class NotFound(LessonsError):
    """A record, commit or ref named by the caller does not exist."""


class StoreBusy(LessonsError):
    """A write kept losing the compare-and-swap race; nothing was lost, retry later."""


class CorruptRecord(LessonsError):
    """One record file could not be parsed; readers skip it and report the path."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class StoreMissing(LessonsError):
    """The store ref does not exist (never created, or gone); nothing was written."""


class StoreDamaged(LessonsError):
    """The store ref, or a tree offered as a store, is not what the layout says; refused by name."""
