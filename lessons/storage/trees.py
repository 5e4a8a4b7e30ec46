"""A change to a store tree, and the tree it makes: only the directories it touches are rebuilt.

Kept apart from `lessons.storage.store` (commits, the ref, concurrency) because building a
tree is pure work on objects: it reads the base, writes the blobs and subtrees the
change needs, and never moves a ref.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lessons.errors import InvalidInput
from lessons.storage.plain_repo import MODE_TREE as _TREE

if TYPE_CHECKING:  # a change is described by readers too, which need not load libgit2
    import pygit2

_BLOB = 0o100644  # git's mode of a plain file


@dataclass(frozen=True)
class Change:
    """What one write does to the tree: files to put and paths to delete.

    A put is the file's bytes, or the id of a blob already in the repository (a
    merge or an undo moves existing blobs and need not write them again).
    """

    puts: Mapping[str, bytes | pygit2.Oid] = field(default_factory=dict)
    deletes: frozenset[str] = frozenset()

    def is_empty(self) -> bool:
        return not self.puts and not self.deletes


def _split(path: str) -> tuple[str, ...]:
    parts = tuple(path.split("/"))
    if not path or any(p in ("", ".", "..") for p in parts) or path.startswith("/"):
        msg = f"invalid record path {path!r}"
        raise InvalidInput(msg)
    return parts


def _group(entries: Iterable[tuple[tuple[str, ...], object]]) -> dict[str, list]:
    groups: dict[str, list] = {}
    for parts, value in entries:
        groups.setdefault(parts[0], []).append((parts[1:], value))
    return groups


def apply_change(repo: pygit2.Repository, base: pygit2.Tree | None, change: Change) -> pygit2.Oid:
    """The id of `base` with `change` applied, writing only touched trees."""
    entries: list[tuple[tuple[str, ...], bytes | pygit2.Oid | None]] = []
    for path, data in change.puts.items():
        entries.append((_split(path), data))
    for path in change.deletes:
        if path not in change.puts:
            entries.append((_split(path), None))
    return _apply_tree(repo, base, entries)


def _apply_tree(repo: pygit2.Repository, base: pygit2.Tree | None,
                entries: list[tuple[tuple[str, ...], bytes | pygit2.Oid | None]]) -> pygit2.Oid:
    from pygit2 import Oid

    builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    for name, items in _group(entries).items():
        here = [(rest, value) for rest, value in items if not rest]
        deeper = [(rest, value) for rest, value in items if rest]
        existing = builder.get(name)
        if here:
            value = here[-1][1]
            if value is None:
                if existing is not None and existing.filemode != _TREE:
                    builder.remove(name)
            else:
                blob = value if isinstance(value, Oid) else repo.create_blob(value)
                builder.insert(name, blob, _BLOB)
            continue
        sub = None
        if existing is not None and existing.filemode == _TREE:
            sub = repo[existing.id]
        elif existing is not None:
            msg = f"record path {name!r} is a file where a directory is needed"
            raise InvalidInput(msg)
        if sub is None and all(value is None for _, value in deeper):
            continue  # deleting inside a directory that is not there
        new_sub = _apply_tree(repo, sub, deeper)
        if len(repo[new_sub]) == 0:
            if existing is not None:
                builder.remove(name)
        else:
            builder.insert(name, new_sub, _TREE)
    return builder.write()
