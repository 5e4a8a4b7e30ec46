"""`git failres rules export`: the rules in force, in the file the person's own agent reads.

What failres learns otherwise reaches only its own seats; the agents a person runs by
hand read `AGENTS.md`, `CLAUDE.md` or aider's `CONVENTIONS.md`. The export rewrites
failres's managed block of that file (`lessons.rulebook.managed_block`) as a change in
the working tree: the person reviews it with `git diff` and commits it; failres never
commits it. Which file: `--to`, else `[learning] export`, else the one the implementer's
agent reads, else `AGENTS.md`, which most agents read.

The file is the person's: one that resolves outside the repository (a link to a
shared dotfile), is not a regular file, or has markers failres cannot pair is refused
before anything is written, and the write is a temporary file renamed over it, so a
reader never sees half a file and a crash leaves the old one.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from failres.config.model import Config
from failres.errors import UsageError
from lessons.errors import InvalidInput
from lessons.rulebook.managed_block import splice_block
from lessons.rulebook.rules import Budget, rules_in_force
from lessons.storage.store import Store

DEFAULT_EXPORT = "AGENTS.md"
# The file each agent CLI reads its project instructions from, by the program's name.
AGENT_FILES = {"claude": "CLAUDE.md", "codex": "AGENTS.md", "aider": "CONVENTIONS.md"}
_MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ExportPlan:
    """What an export would write: computed, checked, nothing written yet."""

    path: Path  # where the bytes go (a link inside the repository is followed to its file)
    shown: str  # the path as the person named it, from the repository top
    chosen_by: str  # "--to", "learning.export", "seats.implementer" or "default"
    before: bytes | None
    after: bytes
    rules: int
    block_hash: str


@dataclass(frozen=True)
class ExportResult:
    plan: ExportPlan
    changed: bool

    def document(self) -> dict:
        """As `rules export --json` and `proposals accept --json` print it (docs/json.md)."""
        p = self.plan
        return {"path": p.shown, "chosenBy": p.chosen_by, "changed": self.changed,
                "created": self.changed and p.before is None, "rules": p.rules, "blockHash": p.block_hash}


def export_file_for(config: Config) -> tuple[str, str]:
    """(the file name, what chose it) when no `--to` is given."""
    if config.learning.export:
        return config.learning.export, "learning.export"
    binding = config.bindings.get(config.seats.implementer) if config.seats.implementer else None
    if binding is not None and binding.command:
        agent = Path(binding.command[0]).name
        if agent in AGENT_FILES:
            return AGENT_FILES[agent], "seats.implementer"
    return DEFAULT_EXPORT, "default"


def _inside(path: Path, top: Path) -> bool:
    return path == top or path.is_relative_to(top)


def target_path(top: Path, named: Path, cwd: Path) -> tuple[Path, str]:
    """(the file to write, its path from the top); UsageError for a place failres must not write."""
    top = top.resolve()
    given = named if named.is_absolute() else cwd / named
    lexical = Path(os.path.normpath(given))
    if not _inside(lexical, top):
        msg = f"{named} is outside the repository ({top})"
        raise UsageError(msg, hint="the rules go into a file of this repository's working tree")
    shown = lexical.relative_to(top).as_posix()
    resolved = lexical.resolve()
    if not _inside(resolved, top):
        msg = f"{shown} is a symbolic link out of the repository (to {resolved}); not written"
        raise UsageError(msg, hint="point --to at a file of this repository, or replace the link by a file")
    git_dir = top / ".git"
    if resolved == git_dir or resolved.is_relative_to(git_dir):
        msg = f"{shown} is inside the git directory; not written"
        raise UsageError(msg)
    if lexical.is_symlink() and not resolved.exists():
        msg = f"{shown} is a symbolic link to nothing ({resolved}); not written"
        raise UsageError(msg)
    return resolved, shown


def _read_existing(path: Path, shown: str) -> bytes | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        if not path.parent.is_dir():
            msg = f"{shown}: its directory does not exist; not written"
            raise UsageError(msg) from None
        return None
    if not stat.S_ISREG(info.st_mode):
        msg = f"{shown} is not a regular file; not written"
        raise UsageError(msg)
    if info.st_size > _MAX_BYTES:
        msg = f"{shown} is larger than {_MAX_BYTES // (1024 * 1024)} MiB; not written"
        raise UsageError(msg)
    return path.read_bytes()


def plan_export(store: Store, config: Config, top: Path, to: Path | None = None,
                cwd: Path | None = None) -> ExportPlan:
    """The export's bytes for the rules in force now; UsageError, nothing written, when refused."""
    name, chosen_by = (str(to), "--to") if to is not None else export_file_for(config)
    path, shown = target_path(top, Path(name), (cwd or Path.cwd()) if to is not None else top.resolve())
    before = _read_existing(path, shown)
    # The budget as the seats' prompts have it (failres.knowledge.learning.budget_for): the
    # person's agent reads exactly the block failres's own seats read.
    budget = Budget(max_rules=config.learning.max_rules, max_chars=config.learning.max_chars)
    force = rules_in_force(store, list(config.learning.domains) or None, budget=budget)
    try:
        after = splice_block(before, force.block, shown)
    except InvalidInput as refused:
        raise UsageError(str(refused), hint="leave one begin and one end marker, or remove both; "
                                            "then export again") from None
    rules = sum(1 for line in force.block.splitlines() if line.startswith("- "))
    return ExportPlan(path, shown, chosen_by, before, after, rules, force.block_hash)


def write_export(plan: ExportPlan) -> ExportResult:
    """Write the plan's bytes (temporary file, then rename); nothing when they are already there."""
    if plan.before is not None and plan.before == plan.after:
        return ExportResult(plan, changed=False)
    if plan.before is None and plan.rules == 0:
        return ExportResult(plan, changed=False)  # no rules and no file: an empty block is only noise
    tmp = plan.path.with_name(f".{plan.path.name}.failres-{os.getpid()}.tmp")
    mode = stat.S_IMODE(plan.path.stat().st_mode) if plan.before is not None else 0o666 & ~_umask()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(plan.after)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, plan.path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return ExportResult(plan, changed=True)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def export_rules(store: Store, config: Config, top: Path, to: Path | None = None,
                 cwd: Path | None = None) -> ExportResult:
    return write_export(plan_export(store, config, top, to, cwd))
