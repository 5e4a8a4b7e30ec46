"""The person's environment directories, and what in them points into their checkout.

A `.venv/` or `node_modules/` at the top of a checkout is what makes its gate run: the
test runner, the dependencies, often the project itself installed "editable". Inside
a world it is visible read-only where it always was, so the gate finds it unchanged.
Where no world runs, the same directory is a trap: an editable install (`pip install
-e .` writes a `.pth` file or a `__editable__` finder with the checkout's absolute
path, and `direct_url.json` says `"editable": true`), or a link into the checkout in
`node_modules/`, makes the gate import the person's files instead of the workspace's,
and a wrong fix can go green. `pointing_into_checkout` finds those before the first
dispatch, so the run says so and names the fix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from lessons.frozen import record
from failres.config.model import Config

DEFAULT_ENVIRONMENT = (".venv/", "venv/", "node_modules/", ".tox/", ".nox/")
# Bounds on the look: a node_modules can hold a hundred thousand files.
_MAX_ENTRIES = 20000
_MAX_FILE_BYTES = 256 * 1024


def environment_dirs(config: Config, top: Path) -> tuple[str, ...]:
    """The names (relative to the top) of the environment dirs to show inside the world.

    The configured ones, else the usual ones that exist as untracked directories; never a
    name that leaves the top or one git tracks (the workspace has its own copy then).
    """
    configured = config.workspace.environment
    names = DEFAULT_ENVIRONMENT if configured is None else configured
    found = []
    for name in names:
        clean = os.path.normpath(name.strip("/"))
        if not clean or clean == "." or clean.startswith("..") or os.path.isabs(name):
            continue
        host = top / clean
        if host.is_dir() and not _tracked(top, clean):
            found.append(clean)
    return tuple(dict.fromkeys(found))


def _tracked(top: Path, name: str) -> bool:
    """Does the checkout's index hold anything under `name`?"""
    import pygit2

    try:
        repo = pygit2.Repository(str(top))
        index = repo.index
    except (pygit2.GitError, KeyError, ValueError):
        return False
    prefix = name + "/"
    return any(entry.path == name or entry.path.startswith(prefix) for entry in index)


