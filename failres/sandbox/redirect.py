"""Where no world runs: the gate led to the workspace's files and proven so, or not judged at all.

Without a world, the person's `.venv/` is the trap `environment` describes: an editable
install puts the checkout's `src/` on the import path, so a gate that runs the venv's
python imports the person's files, and a seat's wrong fix is committed green while
the person's own uncommitted fix sits in the checkout. A warning is not enough: the run
goes on and says `committed`.

So before anything is judged, each import root an environment dir takes from the
checkout (a `.pth` line, an `__editable__` finder's mapping) is named at its place in
the workspace, first on the gate's `PYTHONPATH`; `PYTHONPATH` comes before every `.pth`
entry and before any finder an editable install adds, which is how Python resolves
imports. Then a canary proves it: each environment's own interpreter, with the gate's
environment, is asked where each package it installs from the checkout is found, and
every answer must be inside the workspace. Where one is not (a `.pth` that inserts the
checkout first by code, a package compiled in place), the task is `gate-unavailable`
before any seat is paid, with a fix; a node_modules link into the checkout cannot be
redirected at all, so it is refused the same way.

Reading the environment dirs is reading the person's checkout, never a workspace: the
canary runs before the first dispatch, on the workspace as the integration head has it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from failres.sandbox.environment import PointsIn, own_install_lines, pointing_into_checkout

_CANARY_TIMEOUT = 30.0
_MAX_PACKAGES = 64
_FINDER_MAPPING = re.compile(r"^MAPPING\s*(?::[^=]*)?=\s*(\{.*?\})\s*$", re.MULTILINE | re.DOTALL)
# Asks where each named top-level package is found, without importing it.
_CANARY = (
    "import importlib.util, json, sys\n"
    "out = {}\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        spec = importlib.util.find_spec(name)\n"
    "    except Exception as error:\n"
    "        out[name] = 'error: ' + type(error).__name__\n"
    "        continue\n"
    "    out[name] = (spec.origin or (list(spec.submodule_search_locations or [''])[0])) if spec else ''\n"
    "print(json.dumps(out))\n"
)


@dataclass(frozen=True)
class Redirect:
    """What the gate needs, without a world, to import the workspace's files instead of the person's."""

    roots: tuple[str, ...] = ()          # import roots in the workspace, first on PYTHONPATH
    packages: tuple[str, ...] = ()       # the top-level names the environment installs from the checkout
    interpreters: tuple[str, ...] = ()   # each environment's own python (in the person's checkout)
    refused: tuple[PointsIn, ...] = ()   # what cannot be redirected (a node_modules link)
    names: tuple[str, ...] = ()          # the environment dirs looked at (relative to the top, or absolute)

    @property
    def needed(self) -> bool:
        return bool(self.roots or self.refused)


def plan_redirect(top: Path, workspace: Path, names: Sequence[str]) -> Redirect:
    """The redirect for the environment dirs `names` (relative to `top`, or absolute: an environment a
    gate runs from outside the checkout) onto `workspace`."""
    real_top = os.path.realpath(top)
    roots: list[str] = []
    packages: list[str] = []
    interpreters: list[str] = []
    refused: list[PointsIn] = []
    found_in = [(found, top / name) for name in names for found in pointing_into_checkout(top, (name,))]
    for found, env_root in found_in:
        path = top / found.where
        if found.what.startswith("links"):
            refused.append(found)
            continue
        python = env_root / "bin" / "python"
        if python.exists() and str(python) not in interpreters:
            interpreters.append(str(python))
        for checkout_root, names_here in _checkout_roots(path, real_top):
            rel = os.path.relpath(checkout_root, real_top)
            inside = str(workspace if rel == "." else workspace / rel)
            if inside not in roots:
                roots.append(inside)
            packages += [n for n in names_here if n not in packages]
    return Redirect(tuple(roots), tuple(packages[:_MAX_PACKAGES]), tuple(interpreters), tuple(refused), tuple(names))


def redirected_env(redirect: Redirect, env: Mapping[str, str]) -> dict[str, str]:
    """`env` with the workspace's import roots first on PYTHONPATH (the gate's own entries after them)."""
    out = dict(env)
    if redirect.roots:
        rest = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]
        out["PYTHONPATH"] = os.pathsep.join([*redirect.roots, *[p for p in rest if p not in redirect.roots]])
    return out


def canary(redirect: Redirect, *, env: Mapping[str, str], workspace: Path) -> str | None:
    """None when every package is found in the workspace by every interpreter; else what was found where."""
    if not redirect.packages:
        return None
    real_workspace = os.path.realpath(workspace)
    for python in redirect.interpreters:
        try:
            done = subprocess.run([python, "-c", _CANARY, *redirect.packages], cwd=workspace, env=dict(env),
                                  capture_output=True, timeout=_CANARY_TIMEOUT, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"{python} could not be asked where it imports from ({type(error).__name__})"
        try:
            answers = json.loads(done.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
        except (ValueError, IndexError):
            return f"{python} could not be asked where it imports from (exit {done.returncode})"
        for name in redirect.packages:
            origin = str(answers.get(name) or "")
            real = os.path.realpath(origin) if origin.startswith("/") else origin
            if not (real == real_workspace or real.startswith(real_workspace + "/")):
                return f"{os.path.basename(os.path.dirname(os.path.dirname(python)))}'s python imports {name} from " \
                       f"{origin or 'nowhere'}, not from the workspace"
    return None


def refusal_message(gate: str, why: str, install: tuple[str, ...] | None = None,
                    world: str = "install bubblewrap", code_line: tuple[str, str, str] | None = None) -> str:
    """The gate-unavailable message when the gate cannot be led to the workspace, with the fixes.

    `install`: the node install that makes a workspace's own node_modules, named to the word
    (a link's refusal). `code_line`: (file, line, its environment's python) for a `.pth` line that
    runs code to put the checkout first, which the canary then finds (`code_path_line`): that line is
    what to take out. Without either, what a workspace's own install needs is the project's affair,
    so the message says which keys hold it and what to look at. `world`: what gives this machine the
    seat world (`before_run.world_fix`).
    """
    start = (f"gate {gate} would judge your checkout, not the workspace: {why}; without a seat world failres "
             f"cannot make it import the workspace's files, so it judges nothing. fix: {world} so gates "
             "run in the seat world (git failres doctor says whether it can run here), or ")
    if code_line is not None:
        where, line, python = code_line
        return (start + f"take out of {where} the line `{line}`, which runs at every start of that python and "
                "puts your checkout ahead of the gate's PYTHONPATH (an old `setup.py develop` writes such lines; "
                f"{python} -m pip install -e . installs the project the way failres leads to the workspace)")
    if install is not None:
        return start + f"give each workspace its own install: {own_install_lines(gate, install)}"
    return start + (f"give each workspace its own environment: a [gates.{gate}] setup that makes it in the "
                    f"workspace, keep = [its directory], the gate's command naming its interpreter from the "
                    "repository top, and [workspace] environment = []; where the gate's python found the package "
                    "instead, said first here, is what to look at")


def code_path_line(top: Path, names: Sequence[str]) -> tuple[str, str, str] | None:
    """The first `.pth` line in the environment dirs `names` that runs code naming a directory of the
    checkout (what the redirect cannot get ahead of): (its file as named, the line, that environment's
    python from the top, or by its absolute path outside it)."""
    real_top = os.path.realpath(top)
    for name in names:
        for found in pointing_into_checkout(top, (name,)):
            path = top / found.where
            if path.suffix != ".pth":
                continue
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                named = _named_dir(line.strip())
                if line.strip().startswith("import") and named and _under(named, real_top):
                    python = top / name / "bin" / "python"
                    shown = name if os.path.isabs(name) else str(PurePosixPath(name))
                    return found.where, line.strip(), f"{shown}/bin/python" if python.exists() else "python"
    return None


def _named_dir(line: str) -> str:
    """The first absolute directory a `.pth` code line names, resolved ("" for none)."""
    for word in line.replace("'", " ").replace('"', " ").replace("(", " ").replace(")", " ").split():
        if word.startswith("/"):
            return os.path.realpath(word.rstrip(",;"))
    return ""


def _checkout_roots(path: Path, real_top: str) -> list[tuple[str, list[str]]]:
    """The checkout dirs an install file puts on the import path, each with the packages found there."""
    if path.name == "direct_url.json":
        return []  # the .pth or finder beside it says where; this one only says "editable"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:256 * 1024]
    except OSError:
        return []
    out: list[tuple[str, list[str]]] = []
    if path.suffix == ".py":
        for name, target in _finder_mapping(text).items():
            real = os.path.realpath(target)
            if _under(real, real_top):
                out.append((os.path.dirname(real), [name]))
        return out
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("import"):
            continue
        real = os.path.realpath(line)
        if _under(real, real_top) and os.path.isdir(real):
            out.append((real, _top_level_names(Path(real))))
    return out


def _finder_mapping(text: str) -> dict[str, str]:
    """An `__editable__` finder's `MAPPING` (package name -> its dir), read as a literal, never run."""
    match = _FINDER_MAPPING.search(text)
    if not match:
        return {}
    try:
        value = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(value,
                                                                                                       dict) else {}


def _top_level_names(root: Path) -> list[str]:
    """The importable top-level names in an import root: packages and modules."""
    names = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not name.isidentifier() and not name.endswith(".py"):
            continue
        if entry.is_dir(follow_symlinks=False) and name.isidentifier() and (Path(entry.path) / "__init__.py").exists():
            names.append(name)
        elif entry.is_file(follow_symlinks=False) and name.endswith(".py") and name[:-3].isidentifier():
            names.append(name[:-3])
    return names[:_MAX_PACKAGES]


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")
