"""Objects written as one git pack (and its index), for writers that make many at once.

A loose object costs a file of its own: created, written, renamed into a fan-out
directory. A merge of two large diverged stores makes over a thousand trees, and
writing them loose was most of what the merge cost; `git push` then reads each back
and compresses it again. One pack holds them all in two files, and a push reuses
its compressed entries as they are.

The format is git's own, version 2 (gitformat-pack(5)): a pack of whole,
undeltified objects, and an index of their ids, CRCs and offsets. It is written
as git writes a received pack: both files under temporary names in
`objects/pack/`, then the pack renamed to its final name, then the index, so a
reader sees either no pack or a whole one; a process killed between leaves at
worst a temporary file, which `git gc` removes. libgit2 and git find a new pack
the first time they miss an object, so the objects are readable as soon as this
returns.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import pygit2

COMMIT, TREE, BLOB = 1, 2, 3  # pack entry types
_BIG_OFFSET = 2**31  # offsets at or past this need the index's 8-byte table; never reached by a merge


def _entry_header(kind: int, size: int) -> bytes:
    """The entry's type and inflated size: 3 bits of type, then the size 4 and 7 bits at a time."""
    out = bytearray([(kind << 4) | (size & 0x0F)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def pack_bytes(objects: Sequence[tuple[int, pygit2.Oid, bytes]]) -> tuple[bytes, bytes]:
    """(the pack, its index) holding `objects`, each (type, id, bytes), ids distinct."""
    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    rows: list[tuple[bytes, int, int]] = []
    for kind, oid, data in objects:
        offset = len(pack)
        if offset >= _BIG_OFFSET:
            msg = "a pack this large needs the 8-byte offset table"
            raise ValueError(msg)
        entry = _entry_header(kind, len(data)) + zlib.compress(data, 1)
        pack += entry
        rows.append((oid.raw, zlib.crc32(entry), offset))
    checksum = hashlib.sha1(pack).digest()  # noqa: S324 - the format's own checksum
    pack += checksum
    rows.sort()
    fanout = [0] * 256
    for raw, _, _ in rows:
        fanout[raw[0]] += 1
    for i in range(1, 256):
        fanout[i] += fanout[i - 1]
    count = len(rows)
    index = bytearray(b"\377tOc" + struct.pack(">I", 2))
    index += struct.pack(">256I", *fanout)
    index += b"".join(raw for raw, _, _ in rows)
    index += struct.pack(f">{count}I", *(crc for _, crc, _ in rows))
    index += struct.pack(f">{count}I", *(offset for _, _, offset in rows))
    index += checksum
    index += hashlib.sha1(index).digest()  # noqa: S324
    return bytes(pack), bytes(index)


def write_pack(repo: pygit2.Repository, objects: Sequence[tuple[int, pygit2.Oid, bytes]]) -> Path:
    """Write `objects` into the repository as one new pack; the path of the pack."""
    pack, index = pack_bytes(objects)
    directory = objects_dir(repo) / "pack"
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"pack-{pack[-20:].hex()}"
    written = [_temporary(directory, pack), _temporary(directory, index)]
    try:
        os.replace(written[0], final.with_suffix(".pack"))
        os.replace(written[1], final.with_suffix(".idx"))  # the index last: it is what makes the pack seen
    except BaseException:
        for path in written:
            Path(path).unlink(missing_ok=True)
        raise
    return final.with_suffix(".pack")


def objects_dir(repo: pygit2.Repository) -> Path:
    """The repository's object directory: the common one for a linked worktree, whose own
    git dir (what `repo.path` names there) holds no objects."""
    git_dir = Path(repo.path)
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir / "objects"
    return (git_dir / common).resolve() / "objects"


def _temporary(directory: Path, data: bytes) -> str:
    fd, name = tempfile.mkstemp(dir=directory, prefix="tmp_pack_")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(name, 0o444)  # noqa: PTH101 - as git leaves its packs: read-only
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return name
