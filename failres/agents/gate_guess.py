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
from dataclasses import field, replace

from lessons.frozen import record

PYTEST: tuple[str, ...] = ("python3", "-m", "pytest", "-q")

# Read a top-level file's text, or None when it is not there (or not readable).
Reader = Callable[[str], "str | None"]


@record
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
    # pytest 9 reads its own `[tool.pytest]` table as well as the older `[tool.pytest.ini_options]`.
    for table in (pytest, pytest.get("ini_options", {})) if isinstance(pytest, dict) else ():
        if isinstance(table, dict) and table.get("pythonpath"):
            return True
    for name in ("pytest.ini", "tox.ini", "setup.cfg"):
        if name in names and _INI_PYTHONPATH.search(read(name) or ""):
            return True
    return False


# ---- whether the guess can run here ----
#
# A trial on a real src-layout project: `tox -q` guessed from its tox.ini, on a machine
# without tox; the first run quarantined every task `gate-unavailable`. So `init` checks
# the guess before it writes it: the program is found by the rule `run` uses
# (`agents.program_path`), and a tox gate has an environment that runs the tests. When the
# guess cannot run, the project's own virtualenv (or python3) with pytest in it is the
# gate instead; failing that, the guess is written as a placeholder, marked as one.

# Where a checkout's own interpreter usually is, as a path from the repository top.
VENV_PYTHONS = (".venv/bin/python", "venv/bin/python")
# Runners that keep their environments in a directory of the checkout (and write there whenever
# they run), and the options that name one environment.
ENV_RUNNERS = {"tox": (".tox", ("-e", "--env")), "nox": (".nox", ("-s", "--session", "-e", "--sessions"))}
_ENV_DIRS = {runner: directory for runner, (directory, _) in ENV_RUNNERS.items()}
_TEST_ENV = re.compile(r"(?:^|[-_{,])(?:py(?:py)?[\d{.]*|tests?|unit|pytest)(?:$|[-_},])", re.IGNORECASE)
_INI_ENVLIST = re.compile(r"^\s*env_?list\s*=\s*(.*(?:\n[ \t]+\S.*)*)", re.MULTILINE | re.IGNORECASE)

# (program or path) -> where it is, or None; (interpreter, module) -> whether it has it.
Finder = Callable[[str], "str | None"]
HasModule = Callable[[str, str], bool]


@record
class GateChoice:
    """The gate `init` writes, and what it says about it (one line, "" when the guess runs)."""

    guess: GateGuess
    note: str = ""
    placeholder: bool = False  # nothing found that can run: the guess, marked for the person to replace


def tox_envs(names: Iterable[str], read: Reader) -> tuple[str, ...] | None:
    """The environments tox runs by default (`env_list`/`envlist` in tox.ini, `[tool.tox]` in
    pyproject.toml, `[tox:tox]` in setup.cfg); None when none is declared (tox runs `py`)."""
    names = set(names)
    for name, section in (("tox.ini", "tox"), ("setup.cfg", "tox:tox")):
        if name in names:
            found = _ini_envlist(read(name) or "", section)
            if found is not None:
                return found
    tool = _toml(read("pyproject.toml")).get("tool", {}) if "pyproject.toml" in names else {}
    tox = tool.get("tox") if isinstance(tool, dict) else None
    if isinstance(tox, dict):
        listed = tox.get("env_list", tox.get("envlist"))
        if isinstance(listed, list):
            return tuple(str(env) for env in listed)
        if isinstance(tox.get("legacy_tox_ini"), str):
            return _ini_envlist(tox["legacy_tox_ini"], "tox")
    return None


def _ini_envlist(text: str, section: str) -> tuple[str, ...] | None:
    body = re.split(r"^\[" + re.escape(section) + r"\]\s*$", text, maxsplit=1, flags=re.MULTILINE)
    if len(body) < 2:
        return None
    own = re.split(r"^\[", body[1], maxsplit=1, flags=re.MULTILINE)[0]
    found = _INI_ENVLIST.search(own)
    if found is None:
        return None
    return tuple(env for env in re.split(r"[\s,]+(?![^{]*})", found.group(1).strip()) if env)


def is_test_env(env: str) -> bool:
    """Whether a tox environment runs tests by its name: `py`, `py311`, `py{310,311}-django`, `test`, `unit`."""
    return bool(_TEST_ENV.search(env))


