"""The tamper check: what a seat must never change outside its workspace, and undoing it.

A seat works in a workspace with a git dir of its own, so no git command it runs
there reaches the person's repository. It can still write anywhere by absolute path.
Before every dispatch failres records what a seat must never change:

- every ref of the person's repository (branches, tags, the store, snapshots, HEAD);
- the repository's `config`, its hooks directory, its `info/` directory, and the
  person's global git configuration (failres itself runs git right after a dispatch;
  a planted `core.fsmonitor` there would run the seat's code in failres's place);
- the git dir's other state: its top-level files (`MERGE_HEAD`, `shallow`, ...),
  `objects/info/` (alternates, the commit-graph), reflogs, linked worktrees and an
  operation in progress (`rebase-merge/`, `sequencer/`), whose planted directories go;
- the person's checkout: its working state (tracked and untracked files as a tree)
  and its index.

After the dispatch, with every process of the seat gone, it compares. Anything that
changed is put back — refs by compare-and-swap, files byte for byte, planted files
removed, the checkout's changed paths restored — and every version the seat left is
kept under `<git dir>/failres/tamper/` (see `evidence`), so nothing is lost if the change
was, after all, the person's own work done while the seat ran. The caller quarantines the task as
`seat-tamper` and journals exactly what was changed and undone.

Changes failres makes itself meanwhile are not tamper: other tasks of a `--jobs` run
register the refs they move in `OwnMoves`, and every failres command of the person's
(`land`, `gc`, `sync`, `decide`) notes its moves before making them (`moves`). The
store is checked commit by commit: one that failres did not write is the seat's,
additions included, and its changes are reversed (`store_history`). A person's `land`
into the checked-out branch keeps its merge, its reflog and the files it changed.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import pygit2

from lessons.frozen import record
from failres.gitops.git import try_git
from failres import beneath
from failres.containment import checkout as checkout_guard
from failres.containment import gitconfig_files, linked, moves, objects, store_history
from failres.containment.checkout import CheckoutState
from failres.containment.evidence import Evidence

# Directories of the git dir whose files git reads as the repository's state, guarded
# whole: excludes, alternates and the commit-graph, an operation in progress, linked
# worktrees, reflogs. failres's own reflogs move with its own refs.
_GUARDED_DIRS = ("info", "objects/info", "rebase-merge", "rebase-apply", "sequencer", "worktrees", "logs")
_OWN_LOGS = frozenset({"logs/refs/failres", "logs/refs/heads/failres"})
# Those whose mere presence changes what git does (a rebase in progress): removed when planted.
_PLANTABLE = ("rebase-merge", "rebase-apply", "sequencer", "worktrees")
# Top-level files guarded elsewhere: the index with the checkout, refs by value.
_GIT_DIR_ELSEWHERE = frozenset({"index", "HEAD", "packed-refs", "config", "config.worktree"})
# What failres's own fetches and joins write while other tasks' seats run (`sync`, `run --remote`):
# copies of what a remote holds, re-read from the remote before every use, and the join's scratch ref.
_FAILRES_CACHE_REFS = re.compile(r"refs/remotes/[^/]+/failres(-claims|-view)?/|refs/failres-join/")
_OWN_CACHE_LOGS = re.compile(r"logs/refs/remotes/[^/]+/failres(-claims|-view)?$|logs/refs/failres-join$")
# Hooks and info files are small; a file beyond this is compared by size and time only.
_MAX_GUARDED_FILE = 4 * 1024 * 1024
_NO_HOOKS = ("core.hooksPath=/dev/null", "core.fsmonitor=false")


class OwnMoves:
    """Refs failres itself moved while seats ran (thread-safe): never mistaken for tamper."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._moves: dict[str, set[str | None]] = {}

    def note(self, ref: str, target: str | None) -> None:
        with self._lock:
            self._moves.setdefault(ref, set()).add(target)

    def allows(self, ref: str, target: str | None) -> bool:
        with self._lock:
            return target in self._moves.get(ref, ())

    def targets(self, ref: str) -> set[str | None]:
        with self._lock:
            return set(self._moves.get(ref, ()))


@record
class RepoState:
    """What a seat must not change, as it was at one moment."""

    refs: Mapping[str, str]  # ref name -> oid, or "ref: <target>" for a symbolic ref
    files: Mapping[str, bytes | None]  # absolute path -> bytes (None: too large to keep)
    file_sizes: Mapping[str, tuple[int, int]]  # absolute path -> (size, mtime_ns), for large ones
    checkout: CheckoutState | None  # the person's checkout; None when the repository has no work tree
    dirs: frozenset[str] = frozenset()  # which of the plantable git-dir directories existed
    linked: Mapping[str, CheckoutState] = field(default_factory=dict)  # linked worktree's git dir -> its checkout


