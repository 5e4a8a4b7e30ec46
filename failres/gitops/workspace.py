"""A seat's workspace: a directory outside the person's repository, with a git dir of its own.

A seat is code we do not control, and any git command it runs acts on the git dir it
finds. So the workspace has its *own* `.git` — a branch `failres/<slug>/<task>` at the
task's start, an index, and objects borrowed read-only from the person's repository
through `objects/info/alternates` — and nothing a seat does in git there (checkout,
update-ref, config, hooks, skip-worktree bits, `info/exclude`) reaches the person's
refs, store, config, hooks or index.

failres never trusts that `.git`: it never runs git *in* it. Every read and write of
its own (what changed, the task's tree, putting the files back) runs against the
person's git dir with the workspace as work tree and a *private index* that lives
outside the workspace (`<git dir>/failres/workspaces/<slug>/<task>/index`). failres
keeps that index's bytes in memory and writes them back before every read, so a seat
that found it and forged its stat data changes nothing. It writes them through
`beneath`, never through a link: a seat that replaced that directory with a link to
the person's `.git` would otherwise have failres's git write the person's index. Objects failres hashes go
into the task's own object directory beside that index (`task_objects`), with the person's database
as an alternate; only what a task commit or a snapshot names enters the person's.

`purify` puts the files back to exactly one tree: tracked files through the private
index, and every untracked or ignored file removed except the paths a gate declares
it needs (`keep`). The seat's `.git` is rebuilt from scratch at the same time, so
each dispatch starts with a clean view: HEAD on the task branch at the task's start,
and the task's progress so far as plain working-tree changes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import pygit2

from failres import beneath
from failres.errors import GitError
from failres.gitops.git import run_git
from failres.gitops.status import STATUS_ARGS, StatusReport, parse_status
from failres.gitops.odd_scan import Scanned, full_scan, odd_walk
from failres.gitops.snapshot_objects import promote_redacted
from failres.gitops.task_objects import TaskObjects
from failres.gitops.verify import ObjectsPoisoned, verify_objects
from failres.gitops.workspace_files import (
    WORKSPACE_DESCRIPTION,
    claim_workspace_path,
    default_root,
    identity,
    kept,
    leads_into,
    side_by_side,
    remove_nested_git_dirs,
    remove_tree,
    restore_permissions,
    seat_config,
    settled_index_time,
    shown_name,
    TRUSTED_READ,
    unlink_inside,
)

__all__ = ["Checked", "ObjectsPoisoned", "Workspace", "WorkspaceReplaced", "claim_workspace_path", "default_root",
           "remove_tree", "shown_name"]

REGISTRY = "failres/workspaces"
PARALLEL_CHECKOUT = ("-c", "checkout.workers=0")  # below one: as many workers as the machine has cores


@dataclass(frozen=True)
class Checked:
    """What the seat changed, read from the files after every process of the seat is gone."""

    paths: tuple[str, ...]  # every changed path, sorted; undecodable names escaped
    undecodable: tuple[str, ...]  # names that are not UTF-8, as shown (escaped)
    symlinks: dict[str, str]  # changed paths that are symlinks -> their target
    raw: dict[str, str] = field(default_factory=dict)  # shown name -> the name on disk, where they differ
    odd: dict[str, str] = field(default_factory=dict)  # path -> what git cannot record there (a FIFO, a repository)


class WorkspaceReplaced(GitError):
    """The workspace directory is no longer the one failres made: a seat moved it away or
    put a symlink (to the person's checkout, say) in its place or on the way to it."""


class Workspace:
    """One task's workspace and failres's private view of it.

    Every method that reads, cleans or removes the files first checks that the
    workspace is still the directory failres made (same real path, same inode), so a
    seat that swapped it for a symlink to the person's checkout gets nothing there
    read, cleaned or deleted.
    """

    def __init__(self, path: Path, git_dir: Path, state_dir: Path, branch: str, base: str) -> None:
        self.path = path
        self.git_dir = git_dir
        self.state_dir = state_dir  # inside the person's git dir: never handed to a seat
        self.branch = branch
        self.base = base
        self.tree = ""  # the tree the files were last put back to
        self.base_tree = ""  # the start commit's tree
        self._index_bytes = b""
        self._index_mtime_ns = 0
        self._base_index_bytes = b""
        self._base_index_mtime_ns = 0
        self._seat_config = ""
        self.pristine = False  # the files are exactly `tree` and no seat or gate has run since
        self.pristine_includes = False  # the included files are the person's copies (see `workspace_include`)
        self._no_nested = False  # `check` found no nested `.git`, and nothing has run here since
        self._scanned: Scanned | None = None  # the directories as the last full walk found them (`odd_scan`)
        self._identity: tuple[str, int, int] | None = None  # set once the directory exists
        self.objects = TaskObjects(git_dir, state_dir / "objects")  # what failres hashes here, until committed

    # ── paths ────────────────────────────────────────────────────────────

    @property
    def index(self) -> Path:
        return self.state_dir / "index"

    def _env(self, index: Path | None = None) -> dict[str, str]:
        return {
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.path),
            "GIT_INDEX_FILE": str(index or self.index),
            # Paths failres passes are file names, never patterns.
            "GIT_LITERAL_PATHSPECS": "1",
        }

    def git(self, args: Sequence[str], *, index: Path | None = None, stdin: bytes | None = None,
            objects: Path | None = None) -> bytes:
        """git on the person's git dir and the workspace; objects go to the task's directory (or `objects`)."""
        self._state("objects")  # made, and checked to be no link a seat planted, before git writes there
        env = self._env(index) | self.objects.env(into=objects)
        return run_git(self.path, args, env=env, stdin=stdin, config=TRUSTED_READ)

    # ── creating and removing ────────────────────────────────────────────

    @classmethod
    def create(cls, *, path: Path, git_dir: Path, state_dir: Path, branch: str, base: str) -> Workspace:
        """A fresh workspace at `path` with the files of commit `base` and the seat's own git dir."""
        path = Path(os.path.abspath(path))
        claim_workspace_path(path, git_dir, state_dir)
        path.mkdir(parents=True, exist_ok=True)
        workspace = cls(path, git_dir, state_dir, branch, base)
        workspace._identity = identity(path)
        beneath.write_file(git_dir, workspace._state("path"), (str(path) + "\n").encode())
        beneath.remove_file(git_dir, workspace._state("index"))
        tree = str(pygit2.Repository(str(git_dir))[pygit2.Oid(hex=base)].peel(pygit2.Tree).id)
        # One checkout (git's parallel one), through the private index, which so records
        # every file's stat data: later reads re-hash only what a seat touched.
        workspace.git([*PARALLEL_CHECKOUT, "read-tree", "--reset", "-u", tree])
        workspace.tree = tree
        workspace.base_tree = tree
        workspace._remember_private_index()
        workspace._base_index_bytes = workspace._index_bytes
        workspace._base_index_mtime_ns = workspace._index_mtime_ns
        workspace._seat_config = seat_config(git_dir)
        workspace.reset_seat_git()
        _, workspace._scanned = full_scan(path)  # a checkout holds nothing odd; its directories are remembered
        workspace.pristine = True
        return workspace

    def replaced(self) -> str | None:
        """What became of the workspace directory, when it is no longer the one failres made."""
        try:
            now = identity(self.path)
        except OSError:
            return f"the workspace {self.path} was removed"
        if self._identity is not None and now != self._identity:
            if self.path.is_symlink():
                return f"the workspace {self.path} was replaced by a symlink to {now[0]}"
            if now[0] != self._identity[0]:
                return f"the way to the workspace {self.path} was replaced: it now leads to {now[0]}"
            return f"the workspace {self.path} was replaced by another directory"
        inside = leads_into(self.path, self._guarded())
        if inside is not None:
            return f"the workspace {self.path} leads into {inside}"
        return None

    def _guarded(self) -> tuple[Path, ...]:
        return (self.git_dir, self.git_dir.parent) if str(self.git_dir) not in ("", ".") else ()

    def _require_intact(self) -> None:
        problem = self.replaced()
        if problem is not None:
            raise WorkspaceReplaced(problem, hint="nothing there was read, cleaned or removed")

    def remove(self) -> None:
        """Delete the workspace's files and failres's state for it.

        A workspace a seat replaced is not followed: a symlink in its place is removed
        (never what it points to); anything else that is not failres's directory stays.
        """
        if self.path.is_symlink():
            self.path.unlink()
        elif self.replaced() is None:
            remove_tree(self.path)
        for name in ("index", "index.lock", "scratch", "objects", "path", "left"):
            target = self.state_dir / name
            if target.is_dir():
                remove_tree(target)
            else:
                target.unlink(missing_ok=True)

    # ── the seat's own git dir ───────────────────────────────────────────

    def reset_seat_git(self) -> None:
        """Rebuild `<workspace>/.git` from nothing: the task branch at the start, the start's index.

        Written as plain files rather than with git, so nothing the seat left in the
        old one (a config, a hook, a symlink to elsewhere) is read or followed.
        """
        self._require_intact()
        dot_git = self.path / ".git"
        remove_tree(dot_git)
        for directory in ("objects/info", "objects/pack", "refs/tags", "refs/heads"):
            (dot_git / directory).mkdir(parents=True, exist_ok=True)
        ref = self.branch if self.branch.startswith("refs/") else f"refs/heads/{self.branch}"
        (dot_git / "HEAD").write_text(f"ref: {ref}\n", encoding="utf-8")
        ref_file = dot_git / ref
        ref_file.parent.mkdir(parents=True, exist_ok=True)
        ref_file.write_text(self.base + "\n", encoding="utf-8")
        (dot_git / "objects" / "info" / "alternates").write_text(str(self.git_dir / "objects") + "\n",
                                                                  encoding="utf-8")
        (dot_git / "config").write_text(self._seat_config or seat_config(self.git_dir), encoding="utf-8")
        (dot_git / "description").write_text(WORKSPACE_DESCRIPTION, encoding="utf-8")
        (dot_git / "index").write_bytes(self._base_index_bytes)
        # The start's own time, so the seat's git does not trust stale stat data either.
        os.utime(dot_git / "index", ns=(self._base_index_mtime_ns, self._base_index_mtime_ns))

    def handed_over(self) -> None:
        """A seat or gate is about to run here: the files can no longer be assumed untouched."""
        if self.pristine:  # the files are still what the private index says
            self._index_mtime_ns = settled_index_time(self._index_mtime_ns, self._index_bytes,
                                                      checkout=self._index_bytes is self._base_index_bytes)
        self.pristine = False
        self.pristine_includes = False
        self._no_nested = False

    # ── reading what changed ─────────────────────────────────────────────

    def _remember_private_index(self) -> None:
        self._index_bytes = self.index.read_bytes()
        self._index_mtime_ns = self.index.stat().st_mtime_ns

    def _restore_private_index(self) -> None:
        # Whatever a seat wrote to the private index, failres's own copy is what counts.
        # Its modification time is put back too: git trusts an entry's stat data only
        # when the file is older than the index ("racy git"), so an index rewritten
        # *now* would hide an edit made in the same clock tick as the checkout.
        beneath.replace_file(self.git_dir, self._state("index"), self._index_bytes, mtime_ns=self._index_mtime_ns)

    def _state(self, name: str) -> PurePath:
        """`name` in failres's state dir for this workspace, relative to the git dir, on a checked way.

        The directories there are made when missing and must be no links: git is about
        to write through them (GIT_INDEX_FILE), and a seat can reach them.
        """
        relative = self.state_dir.relative_to(self.git_dir)
        try:
            beneath.make_dirs(self.git_dir, relative / name if name in ("scratch", "objects") else relative)
        except beneath.Planted as error:
            msg = f"failres's own state for a task workspace was tampered with: {error}"
            raise GitError(msg, hint="a seat may have planted it; remove that path and run again") from None
        return relative / name

    def status(self) -> StatusReport:
        self._require_intact()
        return self._status()

    def _status(self) -> StatusReport:
        self._restore_private_index()
        # No optional locks: the refreshed index git would write is thrown away before the next read.
        return parse_status(self.git(["--no-optional-locks", *STATUS_ARGS[:-1], "--ignore-submodules=all"]))

    def check(self) -> Checked:
        """Every path whose file differs from the last tree failres put down, from the files alone."""
        self._require_intact()
        scanned = self._scanned
        report, (odd_found, self._scanned) = side_by_side(self._status, lambda: odd_walk(self.path, scanned))
        paths: set[str] = set()
        for entry in report.entries:
            # Only files against the private index count: the index-against-HEAD side
            # compares with the *person's* HEAD, which says nothing about the seat.
            if not entry.unstaged or entry.ignored:
                continue
            paths.add(entry.path)
            if entry.original_path:
                paths.add(entry.original_path)
        shown = [shown_name(path) for path in sorted(paths)]
        raw = {name: path for name, path in zip(shown, sorted(paths)) if name != path}
        undecodable = list(raw)
        links = {path: os.readlink(self.path / path) for path in paths
                 if path not in undecodable and (self.path / path).is_symlink()}
        odd = {shown_name(path): what for path, what in odd_found.items()}
        self._no_nested = not odd
        return Checked(tuple(sorted(shown)), tuple(undecodable), links, raw, odd)

    # ── building trees ───────────────────────────────────────────────────

    def accept(self, paths: Iterable[str]) -> str:
        """Take exactly `paths` from the files into the private index; return the tree it now holds."""
        wanted = list(paths)
        if not wanted:
            return self.tree  # the private index holds exactly the last tree put down
        self._require_intact()
        self._restore_private_index()
        spec = b"\0".join(os.fsencode(p) for p in wanted) + b"\0"
        self.git(["add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"], stdin=spec)
        tree = self.git(["write-tree"]).decode().strip()
        # The files become what a checkout of that tree gives (clean and smudge filters,
        # `ident`, line endings), so the gate judges exactly what a clone of the commit holds.
        # git skips a file whose stat data matches the index, so each is removed first.
        for path in wanted:
            unlink_inside(self.path, path)
        self.git(["checkout-index", "-f", "-u", "-q", "-z", "--stdin"], stdin=spec)
        self._remember_private_index()
        verify_objects(self.objects, tree, wanted)
        return tree

    def capture(self, paths: Iterable[str], *, max_bytes: int, include) -> str:
        """A tree of the last tree put down plus `paths` as the files hold them now (for snapshots).

        Only regular files up to `max_bytes`, with a name that can be recorded (UTF-8),
        and that `include(path)` allows are taken; the private index is left as it was.
        """
        paths = [p for p in paths if shown_name(p) == p]
        self._require_intact()
        self._restore_private_index()
        scratch_index = self.git_dir / self._state("scratch") / "index"
        beneath.replace_file(self.git_dir, self._state("scratch") / "index", self._index_bytes)
        taken = []
        for path in paths:
            full = self.path / path
            try:
                info = full.lstat()
            except (OSError, ValueError):
                taken.append(path)  # gone: its deletion is part of the state
                continue
            if not include(path):
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
                continue
            taken.append(path)
        objects = self.git_dir / self._state("scratch") / "objects"  # hashed aside; only redacted ones come in
        remove_tree(objects)
        beneath.make_dirs(self.git_dir, self._state("scratch") / "objects")
        try:
            if taken:
                spec = b"\0".join(os.fsencode(p) for p in taken) + b"\0"
                self.git(["add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"], index=scratch_index,
                         stdin=spec, objects=objects)
            tree = self.git(["write-tree"], index=scratch_index, objects=objects).decode().strip()
            return promote_redacted(self.objects, objects, tree, taken)
        finally:
            scratch_index.unlink(missing_ok=True)
            remove_tree(objects)

    # ── putting the files back ───────────────────────────────────────────

    def purify(self, tree: str, keep: Sequence[str] = ()) -> None:
        """Make the files exactly `tree` (plus the `keep` paths), and give the seat a fresh `.git`.

        Raises GitError when the files cannot be put back (a seat that made them
        undeletable); the caller quarantines the task then. A workspace nobody has run
        in since it was made or put back to this same tree is left as it is.
        """
        if self.pristine and tree == self.tree:
            return
        self._require_intact()
        self._restore_private_index()
        if tree == self.tree and self._nothing_to_put_back(keep):
            # The common case after an accepted dispatch: the files are the tree already,
            # and nothing untracked or ignored lies about; only the seat's git is renewed.
            if not self._no_nested:
                remove_nested_git_dirs(self.path)
            self.reset_seat_git()
            self.pristine = True
            return
        try:
            self._put_back(tree, keep)
        except GitError:
            # A seat may have taken permissions away from files or directories; give
            # them back and try once more.
            restore_permissions(self.path)
            self._put_back(tree, keep)
        self.tree = tree
        self._remember_private_index()
        self.reset_seat_git()
        self.pristine = True
        self._scanned = None  # the put-back changed directories all over: walked in full once more
        left = self.check()
        stray = [p for p in left.paths if not kept(p, keep)]
        if stray:
            shown = ", ".join(stray[:5])
            msg = f"could not put the workspace {self.path} back: it still differs at {shown}"
            raise GitError(msg, hint="a seat left files that cannot be removed; remove them by hand")

    def _nothing_to_put_back(self, keep: Sequence[str]) -> bool:
        """No tracked file differs and nothing untracked or ignored is there but `keep` paths."""
        args = [*STATUS_ARGS[:-3], "--untracked-files=normal", "--ignored=traditional", "--no-renames",
                "--ignore-submodules=none"]
        report = parse_status(self.git(["--no-optional-locks", *args]))
        for entry in report.entries:
            if entry.staged and not entry.unstaged and not entry.submodule:
                continue  # the index against the person's HEAD: says nothing about the files
            if not kept(entry.path, keep) and not kept(entry.path + "/", keep):
                return False
        return True

    def _put_back(self, tree: str, keep: Sequence[str]) -> None:
        # The files git is about to write come from their objects: each one's hash is
        # checked first, so a loose object forged in place never reaches a gate.
        dirty = self.git(["diff-files", "--name-only", "-z", "--ignore-submodules=all"])
        verify_objects(self.objects, tree, [os.fsdecode(p) for p in dirty.split(b"\0") if p])
        self.git([*PARALLEL_CHECKOUT, "read-tree", "--reset", "-u", tree])
        exclude = []
        for pattern in keep:
            exclude += ["-e", pattern]
        # -ff: nested repositories too; -x: ignored files too (nothing the seat hid from
        # git reaches a gate). `.git` at the top is never listed by git, so it stays.
        self.git(["clean", "-ffdxq", *exclude])
        remove_nested_git_dirs(self.path)