def outside_environments(config: Config, top: Path, gates: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The virtualenvs outside the checkout whose interpreter or scripts a gate runs, as absolute paths.

    hatch keeps a project's environments under its own data directory (`~/.local/share/hatch/env/
    virtual/...`), not in the checkout, and installs the project into them editable: found only
    among the checkout's dirs, such an environment led the gate to the person's files, and a wrong
    fix was committed green without a world. `gates`: the names to look at (None: every gate)."""
    import shutil

    found = []
    real_top = os.path.realpath(top)
    for name, gate in config.gates.items():
        program = gate.command[0] if gate.command and (gates is None or name in gates) else ""
        if not program or "{" in program:
            continue
        if "/" in program:
            where = program if os.path.isabs(program) else str(top / program)
        else:
            where = shutil.which(program) or ""
        # Not resolved through links: a venv's python is a link to the interpreter it was made from.
        root = Path(where).parent.parent if where else None
        if root is None or not (root / "pyvenv.cfg").is_file() or _under(os.path.realpath(root), real_top):
            continue
        found.append(str(root))
    return tuple(dict.fromkeys(found))


@record
class PointsIn:
    """One thing in an environment directory that makes a gate run the person's files."""

    where: str  # relative to the top
    what: str


def pointing_into_checkout(top: Path, names: tuple[str, ...]) -> list[PointsIn]:
    """Editable installs, `.pth` paths and links in the environment dirs that lead into `top`
    (`names`: relative to the top, or absolute for one outside it, named by its absolute path)."""
    real_top = os.path.realpath(top)
    found: list[PointsIn] = []
    for name in names:
        base = top / name
        for path in _walk(base):
            rel = str(path) if os.path.isabs(name) else os.path.relpath(path, top)
            if path.is_symlink():
                target = os.path.realpath(path)
                if _under(target, real_top) and not _under(target, os.path.realpath(base)):
                    found.append(PointsIn(rel, f"links to {os.path.relpath(target, real_top)} in the checkout"))
                continue
            if path.name == "direct_url.json":
                if _editable_here(path, real_top):
                    found.append(PointsIn(rel, "an editable install of the checkout"))
            elif path.suffix == ".pth" or (path.name.startswith("__editable__") and path.suffix == ".py"):
                line = _line_into(path, real_top)
                if line:
                    found.append(PointsIn(rel, f"puts {line} on the import path"))
    return found


# The install that makes node_modules afresh from a project's lockfile and nothing else, by the
# lockfile a workspace has from the tree; `npm ci` refuses to run without one, `npm install` makes one.
_NODE_INSTALLS = (("package-lock.json", ("npm", "ci")), ("npm-shrinkwrap.json", ("npm", "ci")),
                  ("pnpm-lock.yaml", ("pnpm", "install", "--frozen-lockfile")),
                  ("yarn.lock", ("yarn", "install", "--frozen-lockfile")))


def node_install(root: Path | None) -> tuple[str, ...]:
    """The command that installs node_modules for the project at `root` (None: not known)."""
    for lockfile, command in _NODE_INSTALLS:
        if root is None or (root / lockfile).is_file():
            return command
    return ("npm", "install")


def own_install_lines(gate: str, install: tuple[str, ...]) -> str:
    """The configuration, to the word, that gives each workspace its own node_modules (pure)."""
    return (f"[gates.{gate}] setup = {json.dumps(list(install))} with keep = [\"node_modules/\"], "
            "and [workspace] environment = []")


def fix_advice(found: list[PointsIn], top: Path | None = None, world: str = "install bubblewrap") -> str:
    """What the run does about what `pointing_into_checkout` found, and the fix where it can do nothing, in one line.

    `world` is what gives this machine the seat world, where the gate judges the workspace
    whatever the environment points at: bubblewrap where it is missing, the kernel setting where
    user namespaces are refused, `mode = "auto"` where the person turned the world off.
    """
    if any(p.what.startswith("links") for p in found):
        return ("a gate cannot be led past a link, so such a task is refused before any seat is paid; fix: "
                f"{world} so the gate runs in the seat world, or give each workspace its own install: "
                f"{own_install_lines('NAME', node_install(top))}")
    return ("failres puts the workspace's copies first on the gate's PYTHONPATH and, before the first dispatch, "
            "checks that the gate's python imports them from the workspace (a task where it does not is refused); "
            f"to run the gate in the seat world instead: {world}")


def _walk(base: Path) -> Iterator[Path]:
    """Files and links under `base` (links not followed), bounded to where installs record themselves.

    A venv (and each `.tox`/`.nox` env) records an install under `lib/pythonX.Y/site-packages`
    (a `.pth`, a finder module, `*.dist-info/direct_url.json`); `node_modules` links a
    package at its first level or under an `@scope`.
    """
    seen = 0
    node = base.name == "node_modules"
    for root, dirs, files in os.walk(base):
        here = Path(root)
        links = [d for d in dirs if (here / d).is_symlink()]
        for name in [*files, *links]:
            seen += 1
            if seen > _MAX_ENTRIES:
                return
            yield here / name
        top_level = here == base
        dirs[:] = [d for d in dirs if d not in links and _descend(d, node=node, top_level=top_level)]


def _descend(name: str, *, node: bool, top_level: bool) -> bool:
    if node:
        return top_level and (name.startswith("@") or name == ".bin")
    return (top_level or name in ("lib", "lib64", "site-packages") or name.startswith("python")
            or name.endswith(".dist-info"))


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _editable_here(path: Path, real_top: str) -> bool:
    try:
        record = json.loads(path.read_text(encoding="utf-8")[:_MAX_FILE_BYTES])
    except (OSError, ValueError):
        return False
    url = record.get("url", "") if isinstance(record, dict) else ""
    editable = isinstance(record, dict) and isinstance(record.get("dir_info"), dict) and record["dir_info"].get(
        "editable")
    return bool(editable) and isinstance(url, str) and url.startswith("file://") and _under(
        os.path.realpath(url[len("file://"):]), real_top)


def _line_into(path: Path, real_top: str) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:_MAX_FILE_BYTES]
    except OSError:
        return None
    for line in text.splitlines():
        for word in line.replace("'", " ").replace('"', " ").split():
            if word.startswith("/") and _under(os.path.realpath(word), real_top):
                return word
    return None
