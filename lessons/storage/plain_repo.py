"""A repository's refs and objects read through git itself, for commands that only look.

Loading pygit2 costs a Python process more than the rest of a look at a remote does
(`status --remote`: one fetch, then a read of a few refs, a journal and some claims). A
look needs none of libgit2: `git for-each-ref` lists the refs it reads, and one
`git cat-file --batch` hands it every object it asks for. This module gives that pair the
few names of pygit2's reading side that the store's readers use (`references`, `get`,
`[]`, a commit's `message`, `message_encoding` and `tree`, a tree's entries with `name`,
`id`, `filemode` and `type_str`, a blob's `data` and `size`), so the same reader code runs
over either. It never writes: anything that changes the repository opens it with pygit2.

Ids are hex strings (`PlainOid`), which is what every reader turns pygit2's ids into.
Only the refs under the prefixes asked for are listed: a look names what it reads.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# Where to find a repository is said by the arguments alone: a hook's GIT_DIR or a
# caller's GIT_INDEX_FILE must not point git at another one.
_LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
             "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")
# git's own file modes (pygit2's GIT_FILEMODE_* are these numbers).
MODE_TREE = 0o040000
MODE_GITLINK = 0o160000
_KINDS = {MODE_TREE: "tree", MODE_GITLINK: "commit"}


class PlainOid:
    """An object id as git prints it; compares and hashes as its hex, prints as it."""

    __slots__ = ("hex",)

    def __init__(self, hex: str) -> None:  # noqa: A002 - pygit2's own keyword
        self.hex = hex

    def __str__(self) -> str:
        return self.hex

    def __repr__(self) -> str:
        return f"PlainOid({self.hex!r})"

    def __eq__(self, other: object) -> bool:
        return str(other) == self.hex if isinstance(other, PlainOid) or isinstance(other, str) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.hex)


@dataclass(frozen=True)
class PlainRef:
    name: str
    target: PlainOid | str  # a symbolic ref's target is the name of the ref it points to


@dataclass(frozen=True)
class PlainEntry:
    """One entry of a tree: its name, mode and the id of what it names."""

    name: str
    filemode: int
    id: PlainOid

    @property
    def type_str(self) -> str:
        return _KINDS.get(self.filemode, "blob")


class PlainBlob:
    type_str = "blob"

    def __init__(self, oid: PlainOid, data: bytes) -> None:
        self.id, self.data, self.size = oid, data, len(data)


class PlainTree:
    type_str = "tree"

    def __init__(self, repo: PlainRepository, oid: PlainOid, raw: bytes) -> None:
        self.id, self._repo = oid, repo
        self._entries = _parse_tree(raw, len(oid.hex) // 2)
        self._by_name = {entry.name: entry for entry in self._entries}

    def __iter__(self) -> Iterator[PlainEntry]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, path: str) -> bool:
        try:
            self[path]
        except KeyError:
            return False
        return True

    def __getitem__(self, path: str) -> PlainEntry:
        """The entry at `path`, which may name a file in a subtree (`a/b.json`), as pygit2's trees take it."""
        head, _, rest = path.partition("/")
        entry = self._by_name[head]
        if not rest:
            return entry
        sub = self._repo.get(entry.id)
        if not isinstance(sub, PlainTree):
            raise KeyError(path)
        return sub[rest]


class PlainCommit:
    type_str = "commit"

    def __init__(self, repo: PlainRepository, oid: PlainOid, raw: bytes) -> None:
        self.id, self._repo = oid, repo
        head, _, body = raw.partition(b"\n\n")
        self.message_encoding: str | None = None
        self.tree_id: PlainOid | None = None
        self.parent_ids: list[PlainOid] = []
        for line in head.split(b"\n"):
            key, _, value = line.partition(b" ")
            if key == b"tree":
                self.tree_id = PlainOid(value.decode("ascii", "replace"))
            elif key == b"parent":
                self.parent_ids.append(PlainOid(value.decode("ascii", "replace")))
            elif key == b"encoding":
                self.message_encoding = value.decode("utf-8", "replace")
        self.message = body.decode("utf-8", "replace")

    @property
    def tree(self) -> PlainTree:
        tree = self._repo.get(self.tree_id) if self.tree_id is not None else None
        if not isinstance(tree, PlainTree):
            msg = f"commit {self.id} names no tree git can read"
            raise KeyError(msg)
        return tree


