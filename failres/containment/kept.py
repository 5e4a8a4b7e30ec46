"""What a gate keeps between dispatches (`[gates.X] keep`), checked before every judgement.

`keep` paths survive putting the workspace back (a `.venv/` the setup made, a
`node_modules/`), so a seat can change them too: replace `.venv/bin/python` with a
script that prints "1 passed" and the gate is green whatever the code does. So what
the kept paths hold is fingerprinted after the setup made it, and only then: a gate runs
the seat's code too, and gate-run code once planted a `.pth` in a kept `.venv` that the
fingerprint after that gate made the baseline; the next gate went green on a tree that
fails on a clean clone. It is compared before every gate and probe. A file whose
fingerprint differs (content written, mode, a link, added or removed: writing changes a
file's ctime, which no program can set back) means the kept paths are no longer what
the person's commands made: `seat-tamper`, and they are removed and the setup runs again
first, so nothing judges with tools a seat changed. Inside the seat world they are bound
read-only to everything but the setup (`sandbox.world`).
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Sequence
from pathlib import Path

Fingerprint = dict[str, tuple[int, int, int, int, int, str]]  # path -> mode, size, mtime, ctime, inode, link

# The cache tools write inside a `node_modules/` while they run (find-cache-dir's
# `node_modules/.cache/`: esm, babel, eslint), at the top and beside the packages they load
# (`node_modules/esm/node_modules/.cache`). dequal's `npm test` runs under esm, which wrote
# there on every gate, and the next gate called that a seat's tampering: a right fix
# quarantined `seat-tamper`. So those caches are not fingerprinted, nor a `node_modules`
# that holds nothing else (esm makes one to hold its cache), nor any directory's times
# (each entry is fingerprinted itself), and the caches are removed before
# every gate and probe: nothing a seat or an earlier gate left there is read by the next
# judgement, and the tool builds it again from the tree it judges.
CACHE = ".cache"


def fingerprint(top: Path, keep: Sequence[str]) -> Fingerprint:
    """Every entry under the `keep` paths of the workspace `top`, by its stat data (links not followed)."""
    found: Fingerprint = {}
    for root in kept_roots(top, keep):
        if _only_a_cache(root):
            continue  # `node_modules/` names every nested one too: esm's own is only its cache
        _add(found, top, root)
        if root.is_dir() and not root.is_symlink():
            for directory, dirs, names in os.walk(root):
                if Path(directory).name == "node_modules" and CACHE in dirs:
                    dirs.remove(CACHE)
                dirs[:] = [name for name in dirs if not _only_a_cache(Path(directory, name))]
                for name in (*dirs, *names):
                    _add(found, top, Path(directory, name))
    return found


def _only_a_cache(path: Path) -> bool:
    if path.name != "node_modules" or path.is_symlink():
        return False
    try:
        return set(os.listdir(path)) <= {CACHE}
    except OSError:
        return False


def caches(top: Path, keep: Sequence[str]) -> list[Path]:
    """The tool caches inside the kept paths (`node_modules/.cache`), which are cleared, never fingerprinted."""
    found: dict[Path, None] = {}
    for root in kept_roots(top, keep):
        if root.is_dir() and not root.is_symlink():
            for directory, dirs, _names in os.walk(root):
                if Path(directory).name == "node_modules" and CACHE in dirs:
                    dirs.remove(CACHE)
                    found[Path(directory, CACHE)] = None
    return list(found)


def kept_roots(top: Path, keep: Sequence[str]) -> list[Path]:
    """The entries of `top` that `keep` patterns name (gitignore-style: `.venv/`, `*.egg-info/`, `build`)."""
    roots: list[Path] = []
    for pattern in keep:
        stripped = pattern.strip().rstrip("/").lstrip("/")
        if not stripped or stripped.startswith("!") or ".." in stripped.split("/"):
            continue
        anywhere = "/" not in pattern.strip().rstrip("/")
        matches = glob.glob(stripped, root_dir=top, include_hidden=True)
        if anywhere:
            matches += glob.glob(f"**/{stripped}", root_dir=top, recursive=True, include_hidden=True)
        for match in sorted(set(matches)):
            if not match.startswith(".git/") and match != ".git" and not _through_a_link(top, match):
                roots.append(top / match)
    return roots


def _through_a_link(top: Path, match: str) -> bool:
    """Whether `match` is reached through a symlink below `top`: `**` follows links, and a seat's
    `.venv/evil -> /your/checkout` made `.venv/evil/node_modules` a kept root, whose cache,
    and then the whole of it, failres removed on the host."""
    parts = Path(match).parts[:-1]
    return any((top.joinpath(*parts[:n])).is_symlink() for n in range(1, len(parts) + 1))


def changed(before: Fingerprint, now: Fingerprint) -> list[str]:
    """The kept paths whose entries differ (pure)."""
    return sorted(path for path in set(before) | set(now) if before.get(path) != now.get(path))


def _add(found: Fingerprint, top: Path, path: Path) -> None:
    try:
        info = path.lstat()
    except OSError:
        return
    link = os.readlink(path) if path.is_symlink() else ""
    if stat.S_ISDIR(info.st_mode):
        # A directory's times move as entries come and go (a cache beside a package: see
        # CACHE); every entry is fingerprinted itself, so its times add nothing but noise.
        found[path.relative_to(top).as_posix()] = (info.st_mode, 0, 0, 0, info.st_ino, "")
        return
    found[path.relative_to(top).as_posix()] = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                                               info.st_ino, link)
