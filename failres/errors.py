"""failres's exception family and the exit code each one maps to.

The CLI boundary (`failres.cli.boundary`) is the only place that turns these into
exit codes and one-line messages; everything else raises.
"""

from __future__ import annotations

from lessons.errors import InvalidInput, LessonsError, NotFound, StoreBusy

EXIT_OK = 0
EXIT_NOT_GREEN = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
# The reader of the output went away (`| head`): quiet, and the status git gives, 128 + SIGPIPE.
EXIT_CLOSED_PIPE = 141


class FailresError(Exception):
    """Base of every error failres raises on purpose."""

    exit_code = EXIT_BAD_INPUT
    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class UsageError(FailresError):
    """Bad input from the person: arguments, files, answers."""


class ConfigError(UsageError):
    """`.failres.toml` or a plan is malformed; the message names file and key."""


class NotARepository(UsageError):
    """failres was called outside a git repository."""


class GitError(FailresError):
    """A git operation failed in a way the person can act on (dirty tree, conflict)."""


class Busy(FailresError):
    """The store kept losing a race against other writers; nothing was lost."""

    exit_code = EXIT_NOT_GREEN


def exit_code_for(error: BaseException) -> int:
    """The exit code an error maps to; anything unforeseen is internal (3)."""
    if isinstance(error, FailresError):
        return error.exit_code
    if isinstance(error, StoreBusy):
        return EXIT_NOT_GREEN
    if isinstance(error, (InvalidInput, NotFound)):
        return EXIT_BAD_INPUT
    if isinstance(error, LessonsError):
        return EXIT_BAD_INPUT
    return EXIT_INTERNAL
