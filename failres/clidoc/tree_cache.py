"""The command tree kept between processes, so that a <TAB> does not build the command line.

Every <TAB> runs `git-failres __complete ...` as a process. Describing the commands from
the typer app means importing every command module, typer and what they import: three
and a half Python starts, on every keypress. The description depends on failres's own
source alone, so it is kept once per version of that source, as JSON in the person's
cache directory (`$XDG_CACHE_HOME/failres/`, else `~/.cache/failres/`), under a name
made of a fingerprint of the source files (the size and modification time of every
module of `failres` and `lessons`, and of typer's entry file): an edited, upgraded or
reinstalled failres (or typer) reads its own tree, never an older one's. A file that cannot be read, does not parse or cannot be
written is never an error: the tree is built from the app, as without a cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from failres.clidoc.model import CommandDoc, ParamDoc

# Bumped when the shape of the saved tree changes, so an older file is never read as a newer one.
FORMAT = 1


def cache_dir(environ: dict[str, str] | os._Environ | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or "~").expanduser() / ".cache")
    return Path(base) / "failres"


def source_fingerprint(roots: tuple[Path, ...], files: tuple[Path, ...] = ()) -> str:
    """A short digest of the name, size and modification time of every `.py` file below `roots`,
    and of each of `files`."""
    import hashlib

    digest = hashlib.blake2b(digest_size=10)
    digest.update(str(FORMAT).encode())
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    stack = list(roots)
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                stack.append(Path(entry.path))
            elif entry.name.endswith(".py"):
                stat = entry.stat()
                digest.update(f"{entry.path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _source_roots() -> tuple[Path, ...]:
    import failres
    import lessons

    return (Path(failres.__file__).parent, Path(lessons.__file__).parent)


def _parser_files() -> tuple[Path, ...]:
    """The command-line library's own entry file: an upgrade of it rewrites that file, and the
    description (metavars, defaults) is what it makes of failres's commands."""
    from importlib.util import find_spec

    spec = find_spec("typer")
    return (Path(spec.origin),) if spec is not None and spec.origin else ()


def tree_document(doc: CommandDoc) -> dict:
    return asdict(doc)


def tree_of(document: dict) -> CommandDoc:
    """The CommandDoc a `tree_document` was made from (KeyError, TypeError or ValueError when it is not one)."""
    def param(fields: dict) -> ParamDoc:
        return ParamDoc(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})

    fields = dict(document)
    fields["path"] = tuple(fields["path"])
    fields["examples"] = tuple(fields["examples"])
    fields["arguments"] = tuple(param(p) for p in fields["arguments"])
    fields["options"] = tuple(param(p) for p in fields["options"])
    fields["subcommands"] = tuple(tree_of(c) for c in fields["subcommands"])
    return CommandDoc(**fields)


def kept_tree(build: Callable[[], CommandDoc], directory: Path | None = None,
              roots: tuple[Path, ...] | None = None) -> CommandDoc:
    """The command tree: the one kept for this source, else `build()`'s, kept for the next process."""
    directory = cache_dir() if directory is None else directory
    fingerprint = source_fingerprint(roots, ()) if roots else source_fingerprint(_source_roots(), _parser_files())
    path = directory / f"commands-{fingerprint}.json"
    try:
        return tree_of(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    tree = build()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(tree_document(tree), sort_keys=True), encoding="utf-8")
        tmp.replace(path)  # whole or not at all: another <TAB> may be reading
        _forget_older(directory)
    except OSError:
        pass  # a read-only or full disk: the next <TAB> builds it again
    return tree


KEPT = 4  # trees of other sources kept: two installations in turn do not rebuild on every <TAB>


def _forget_older(directory: Path) -> None:
    kept = sorted(directory.glob("commands-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in kept[KEPT + 1:]:
        old.unlink(missing_ok=True)
