"""The union merge of two store trees, built level by level: what only one side touched is reused whole.

`history.union_change` states the rule file by file: every file either side added is
kept, a file the other side deleted goes unless this side changed it, two versions of
one path resolve to the one that parses, then to the smaller blob id. Applied as a
list of paths, it cost a walk of both sides' diffs down to every record and a rebuilt
tree for every fan-out directory either side touched, so a sync of two stores that
each wrote 10,000 records wrote about as many trees as records.

Here the same rule is applied while walking the three trees (base, ours, theirs)
together: a subtree theirs left as it was in the base is ours unchanged; a subtree
only theirs has (a fan-out directory it added) is taken by its id, never read; only
directories both sides changed are rebuilt. Where one side has a directory and the
other a file at the same path, the walk gives up (`Mismatch`) and the caller applies
the file-by-file rule, which has its own answer for that odd case.

The rebuilt trees are held in memory until the walk is done, then written at once.
Two diverged stores of 10,000 records each rebuild over a thousand fan-out trees; as
loose objects that is a file each (most of the merge's time), and the push after it
reads them back one file at a time and compresses each again. Past `PACK_AT`
objects they go into one pack instead (`lessons.storage.packs`), as git's own transports keep
what they receive; a small merge writes its few trees loose, as any commit does.
A walk that gives up writes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pygit2

from lessons.storage.packs import TREE, write_pack

_TREE = pygit2.GIT_FILEMODE_TREE
_BLOB = pygit2.GIT_FILEMODE_BLOB
PACK_AT = 100  # new trees from which a merge writes one pack rather than loose objects (git's unpackLimit)

_Entry = tuple[int, pygit2.Oid]  # (file mode, object id)


class Mismatch(Exception):
    """A path is a directory on one side and a file on another."""


class _NewTrees:
    """The trees a merge builds, by id, not yet written."""

    def __init__(self) -> None:
        self.trees: dict[pygit2.Oid, bytes] = {}

    def add(self, entries: dict[bytes, _Entry]) -> pygit2.Oid | None:
        """The id of the tree of `entries` (None when empty), kept for `write`."""
        if not entries:
            return None
        # git's order: a directory sorts as if its name ended with "/".
        order = sorted(entries, key=lambda name: name + b"/" if entries[name][0] == _TREE else name)
        raw = b"".join(b"%o %s\0%s" % (entries[name][0], name, entries[name][1].raw) for name in order)
        oid = pygit2.Oid(raw=hashlib.sha1(b"tree %d\0%s" % (len(raw), raw)).digest())  # noqa: S324 - git's object ids
        self.trees[oid] = raw
        return oid

    def write(self, repo: pygit2.Repository) -> None:
        if len(self.trees) >= PACK_AT:
            write_pack(repo, [(TREE, oid, raw) for oid, raw in self.trees.items()])
            return
        for oid, raw in self.trees.items():
            written = repo.odb.write(pygit2.GIT_OBJECT_TREE, raw)
            assert written == oid, "a merged tree's id must be git's id of its bytes"


def merge_trees(repo: pygit2.Repository, base: pygit2.Tree | None, ours: pygit2.Tree, theirs: pygit2.Tree,
                readable: Callable[[str, pygit2.Oid], bool]) -> pygit2.Oid:
    """The id of the union of `ours` and `theirs` since `base`; Mismatch where the walk cannot decide."""
    new = _NewTrees()
    merged = _merge(repo, base, ours, theirs, readable, "", new)
    new.write(repo)
    return merged if merged is not None else repo.TreeBuilder().write()


def _kind(entry: pygit2.Object | None) -> bool | None:
    return None if entry is None else entry.filemode == _TREE


def _merge(repo: pygit2.Repository, base: pygit2.Tree | None, ours: pygit2.Tree | None, theirs: pygit2.Tree | None,
           readable: Callable[[str, pygit2.Oid], bool], path: str, new: _NewTrees) -> pygit2.Oid | None:
    o_map = {e.raw_name: e for e in ours} if ours is not None else {}
    t_map = {e.raw_name: e for e in theirs} if theirs is not None else {}
    b_map = {e.raw_name: e for e in base} if base is not None else {}
    changes: dict[bytes, _Entry | None] = {}  # what differs from ours here (None: removed)
    for name in t_map.keys() | b_map.keys():
        te, be, oe = t_map.get(name), b_map.get(name), o_map.get(name)
        t_id, b_id, o_id = (te.id if te else None), (be.id if be else None), (oe.id if oe else None)
        if t_id == b_id or o_id == t_id:
            continue  # theirs did nothing here, or both sides did the same
        if oe is None and be is None:  # only theirs has it: a directory taken by its id, unread, or a file
            changes[name] = (_TREE, t_id) if te.filemode == _TREE else (_BLOB, t_id)
            continue
        kinds = {_kind(e) for e in (te, be, oe)} - {None}
        where = path + next(e for e in (te, be, oe) if e is not None).name
        if len(kinds) > 1:
            raise Mismatch(where)
        if kinds == {True}:
            sub = _merge(repo, repo[b_id] if be else None, repo[o_id] if oe else None, repo[t_id] if te else None,
                         readable, where + "/", new)
            if sub is None:
                if oe is not None:
                    changes[name] = None
            elif sub != o_id:
                changes[name] = (_TREE, sub)
            continue
        chosen = _union_file(where, b_id, o_id, t_id, readable)
        if chosen is None:
            if oe is not None:
                changes[name] = None
        elif chosen != o_id:
            changes[name] = (_BLOB, chosen)
    if not changes:
        return ours.id if o_map else None
    entries: dict[bytes, _Entry] = {name: (e.filemode, e.id) for name, e in o_map.items()}
    for name, entry in changes.items():
        if entry is None:
            entries.pop(name, None)
        else:
            entries[name] = entry
    return new.add(entries)


def _union_file(path: str, before: pygit2.Oid | None, mine: pygit2.Oid | None, after: pygit2.Oid | None,
                readable: Callable[[str, pygit2.Oid], bool]) -> pygit2.Oid | None:
    """The version of one file the union keeps (None: no file), theirs having changed it since the base."""
    if after is None:
        return None if mine == before else mine  # they deleted it: gone, unless we changed it
    if mine is not None and readable(path, mine) and not readable(path, after):
        return mine  # never a record that does not parse for one that does (a damaged remote)
    if mine is None or mine == before:
        return after  # theirs, also over our deletion of a file they changed: nothing is lost
    if str(after) < str(mine) or not readable(path, mine):
        return after
    return mine
