"""The gate `init --agent` writes: the project's own check, in a form that can run in a workspace.

A guess from the top-level file names alone wrote `python3 -m pytest -q` for every Python
project; in a src layout (`src/pkg/`) every test module then failed to collect with
`ModuleNotFoundError`, and the fixer was sent to repair the environment. So:

- a runner the project declares is what its people run, and wins: tox (`tox.ini`, or
  `[tool.tox]` in pyproject.toml), nox (`noxfile.py`), hatch (a `test` script, or
  hatch's own test environment);
- a project that is not Python (no pyproject.toml or setup.py) gets `npm test`
  (package.json), `cargo test` (Cargo.toml) or `go test ./...` (go.mod);
- otherwise pytest, with `PYTHONPATH=src` in the gate's
  environment when its packages live under `src/` and its pytest configuration does not
  already set `pythonpath` (pytest 7+ reads that itself).

Whatever is guessed, the first run checks it at the integration head before any seat is
dispatched (the preflight), and says what to change when it cannot run.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

PYTEST: tuple[str, ...] = ("python3", "-m", "pytest", "-q")

# Read a top-level file's text, or None when it is not there (or not readable).
Reader = Callable[[str], "str | None"]


@dataclass(frozen=True)
class GateGuess:
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    why: str = ""  # what the guess rests on, for the comment above the gate


def guess_gate(names: Iterable[str], read: Reader, src_packages: Iterable[str] = ()) -> GateGuess:
    """The project's usual check, from its top-level names, the text of a few of its files, and
    the packages under `src/` (directories with an `__init__.py`, or modules)."""
    names = set(names)
    pyproject = _toml(read("pyproject.toml")) if "pyproject.toml" in names else {}
    tool = pyproject.get("tool", {}) if isinstance(pyproject.get("tool"), dict) else {}
    if "tox.ini" in names or "tox" in tool:
        return GateGuess(("tox", "-q"), why="the project declares tox")
    if "noxfile.py" in names:
        return GateGuess(("nox",), why="the project declares nox (noxfile.py)")
    hatch = _hatch_gate(tool.get("hatch"))
    if hatch is not None:
        return hatch
    python = bool(names & {"pyproject.toml", "setup.py"})
    if not python:
        if "package.json" in names:
            return GateGuess(("npm", "test"), why="package.json" + (" has a test script" if _npm_test(read) else ""))
        if "Cargo.toml" in names:
            return GateGuess(("cargo", "test"), why="Cargo.toml")
        if "go.mod" in names:
            return GateGuess(("go", "test", "./..."), why="go.mod")
    packages = tuple(src_packages)
    if packages and not _pytest_sets_pythonpath(tool, names, read):
        return GateGuess(PYTEST, {"PYTHONPATH": "src"},
                         why=f"a src layout ({', '.join(sorted(packages)[:3])} under src/)")
    return GateGuess(PYTEST, why="a Python project" if python else "")


def _toml(text: str | None) -> dict:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _hatch_gate(hatch: object) -> GateGuess | None:
    if not isinstance(hatch, dict) or not isinstance(hatch.get("envs"), dict):
        return None
    envs = hatch["envs"]
    default = envs.get("default") if isinstance(envs.get("default"), dict) else {}
    scripts = default.get("scripts") if isinstance(default.get("scripts"), dict) else {}
    if "test" in scripts:
        return GateGuess(("hatch", "run", "test"), why="hatch's default environment has a test script")
    if "hatch-test" in envs:
        return GateGuess(("hatch", "test"), why="the project configures hatch's test environment")
    return None


def _npm_test(read: Reader) -> bool:
    try:
        scripts = json.loads(read("package.json") or "{}").get("scripts") or {}
    except (ValueError, AttributeError):
        return False
    return isinstance(scripts, dict) and "test" in scripts


_INI_PYTHONPATH = re.compile(r"^\s*pythonpath\s*=", re.MULTILINE)


def _pytest_sets_pythonpath(tool: dict, names: set[str], read: Reader) -> bool:
    pytest = tool.get("pytest", {})
    options = pytest.get("ini_options", {}) if isinstance(pytest, dict) else {}
    if isinstance(options, dict) and options.get("pythonpath"):
        return True
    for name in ("pytest.ini", "tox.ini", "setup.cfg"):
        if name in names and _INI_PYTHONPATH.search(read(name) or ""):
            return True
    return False
