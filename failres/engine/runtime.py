"""What a run works with and what it gives back: the engine's outside world, outcomes."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from pathlib import Path

import pygit2

from lessons.frozen import record
from failres.config.model import Config
from failres.containment.interrupts import StopFlag
from failres.engine.progress import NullProgress, Progress
from failres.containment.tamper import OwnMoves
from failres.engine.taxonomy import UserRule
from lessons.redaction.redact import redact
from lessons.storage.store import Store
from lessons.failpoints import failpoint


class PublishRefused(Exception):
    """The remote refused a task's result for good while the task was still this runner's (a hook, a
    protected branch): the task is quarantined `publish-refused` with the remote's words."""


class ClaimSeam(Protocol):
    """What the loop asks of a run that shares its plan with other runners through a remote."""

    def stop_reason(self, slug: str, task: str) -> str | None:
        """`cancel` or `lost` once the task is no longer this runner's to work; None while it is."""

    def publish(self, slug: str, task: str, branch: str, commit: str) -> bool:
        """Push the task's commit (and the finished claim) by compare-and-swap; False when the task was
        taken from this runner; PublishRefused when the remote refused it for itself."""

    def start_point(self, slug: str, task: str) -> str | None:
        """The commit the task starts from when it is not the local integration head; None: that head."""


class PreflightLocks:
    """A lock per preflight key, made on first use."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def of(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())


@dataclass
class Engine:
    """What a run needs from the outside world, passed in so tests and the demo can vary it."""

    top: Path
    repo: pygit2.Repository
    config: Config
    store: Store
    progress: Progress = field(default_factory=NullProgress)
    sleep: Callable[[float], None] = time.sleep
    advisory: Callable[[str], Sequence] | None = None  # fail class -> past outcomes (lessons loop)
    rules_block: Callable[[], str] | None = None
    facts_block: Callable[[], str] | None = None
    # Told every task outcome (committed, quarantined, stopped): the validation ledger listens.
    on_outcome: Callable[[TaskOutcome], None] | None = None
    # What fills the four hooks above for an engine (the knowledge layer's `attach_knowledge`),
    # kept so that an engine made for another thread of a --jobs run gets its own.
    attach: Callable[[Engine], None] | None = None
    # Set by a signal (or a test): every running step returns early and the run stops.
    stop: StopFlag = field(default_factory=StopFlag)
    # Refs failres moved while seats ran, so the tamper check never takes them for a seat's.
    own_moves: OwnMoves = field(default_factory=OwnMoves)
    # Set by `run --remote` (failres.remote): whether this runner still holds each task, and the
    # push that publishes a commit; None for a run on this machine alone.
    claims: ClaimSeam | None = None
    # One lock per preflight key, shared by a --jobs run's threads (`fork_engine` copies the
    # engine, not this): tasks at the same key wait for the first one's verdict instead of
    # running the same suite at once (`engine.preflight_steps`).
    preflight_locks: PreflightLocks = field(default_factory=lambda: PreflightLocks())

    @property
    def git_dir(self) -> Path:
        return Path(self.repo.path)

    def worktree_root(self) -> Path:
        from failres.config.loading import worktrees_root
        from failres.gitops.location import locate_repo

        return worktrees_root(self.config, locate_repo(self.top))

    def make_workspace(self, slug: str, task: str, branch: str, start: str):
        """A fresh workspace for one task run (see `gitops.workspace`)."""
        from failres.gitops.workspace import Workspace

        made = Workspace.create(path=self.worktree_root() / slug / task, git_dir=self.git_dir,
                                state_dir=self.git_dir / "failres" / "workspaces" / slug / task,
                                branch=branch, base=start)
        failpoint("workspace-made")
        return made

    def user_rules(self) -> tuple[UserRule, ...]:
        return tuple(UserRule(r.fail_class, r.match, r.on, r.action) for r in self.config.taxonomy.rules)


@record
class TaskOutcome:
    slug: str
    task: str
    state: str
    fail_class: str | None = None
    message: str = ""
    commit: str | None = None
    skipped: bool = False
    decision: str | None = None  # the decision a quarantine raised, if any
    advice: tuple[str, ...] = ()  # a stop-loss stop: what would change the outcome of the next run
    seat: str | None = None  # the seat whose failure it was, where a seat failed


@record
class GateOutcome:
    passed: bool
    timed_out: bool
    exit_code: int | None
    output: str
    gate: str
    unavailable: str | None = None  # why the gate could not run at all (a configuration error)
    tampered: str = ""  # what the code under test changed of the person's while the gate ran (undone)
    refused: object = None  # the Failure that stopped the gate before it ran (an include refused), as it is

    @property
    def unavailable_message(self) -> str:
        return self.unavailable or f"gate {self.gate} cannot run"

    @property
    def summary(self) -> str:
        # Redacted before it is cut: half a token is still a leaked token.
        lines = [line.strip() for line in redact(self.output).splitlines() if line.strip()]
        last = verdict_line(lines)[:200] if lines else "no output"
        status = "timed out" if self.timed_out else f"exit {self.exit_code}"
        return f"{status}: {last}"

    @property
    def message(self) -> str:
        return f"gate {self.gate} {self.summary}\n{self.output}"


# A line that counts tests or failures: pytest's "2 failed, 11 passed", mocha's "1 failing",
# node's "# fail 1", uvu's "Passed: 43", jest's "Tests: 1 failed, 43 total".
_COUNTS = re.compile(r"(?:^|[\s#])(?:\d+\s+(?:failed|failing|failures?|errors?|passed|passing|skipped)\b|"
                     r"(?:fail(?:ed|ures?)?|errors?|pass(?:ed)?|skipped|total|tests?)\s*[:=]?\s*\d+)", re.IGNORECASE)


def verdict_line(lines: Sequence[str]) -> str:
    """The line of a gate's output that says how it went: the last, where it counts tests (pytest's
    summary); else the last block of lines that do, joined. uvu, under dequal's `npm test`, ends on
    "Duration: 11.44ms", and a quarantine once said no more than that (pure)."""
    if not lines or _COUNTS.search(lines[-1]):
        return lines[-1] if lines else ""
    end = next((i for i in range(len(lines) - 1, -1, -1) if _COUNTS.search(lines[i])), None)
    if end is None:
        return lines[-1]
    start = end
    while start > 0 and end - start < 3 and _COUNTS.search(lines[start - 1]):
        start -= 1
    return ", ".join(" ".join(line.split()) for line in lines[start:end + 1])