@dataclass
class Tamper:
    """What changed, and what undoing it did, one line per item (the journal's `what`)."""

    what: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.what)


class Guard:
    """Records and compares the person's repository around one dispatch."""

    def __init__(self, top: Path, git_dir: Path, *, store_ref: str, own: OwnMoves) -> None:
        self.top = top
        self.git_dir = git_dir
        self.store_ref = store_ref
        self.own = own
        # Where hooks live, as the configuration says before the dispatch: a seat that
        # rewrites core.hooksPath has its config put back, and the old directory checked.
        self.hooks_dir = self._hooks_dir()
        moves.install()

    # ── recording ────────────────────────────────────────────────────────

    def capture(self) -> RepoState:
        # The moves window and the object watch start here, not in __init__: `undo` compares
        # with what `capture` recorded, so only the capture's own moment counts.
        self._window = moves.Window(self.git_dir)
        self._objects = objects.ObjectWatch(self.git_dir)
        files, sizes = self._guarded_files()
        dirs = frozenset(d for d in _PLANTABLE if os.path.lexists(self.git_dir / d))
        return RepoState(self._refs(), files, sizes, self._checkout(), dirs, linked.capture(self.git_dir))

    def _refs(self) -> dict[str, str]:
        repo = pygit2.Repository(str(self.git_dir))
        found: dict[str, str] = {}
        for name in repo.references:
            try:
                ref = repo.references[name]
            except (KeyError, pygit2.GitError, ValueError):
                continue
            found[name] = _ref_value(ref)
        try:
            found["HEAD"] = _ref_value(repo.references["HEAD"])
        except (KeyError, pygit2.GitError):
            pass
        return found

    def guarded_paths(self) -> list[Path]:
        """Every file a seat must not change, as it is now (planted files show up next time)."""
        configs = gitconfig_files.config_files(self.git_dir)
        paths = [*configs, *gitconfig_files.excludes_and_attributes(configs),
                 *gitconfig_files.module_files(self.git_dir)]
        paths += self._git_dir_files()
        for directory in (self.hooks_dir, *(self.git_dir / d for d in _GUARDED_DIRS)):
            if directory.is_dir():
                for root, dirs, names in os.walk(directory):
                    inside = Path(root).is_relative_to(self.git_dir)
                    relative = Path(root).relative_to(self.git_dir).as_posix() if inside else ""
                    dirs[:] = [d for d in dirs if f"{relative}/{d}" not in _OWN_LOGS
                               and not _OWN_CACHE_LOGS.match(f"{relative}/{d}")]
                    paths += [Path(root) / name for name in names]
        return list(dict.fromkeys(paths))

    def _git_dir_files(self) -> list[Path]:
        """The files at the top of the git dir that git reads as state: MERGE_HEAD, shallow, ..."""
        try:
            entries = list(os.scandir(self.git_dir))
        except OSError:
            return []
        return [Path(e.path) for e in entries
                if not e.is_dir(follow_symlinks=False) and e.name not in _GIT_DIR_ELSEWHERE
                and not e.name.endswith(".lock")]

    def planted_dirs(self, before: RepoState) -> list[Path]:
        """Directories of the git dir that were not there before (a rebase in progress, ...)."""
        return [self.git_dir / d for d in _PLANTABLE if d not in before.dirs and os.path.lexists(self.git_dir / d)]

    def _guarded_files(self) -> tuple[dict[str, bytes | None], dict[str, tuple[int, int]]]:
        files: dict[str, bytes | None] = {}
        sizes: dict[str, tuple[int, int]] = {}
        for path in self.guarded_paths():
            try:
                info = path.lstat()
                if info.st_size > _MAX_GUARDED_FILE:
                    files[str(path)] = None
                    sizes[str(path)] = (info.st_size, info.st_mtime_ns)
                elif path.is_symlink():
                    files[str(path)] = b"symlink:" + os.fsencode(os.readlink(path))
                else:
                    files[str(path)] = path.read_bytes()
            except OSError:
                continue
        return files, sizes

    def _hooks_dir(self) -> Path:
        try:
            value = pygit2.Repository(str(self.git_dir)).config["core.hooksPath"]
        except (KeyError, pygit2.GitError, ValueError):
            value = ""
        if value:
            path = Path(os.path.expanduser(value))
            return path if path.is_absolute() else self.top / path
        return self.git_dir / "hooks"

    def _checkout(self) -> CheckoutState | None:
        if not (self.top / ".git").exists():
            return None
        return checkout_guard.capture(self.top, self.git_dir)

    # ── comparing and undoing ────────────────────────────────────────────

    def undo(self, before: RepoState, *, slug: str, task: str) -> Tamper:
        """Compare with `before`, put back every difference, and say what it was."""
        tamper = Tamper()
        evidence = Evidence(self.git_dir, slug, task)
        tamper.what += self._objects.check(evidence.keep)
        moved = self._moved_by_failres(before)
        # Files first: git reads the config and hooks that the rest of the undo runs with.
        self._undo_files(before, tamper, evidence, skip=_logs_of(self.git_dir, moved, before.refs.get("HEAD")))
        for planted in self.planted_dirs(before):
            _remove(planted)
            tamper.what.append(f"{self._shown(planted)} was planted: removed")
        self._undo_refs(before, tamper)
        head = (before.refs.get("HEAD") or "").removeprefix("ref: ")
        if head in moved and before.checkout is not None:
            # A person's `land` merged into the checked-out branch meanwhile: its files are
            # what that merge made them (`checkout.after_merge`), the rest as before.
            before = replace(before, checkout=checkout_guard.after_merge(
                self.top, self.git_dir, before.checkout, *moved[head]))
        self._undo_checkout(before, tamper, evidence)
        if before.linked:
            tamper.what += linked.undo(self.git_dir, before.linked, evidence, self._shown)
        return tamper

    def _moved_by_failres(self, before: RepoState) -> dict[str, tuple[str, str]]:
        """Refs a failres command of the person's moved meanwhile (not this run): ref -> (old, new)."""
        now = self._refs()
        return {name: (before.refs[name], now[name]) for name in before.refs
                if name in now and before.refs[name] != now[name] and not now[name].startswith("ref:")
                and not before.refs[name].startswith("ref:") and name != self.store_ref
                and self._window.chain(name, before.refs[name], now[name])}

    def _undo_files(self, before: RepoState, tamper: Tamper, evidence: Evidence, *, skip: frozenset[str]) -> None:
        now_files, now_sizes = self._guarded_files()
        for name in sorted(set(before.files) | set(now_files)):
            if name in skip:
                continue
            old, new = before.files.get(name, _ABSENT), now_files.get(name, _ABSENT)
            if old is None or new is None:
                if before.file_sizes.get(name) != now_sizes.get(name):
                    tamper.what.append(f"{self._shown(name)} changed (too large to restore)")
                continue
            if old == new:
                continue
            path = Path(name)
            if new is not _ABSENT:
                problem = evidence.keep(path, _evidence_name(path, self.git_dir))
                if problem is not None:
                    tamper.what.append(problem)
            try:
                if old is _ABSENT:
                    _remove(path)
                    tamper.what.append(f"{self._shown(name)} was planted: removed (kept in "
                                       f"{self._shown(evidence.path)})")
                else:
                    _write_back(path, old)
                    verb = "deleted" if new is _ABSENT else "changed"
                    tamper.what.append(f"{self._shown(name)} was {verb}: restored")
            except OSError as error:
                tamper.what.append(f"{self._shown(name)} was changed and could not be restored: {error.strerror}")

    def _undo_refs(self, before: RepoState, tamper: Tamper) -> None:
        now = self._refs()
        for name in sorted(set(before.refs) | set(now)):
            old, new = before.refs.get(name), now.get(name)
            if old == new or self._expected(name, old, new):
                continue
            if name == self.store_ref and self._store_moved_forward(old, new):
                own = self._window.own_targets(name) | set(self.own.targets(name))
                tamper.what.append(store_history.put_store_back(self.git_dir, name, old, new, own))  # type: ignore[arg-type]
                continue
            problem = self._put_ref_back(name, old, new)
            change = _describe_ref_change(name, old, new)
            tamper.what.append(f"{change}: {'put back' if problem is None else 'could not be put back: ' + problem}")

    def _expected(self, name: str, old: str | None, new: str | None) -> bool:
        """Did failres move `name` from `old` to `new` itself: this run, or a person's failres command meanwhile?

        The store only by a chain of commits failres wrote, each one: a record a seat
        added with plain git is tamper even when failres appended after it.
        """
        if name == self.store_ref:
            return self._window.chain(name, old, new)
        return self.own.allows(name, new) or bool(_FAILRES_CACHE_REFS.match(name)) or self._window.chain(name, old, new)

    def _store_moved_forward(self, old: str | None, new: str | None) -> bool:
        if not old or not new or old.startswith("ref:") or new.startswith("ref:"):
            return False
        try:
            return pygit2.Repository(str(self.git_dir)).descendant_of(new, old)
        except (pygit2.GitError, ValueError, KeyError):
            return False

    def _put_ref_back(self, name: str, old: str | None, new: str | None) -> str | None:
        if old is not None and old.startswith("ref: "):
            completed = try_git(self.top, ["symbolic-ref", name, old.removeprefix("ref: ")],
                                env={"GIT_DIR": str(self.git_dir)}, config=_NO_HOOKS)
        else:
            expected = new if new is not None and not new.startswith("ref: ") else "0" * 40
            if new is not None and new.startswith("ref: "):
                try_git(self.top, ["symbolic-ref", "--delete", name], env={"GIT_DIR": str(self.git_dir)},
                        config=_NO_HOOKS)
                expected = "0" * 40
            args = ["update-ref", "-d", name, expected] if old is None else ["update-ref", name, old, expected]
            completed = try_git(self.top, args, env={"GIT_DIR": str(self.git_dir)}, config=_NO_HOOKS)
        if completed.returncode != 0:
            lines = completed.stderr.decode("utf-8", "replace").strip().splitlines()
            return lines[-1] if lines else f"exit {completed.returncode}"
        return None

    def _undo_checkout(self, before: RepoState, tamper: Tamper, evidence: Evidence) -> None:
        if before.checkout is None:
            return
        after = self._checkout()
        if after is None or not checkout_guard.differs(before.checkout, after):
            return
        restored, failed, unkept = checkout_guard.restore(self.top, self.git_dir, before.checkout, after, evidence)
        tamper.what += unkept
        if restored:
            shown = ", ".join(restored[:10]) + (f" and {len(restored) - 10} more" if len(restored) > 10 else "")
            tamper.what.append(f"the checkout changed at {shown}: restored (the seat's versions are kept in "
                               f"{self._shown(evidence.path / 'checkout')})")
        if failed:
            tamper.what.append(f"the checkout changed at {', '.join(failed[:10])}: could not be restored")
        if before.checkout.index_print != after.index_print:
            tamper.what.append("the checkout's index changed: restored")

    def _shown(self, path: str | Path) -> str:
        text = str(path)
        for base, label in ((str(self.git_dir), "$GIT_DIR"), (str(Path.home()), "~")):
            if text.startswith(base + os.sep):
                return label + text[len(base):]
        return text