def _parse_tree(raw: bytes, id_bytes: int) -> list[PlainEntry]:
    """A tree object's entries: `<octal mode> <name>\\0<binary id>`, one after another."""
    entries, at = [], 0
    while at < len(raw):
        space = raw.index(b" ", at)
        nul = raw.index(b"\0", space)
        mode = int(raw[at:space], 8)
        name = raw[space + 1:nul].decode("utf-8", "surrogateescape")
        oid = raw[nul + 1:nul + 1 + id_bytes].hex()
        entries.append(PlainEntry(name, mode, PlainOid(oid)))
        at = nul + 1 + id_bytes
    return entries


class PlainReferences:
    """The refs under the prefixes a `PlainRepository` was opened with, as they were when first asked."""

    def __init__(self, repo: PlainRepository) -> None:
        self._repo = repo
        self._refs: dict[str, PlainRef] | None = None

    def _listed(self) -> dict[str, PlainRef]:
        if self._refs is None:
            self._refs = self._repo.list_refs()
        return self._refs

    def __iter__(self) -> Iterator[str]:
        return iter(self._listed())

    def __contains__(self, name: str) -> bool:
        return name in self._listed()

    def __getitem__(self, name: str) -> PlainRef:
        return self._listed()[name]


class PlainRepository:
    """Read-only refs (under `ref_prefixes`) and objects of the repository whose git dir is `git_dir`.

    One `git cat-file --batch` serves every object, started at the first one asked for;
    `close()` (or the end of a `with` block) ends it.
    """

    def __init__(self, git_dir: str | os.PathLike[str], ref_prefixes: Iterable[str]) -> None:
        self.path = str(git_dir)
        self.prefixes = tuple(ref_prefixes)
        self.references = PlainReferences(self)
        self._env = {k: v for k, v in os.environ.items() if k not in _LOCATING}
        self._env["GIT_DIR"] = self.path
        # An object is what its id names, as libgit2 reads it: a `refs/replace/` ref must not swap it.
        self._env["GIT_NO_REPLACE_OBJECTS"] = "1"
        self._batch: subprocess.Popen[bytes] | None = None
        self._objects: dict[str, PlainCommit | PlainTree | PlainBlob | None] = {}

    def __enter__(self) -> PlainRepository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._batch is not None:
            self._batch.stdin.close()
            self._batch.wait()
            self._batch = None

    def list_refs(self) -> dict[str, PlainRef]:
        """name -> ref, for the refs under this repository's prefixes (none asked: none listed)."""
        if not self.prefixes:
            return {}
        done = subprocess.run(["git", "for-each-ref", "--format=%(objectname) %(symref) %(refname)", *self.prefixes],
                              env=self._env, capture_output=True, check=False)
        if done.returncode != 0:
            msg = f"git for-each-ref failed: {done.stderr.decode('utf-8', 'replace').strip()}"
            raise OSError(msg)
        refs: dict[str, PlainRef] = {}
        for line in done.stdout.decode("utf-8", "surrogateescape").splitlines():
            oid, symref, name = line.split(" ", 2)
            refs[name] = PlainRef(name, symref if symref else PlainOid(oid))
        return refs

    def get(self, oid: object) -> PlainCommit | PlainTree | PlainBlob | None:
        """The object `oid` names; None when git has no such object (or it is a tag, which no reader takes)."""
        key = str(oid)
        if key not in self._objects:
            self._objects[key] = self._read(key)
        return self._objects[key]

    def __getitem__(self, oid: object) -> PlainCommit | PlainTree | PlainBlob:
        found = self.get(oid)
        if found is None:
            raise KeyError(str(oid))
        return found

    def _read(self, key: str) -> PlainCommit | PlainTree | PlainBlob | None:
        if not key or any(c in key for c in " \n\0"):
            return None  # the batch reads one name a line: nothing else may reach it
        batch = self._started()
        batch.stdin.write(key.encode() + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline()
        parts = header.split()
        if len(parts) != 3:  # "<name> missing", "<name> ambiguous", or git has gone
            if not header:
                msg = "git cat-file ended before it answered"
                raise OSError(msg)
            return None
        name, kind, size = parts[0].decode(), parts[1], int(parts[2])
        raw = batch.stdout.read(size)
        batch.stdout.read(1)  # the newline after every object's bytes
        oid = PlainOid(name)
        if kind == b"commit":
            return PlainCommit(self, oid, raw)
        if kind == b"tree":
            return PlainTree(self, oid, raw)
        if kind == b"blob":
            return PlainBlob(oid, raw)
        return None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            self._batch = subprocess.Popen(["git", "cat-file", "--batch"], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self._env)
        return self._batch

