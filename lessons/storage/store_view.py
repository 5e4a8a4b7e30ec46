"""A store read, never written: its tip, its trees, its files.

Apart from `lessons.storage.store` (which writes, and so needs pygit2) because a read
runs over any repository that speaks pygit2's reading names: pygit2's own, or the
`git cat-file` one of `lessons.storage.plain_repo`, which a look at a remote uses so
that it need not load libgit2 at all. Kinds are told by `type_str` and a symbolic ref
by its str target, which both give.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lessons.errors import InvalidInput
from lessons.storage.plain_repo import MODE_GITLINK, MODE_TREE
from lessons.storage.shared_dir import shared_git_dir

DEFAULT_REF = "refs/failres/store"
# Each called (git dir, ref, old, new) just before a store's ref moves, under the ref lock. Kept
# here, with nothing of libgit2 around it, so that a process can watch for writes (the tamper
# check's `containment.moves`) without loading what writes.
MOVE_OBSERVERS: list = []


def _kind(obj: object) -> str | None:
    return getattr(obj, "type_str", None)


class StoreView:
    """One store ref in one open repository (pygit2's, or a `PlainRepository`), read only."""

    # What reading a ref may raise besides KeyError when the ref is there but unreadable.
    unreadable: tuple[type[BaseException], ...] = (OSError,)

    def __init__(self, repo: Any, ref: str = DEFAULT_REF) -> None:
        self.repo = repo
        self.common_dir = shared_git_dir(self.repo.path)  # where refs, objects, its lock and index live
        if not ref.startswith("refs/"):
            msg = f"store ref must start with refs/: {ref!r}"
            raise InvalidInput(msg)
        self.ref = ref

    def tip(self) -> Any:
        """The store's tip commit; None when the ref does not exist.

        A ref that exists but names no commit (a blob, a tree, a tag, another ref, a
        file of garbage) is refused with StoreDamaged (see `lessons.storage.guard`): writing on
        it would bury what it names, and reading it would fail in ways that say nothing.
        """
        try:
            ref = self.repo.references[self.ref]
        except KeyError:
            return None
        except self.unreadable as unreadable:
            from lessons.storage.guard import refused_ref

            raise refused_ref(self, f"cannot be read ({unreadable})") from None
        target = ref.target
        if not isinstance(target, str) and _kind(self.repo.get(target)) == "commit":
            return target
        from lessons.storage.guard import refused_ref

        raise refused_ref(self, f"is a symbolic ref to {target}" if isinstance(target, str) else None)

    def exists(self) -> bool:
        return self.tip() is not None

    def verify(self, *, ignore_remote: str | None = None) -> None:
        """Refuse a store that cannot be trusted before anything reads or writes it (see `lessons.storage.guard`).

        `ignore_remote`: a sync with that remote is itself the way back for a lost
        store, so its remote-tracking copy is not held against it.
        """
        from lessons.storage.guard import verify_store

        verify_store(self, ignore_remote=ignore_remote)

    def commit_at(self, rev: Any = None) -> Any:
        """The tip's commit (None: no store); a store that can be written reads any revision (`Store`)."""
        if rev is not None:
            msg = f"a store opened to look reads only its tip, not {rev}"
            raise InvalidInput(msg)
        tip = self.tip()
        return None if tip is None else self.repo[tip]

    def tree_at(self, commit: Any) -> Any:
        return None if commit is None else commit.tree

    def read_bytes(self, path: str, commit: Any = None) -> bytes | None:
        commit = commit if commit is not None else self.commit_at()
        if commit is None:
            return None
        try:
            entry = commit.tree[path]
        except KeyError:
            return None
        obj = self.repo[entry.id]
        return obj.data if _kind(obj) == "blob" else None

    def walk(self, prefix: str = "", commit: Any = None) -> Iterator[tuple[str, Any]]:
        """Every file below `prefix` (a directory path, '' for all), in path order."""
        commit = commit if commit is not None else self.commit_at()
        if commit is None:
            return
        tree = commit.tree
        if prefix:
            try:
                obj = self.repo[tree[prefix.rstrip("/")].id]
            except KeyError:
                return
            if _kind(obj) != "tree":
                return
            tree = obj
        yield from self._walk_tree(tree, prefix.rstrip("/"))

    def _walk_tree(self, tree: Any, base: str) -> Iterator[tuple[str, Any]]:
        for entry in tree:
            path = f"{base}/{entry.name}" if base else entry.name
            if entry.filemode == MODE_TREE:
                yield from self._walk_tree(self.repo[entry.id], path)
            elif entry.filemode != MODE_GITLINK:  # a submodule entry names a commit, never a record
                yield path, entry.id

    def blob(self, oid: Any) -> bytes:
        """The bytes of a record file; b"" (no reader takes it for a record) for a tree, a commit or nothing."""
        try:
            obj = self.repo[oid]
        except (KeyError, ValueError):
            return b""
        return obj.data if _kind(obj) == "blob" else b""

    def list_dir(self, path: str, commit: Any = None) -> list[str]:
        """Names directly inside one directory of the store (empty when absent)."""
        commit = commit if commit is not None else self.commit_at()
        if commit is None:
            return []
        try:
            obj = self.repo[commit.tree[path].id] if path else commit.tree
        except KeyError:
            return []
        return [e.name for e in obj] if _kind(obj) == "tree" else []

    def files_in(self, tree: Any, directory: str) -> dict[str, Any]:
        """name -> blob id of the files directly inside `directory` of `tree` (empty when absent)."""
        if tree is None or not directory:
            return {}
        try:
            obj = self.repo[tree[directory].id]
        except KeyError:
            return {}
        if _kind(obj) != "tree":
            return {}
        return {entry.name: entry.id for entry in obj if entry.filemode not in (MODE_TREE, MODE_GITLINK)}