_ABSENT = object()


def _ref_value(ref: pygit2.Reference) -> str:
    if ref.type == pygit2.enums.ReferenceType.SYMBOLIC:
        return f"ref: {ref.target}"
    return str(ref.target)


def _logs_of(git_dir: Path, moved: Mapping[str, tuple[str, str]], head: str | None) -> frozenset[str]:
    """The reflogs and merge leftovers that failres's own moves of `moved` wrote: not the seat's."""
    found = {str(git_dir / "logs" / ref) for ref in moved}
    if head and head.removeprefix("ref: ") in moved:
        found |= {str(git_dir / "logs" / "HEAD"), str(git_dir / "ORIG_HEAD"), str(git_dir / "AUTO_MERGE")}
    return frozenset(found)


def _describe_ref_change(name: str, old: str | None, new: str | None) -> str:
    def short(value: str | None) -> str:
        if value is None:
            return "(none)"
        return value if value.startswith("ref:") else value[:12]

    if old is None:
        return f"{name} was created at {short(new)}"
    if new is None:
        return f"{name} was deleted (was {short(old)})"
    return f"{name} was moved from {short(old)} to {short(new)}"


def _write_back(path: Path, data: bytes) -> None:
    """Put the kept bytes (or link) back at `path`, replacing whatever entry the seat left there.

    Through a fresh, randomly named file renamed into place: a fixed temporary name
    beside the person's config is one a seat could plant as a link to elsewhere.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if data.startswith(b"symlink:"):
        if path.is_symlink() or path.is_file():
            path.unlink()
        os.symlink(data.removeprefix(b"symlink:"), path)
        return
    try:
        info = path.lstat()
        mode = info.st_mode & 0o7777 if stat.S_ISREG(info.st_mode) else 0o644
    except OSError:
        mode = 0o644
    beneath.replace_file(path.parent, path.name, data, mode=mode)


def _remove(path: Path) -> None:
    from failres.gitops.workspace import remove_tree

    remove_tree(path)


def _evidence_name(path: Path, git_dir: Path) -> Path:
    """Where a guarded file's seat version goes inside the evidence: its place in the git dir."""
    try:
        return path.relative_to(git_dir)
    except ValueError:
        return Path("outside") / str(path).lstrip(os.sep)