def check_gate(guess: GateGuess, names: Iterable[str], read: Reader, find: Finder, has_module: HasModule,
               src_packages: Iterable[str] = (), *, in_world: bool = False) -> GateChoice:
    """The guess when it can run here; else a gate that can, or the guess marked as a placeholder.

    `in_world`: the runs will judge in the seat world, where tox and nox cannot run (each writes
    into its environment directory, which the world lends read-only): there a test environment's
    own interpreter, or the checkout's virtualenv, is the gate."""
    names = set(names)
    python = bool(names & {"pyproject.toml", "setup.py", "setup.cfg", "tox.ini"})
    runner = guess.command[0] if guess.command else ""
    if in_world and runner in _ENV_DIRS:
        envs = tox_envs(names, read) if runner == "tox" else None
        own = tuple(f"{_ENV_DIRS[runner]}/{env}/bin/python" for env in envs or ()
                    if is_test_env(env) and "{" not in env)
        venv = _pytest_in(own + VENV_PYTHONS, find, has_module) if python else None
    else:
        venv = _pytest_in(VENV_PYTHONS, find, has_module) if python else None
    if guess.command == PYTEST and venv is not None:
        # The checkout's own virtualenv is what its people run the tests with; a bare python3
        # would lack the project's dependencies even where it has pytest.
        return GateChoice(replace(guess, command=(venv, *PYTEST[1:]), why="; ".join(filter(None, (_where(venv), guess.why)))))
    problem = gate_problem(guess, names, read, find, has_module, in_world)
    if problem is None:
        return GateChoice(guess)
    said = f"the gate guessed ({' '.join(guess.command)}: {guess.why or 'the default'}) cannot run here: {problem}"
    interpreter = venv or (_pytest_in(("python3",), find, has_module) if python else None)
    if interpreter is not None:
        command = (interpreter, *PYTEST[1:])
        return GateChoice(GateGuess(command, src_layout_env(names, read, src_packages), why=_where(interpreter)),
                          f"{said}; wrote {' '.join(command)} instead ({_where(interpreter)})")
    return GateChoice(guess, f"{said}; nothing found that runs the tests ({_looked(python)}): the gate written is a "
                             "placeholder, replace its command with your project's check", placeholder=True)


def src_layout_env(names: Iterable[str], read: Reader, src_packages: Iterable[str]) -> dict[str, str]:
    """What a pytest gate needs in its environment to import a src layout: `PYTHONPATH=src`, unless
    the project's pytest configuration sets `pythonpath` itself (or there is no src layout)."""
    names = set(names)
    tool = _toml(read("pyproject.toml")).get("tool", {}) if "pyproject.toml" in names else {}
    if not tuple(src_packages) or _pytest_sets_pythonpath(tool if isinstance(tool, dict) else {}, names, read):
        return {}
    return {"PYTHONPATH": "src"}


def _looked(python: bool) -> str:
    return f"no pytest in {', '.join(v.split('/bin/')[0] for v in VENV_PYTHONS)} or python3" if python else \
        "not a Python project"


def _pytest_in(interpreters: Iterable[str], find: Finder, has_module: HasModule) -> str | None:
    return next((python for python in interpreters if find(python) is not None and has_module(python, "pytest")),
                None)


def _where(interpreter: str) -> str:
    if "/" in interpreter:
        return f"pytest is installed in {interpreter.split('/bin/')[0]}"
    return f"{interpreter} on PATH has pytest"


def gate_problem(guess: GateGuess, names: set[str], read: Reader, find: Finder, has_module: HasModule,
                 in_world: bool = False) -> str | None:
    """Why the gate's command cannot run here, in one clause; None when nothing here stops it."""
    from failres.agents.program_path import not_found_detail

    program = guess.command[0]
    if find(program) is None:
        return not_found_detail(program)
    if in_world and program in _ENV_DIRS:
        return (f"{program} writes into {_ENV_DIRS[program]}/ whenever it runs, which the seat world lends "
                "read-only")
    module = next((b for a, b in zip(guess.command, guess.command[1:]) if a == "-m"), None)
    if module is not None and not has_module(program, module):
        return f"{program} has no module {module!r}"
    if program == "tox":
        envs = tox_envs(names, read)
        if envs is not None and not any(is_test_env(env) for env in envs):
            return f"tox's env_list ({', '.join(envs) or 'empty'}) has no environment that runs the tests"
    if tuple(guess.command[:2]) == ("npm", "test") and "package.json" in names and not _npm_test(read):
        # npm exits 1 with "Missing script: test" on every tree: red that no fix can turn green.
        return 'package.json has no "test" script, so npm test fails on every tree'
    return None


# ---- what the gate needs that git does not track ----
#
# em-keyboard's package imports `_version.py`, which hatch-vcs writes at install time and git
# ignores: a workspace, made from the commit, lacks it, and the first preflight stopped the run
# to ask for `[workspace] include`. A build backend declares that file; `init` includes it when
# the checkout has it untracked.

def declared_version_files(pyproject: str | None) -> tuple[str, ...]:
    """The files hatch-vcs (`[tool.hatch.build.hooks.vcs] version-file`) or setuptools-scm
    (`[tool.setuptools_scm] version_file`, `write_to`) write, as paths from the top (pure)."""
    tool = _toml(pyproject).get("tool", {})
    if not isinstance(tool, dict):
        return ()
    found = []
    hatch = tool.get("hatch", {})
    vcs = hatch.get("build", {}).get("hooks", {}).get("vcs", {}) if isinstance(hatch, dict) and isinstance(
        hatch.get("build"), dict) and isinstance(hatch["build"].get("hooks"), dict) else {}
    if isinstance(vcs, dict):
        found.append(vcs.get("version-file"))
    scm = tool.get("setuptools_scm", {})
    if isinstance(scm, dict):
        found += [scm.get("version_file"), scm.get("write_to")]
    return tuple(dict.fromkeys(path.strip().removeprefix("./") for path in found
                               if isinstance(path, str) and path.strip() and ".." not in path.split("/")
                               and not path.startswith("/")))
