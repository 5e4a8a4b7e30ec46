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
"""

from __future__ import annotations

from collections.abc import Callable

import pygit2

_TREE = pygit2.GIT_FILEMODE_TREE
_BLOB = pygit2.GIT_FILEMODE_BLOB


class Mismatch(Exception):
    """A path is a directory on one side and a file on another."""


def merge_trees(repo: pygit2.Repository, base: pygit2.Tree | None, ours: pygit2.Tree, theirs: pygit2.Tree,
                readable: Callable[[str, pygit2.Oid], bool]) -> pygit2.Oid:
    """The id of the union of `ours` and `theirs` since `base`; Mismatch where the walk cannot decide."""
    merged = _merge(repo, base, ours, theirs, readable, "")
    return merged if merged is not None else repo.TreeBuilder().write()


def _kind(entry: pygit2.Object | None) -> bool | None:
    return None if entry is None else entry.filemode == _TREE


def _merge(repo: pygit2.Repository, base: pygit2.Tree | None, ours: pygit2.Tree | None, theirs: pygit2.Tree | None,
           readable: Callable[[str, pygit2.Oid], bool], path: str) -> pygit2.Oid | None:
    o_map = {e.name: e for e in ours} if ours is not None else {}
    t_map = {e.name: e for e in theirs} if theirs is not None else {}
    b_map = {e.name: e for e in base} if base is not None else {}
    builder = repo.TreeBuilder(ours) if ours is not None else repo.TreeBuilder()
    for name in t_map.keys() | b_map.keys():
        te, be, oe = t_map.get(name), b_map.get(name), o_map.get(name)
        t_id, b_id, o_id = (te.id if te else None), (be.id if be else None), (oe.id if oe else None)
        if t_id == b_id or o_id == t_id:
            continue  # theirs did nothing here, or both sides did the same
        kinds = {_kind(e) for e in (te, be, oe)} - {None}
        if len(kinds) > 1:
            raise Mismatch(f"{path}{name}")
        where = f"{path}{name}"
        if kinds == {True}:
            if oe is None and be is None:
                builder.insert(name, t_id, _TREE)  # a directory only theirs has: taken by its id, unread
                continue
            sub = _merge(repo, repo[b_id] if be else None, repo[o_id] if oe else None, repo[t_id] if te else None,
                         readable, where + "/")
            if sub is None:
                if oe is not None:
                    builder.remove(name)
            else:
                builder.insert(name, sub, _TREE)
            continue
        chosen = _union_file(where, b_id, o_id, t_id, readable)
        if chosen is None:
            if oe is not None:
                builder.remove(name)
        elif chosen != o_id:
            builder.insert(name, chosen, _BLOB)
    tree = builder.write()
    return tree if len(repo[tree]) else None


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
