"""What the gate said at the integration head, before any seat is paid to change a thing.

A gate that cannot run at all — its program missing, pytest collecting nothing, the
package not importable — is red on every tree, so a fixer sent after it repairs the
environment at best and burns its budget at worst (one such dispatch took minutes on a
src-layout project). Run once at the head, the gate tells those apart from an ordinary
red verdict before the first dispatch; a gate already green there says the task may be
done.

The rule (`judge_at_head`, pure) for "cannot run", in order:

1. the program could not be started, or the shell said so: exit 127 (not found) or
   126 (not executable);
2. pytest's own "I did not test anything" exits: 2 (interrupted — in practice, errors
   while collecting), 4 (usage error: a bad option, a missing path), 5 (no tests
   collected). Those numbers mean something else to other programs (`make` exits 2 on
   any failure, `grep` 2 on a bad file), so they count only when the gate *is* pytest
   (its command names `pytest` or `-m pytest`) or its output carries pytest's own words
   for them ("errors during collection", "no tests ran", "ERROR: usage:");
3. a module that cannot be imported (`ModuleNotFoundError`, `ImportError: cannot import
   name`) — the output says which — or the module a `python -m MODULE` gate runs is not
   installed in that interpreter (Python's own "python3: No module named pytest": a gate
   guessed as `python3 -m pytest` on a machine whose python3 has no pytest).

4. in the seat world, a write refused as "Read-only file system": at the head no seat has
   changed a thing, and the workspace is writable, so what the gate writes into is one of
   the person's environment directories the world shows read-only (`tox` keeping its logs in
   `.tox/`) or a place outside: no tree of the task's would run there.

Each of those is the *task's* job, not the environment's, when what it names lies in the
task's files: a gate that runs `tests/test_new.py`, which the task is to write, fails to
find it at the head as it should; so does `import pkg.new` when `src/pkg/new.py` is in
scope. Then the verdict stays an ordinary red and the seat is dispatched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from lessons.frozen import record
from failres.agents.gate_guess import ENV_RUNNERS
from failres.agents.program_path import not_found_fix

GREEN = "green"
RED = "red"
UNAVAILABLE = "unavailable"

# pytest's exit codes that mean "no test verdict at all" (pytest.ExitCode).
PYTEST_NO_VERDICT = {
    2: "pytest was interrupted before any test ran (usually: errors while collecting the tests)",
    4: "pytest was called wrongly (a usage error: an unknown option, or a path that does not exist)",
    5: "pytest collected no tests",
}
_PYTEST_WORDS = re.compile(
    r"errors? during collection|^no tests ran|^ERROR: usage:|^ERROR: file or directory not found|"
    r"^ERROR: found no collectors|^ERROR: not found:|pytest: error:", re.MULTILINE)
_NOT_FOUND_PATH = re.compile(r"^ERROR: (?:file or directory not found|not found): (\S+)", re.MULTILINE)
_NO_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")
# `from pkg import _version` inside pkg/__init__.py names the package "partially initialized"
# (Python's guess at a circular import): what is missing is the submodule all the same.
_CANNOT_IMPORT = re.compile(r"ImportError: cannot import name '(\w+)' from (?:partially initialized module )?'([\w.]+)'")
# What Python itself prints when `python -m MODULE` names a module it does not have.
_NO_RUNNER = re.compile(r"^\S*python[\d.]*: No module named ([\w.]+)", re.MULTILINE)
_SHELL_NOT_FOUND = re.compile(r"(?:^|: )(\S+?): (?:command )?not found", re.MULTILINE)
# A write the kernel refused on a read-only mount, as Python, the C library and shells say it.
_READ_ONLY = re.compile(r"\[Errno 30\] Read-only file system(?:: '[^']*')?|\bEROFS\b|: Read-only file system\b")


@record
class HeadVerdict:
    """What a gate run at the integration head means for the task."""

    kind: str  # GREEN, RED or UNAVAILABLE
    cause: str = ""  # UNAVAILABLE: why the gate cannot run
    fix: str = ""  # UNAVAILABLE: what would most likely make it run

    @property
    def message(self) -> str:
        return f"{self.cause}; likely fix: {self.fix}" if self.fix else self.cause


@record
class HeadRun:
    """One gate run at the head, as plain data."""

    gate: str
    argv: tuple[str, ...]
    exit_code: int | None
    not_found: bool
    timed_out: bool
    output: str
    workspace: str = ""  # the workspace's path, so absolute paths in the output can be read as the task's
    src_packages: tuple[str, ...] = ()  # top-level packages under src/ at the head (for the fix)
    # Files the person's checkout has and the workspace lacks, among those a missing module
    # could be (a generated, ignored `src/pkg/_version.py`): the fix is to include them.
    generated: tuple[str, ...] = ()
    pythonpath: str = ""  # the gate's own PYTHONPATH, as configured ("" for none)
    # Where no world runs: the programs of the person's `node_modules/.bin` (the workspace has
    # no node_modules of its own), so a program missing for that reason is named with its fix.
    checkout_node_bin: frozenset[str] = frozenset()
    pytest_table: str = "tool.pytest.ini_options"  # where the project's pytest settings are (pyproject.toml)
    in_world: bool = False  # the gate ran in the seat world
    read_only: tuple[str, ...] = ()  # the person's environment dirs the world shows read-only
    # The lines of the gate `init` writes here in this one's place (`agents.gate_here`), "" for none:
    # the fix for a program that is not here, or an interpreter without the module it runs.
    instead: str = ""


def is_pytest_gate(argv: Sequence[str]) -> bool:
    """Whether the gate command runs pytest itself (`pytest ...`, `python -m pytest ...`)."""
    names = [PurePosixPath(arg).name for arg in argv]
    if any(name in ("pytest", "py.test") for name in names):
        return True
    return any(a == "-m" and b in ("pytest", "py.test") for a, b in zip(argv, argv[1:]))


def judge_at_head(run: HeadRun, allow: Sequence[str], *, in_scope) -> HeadVerdict:
    """GREEN, RED (an ordinary verdict: dispatch) or UNAVAILABLE (quarantine, no seat), with why.

    `in_scope(path)` says whether a repository path lies in the task's files.
    """
    if run.timed_out:
        return HeadVerdict(RED)  # a gate that ran out of time did run; the loop's own rule applies
    if run.exit_code == 0:
        return HeadVerdict(GREEN)
    program = run.argv[0] if run.argv else "?"
    config = f"[gates.{run.gate}] command in .failres.toml"
    if run.not_found or run.exit_code == 127:
        missing = _missing_program(run.output) or program
        if _mentions_scope((missing,), run, in_scope):
            return HeadVerdict(RED)
        cause = f'gate {run.gate} cannot run at the integration head: "{missing}" was not found (exit 127)'
        if missing in run.checkout_node_bin:
            # dequal's `npm test` runs `bundt` from node_modules/.bin: the fix to the command
            # that not_found_fix would give cannot help, the workspace lacks the whole directory.
            return HeadVerdict(UNAVAILABLE, cause + f"; it is in your checkout's node_modules/.bin, and without the "
                                                    "seat world a workspace has no node_modules/",
                               f'give each workspace its own: [gates.{run.gate}] setup = ["npm", "ci"] (["npm", '
                               '"install"] without a lockfile) and keep = ["node_modules/"], with [workspace] '
                               "environment = []; or run the gate in the seat world (git failres doctor says why "
                               "there is none)")
        init_writes = f"; or what init writes here: {run.instead}" if run.instead and missing == program else ""
        return HeadVerdict(UNAVAILABLE, cause, f"in {config}: {not_found_fix(missing)}{init_writes}")
    if run.exit_code == 126:
        return HeadVerdict(UNAVAILABLE, f"gate {run.gate} cannot run at the integration head: a program it starts is "
                                        "not executable (exit 126)",
                           f'make it executable (chmod +x), or run it through its interpreter (["bash", "{program}", '
                           f'...]) in {config}')
    refused = _READ_ONLY.search(run.output) if run.in_world else None
    if refused is not None:
        return HeadVerdict(UNAVAILABLE, f"gate {run.gate} cannot run at the integration head: it writes where the "
                                        f"seat world lets nothing be written ({refused.group(0)})",
                           _read_only_fix(run))
    runner = _NO_RUNNER.search(run.output)
    if runner is not None and not _modules_in_scope((runner.group(1),), in_scope):
        name = runner.group(1)
        return HeadVerdict(UNAVAILABLE, f"gate {run.gate} cannot run at the integration head: the interpreter it "
                                        f"starts has no module {name!r} to run (exit {run.exit_code})",
                           (f"{run.instead}; or install {name.split('.', 1)[0]} into that interpreter"
                            if run.instead else
                            f"install {name.split('.', 1)[0]} into that interpreter, or name one that has it "
                            f"(a virtualenv's bin/python) in {config}"))
    pytest = is_pytest_gate(run.argv) or bool(_PYTEST_WORDS.search(run.output))
    modules = unimportable_modules(run.output)
    if modules and not _modules_in_scope(modules, in_scope):
        # The module whose file is generated and missing is the one to name: its fix is exact.
        first = next((module for module in modules if set(module_paths(module)) & set(run.generated)), modules[0])
        return HeadVerdict(UNAVAILABLE, f"gate {run.gate} cannot run at the integration head: the module "
                                        f"{first!r} cannot be imported (exit {run.exit_code})",
                           _import_fix(first, run, config))
    if pytest and run.exit_code in PYTEST_NO_VERDICT:
        named = tuple(_NOT_FOUND_PATH.findall(run.output))
        if modules or _mentions_scope(named, run, in_scope):
            return HeadVerdict(RED)  # what is missing is the task's to write
        fix = {2: "run the gate by hand in a fresh clone and fix what fails to collect (an import, a conftest.py)",
               4: f"check the arguments and paths in {config}",
               5: f"point the gate at the tests (a path, or the project's testpaths) in {config}"}[run.exit_code]
        return HeadVerdict(UNAVAILABLE, f"gate {run.gate} cannot run at the integration head: "
                                        f"{PYTEST_NO_VERDICT[run.exit_code]} (exit {run.exit_code})", fix)
    return HeadVerdict(RED)


def _read_only_fix(run: HeadRun) -> str:
    """What lets the gate run where the world shows the person's environment dirs read-only.

    tox and nox write into their environment directory (logs, a recreate check) whenever they
    run, and a world lends that directory read-only, as it lends every environment directory
    and keeps what a setup made: so the gate is that environment's own interpreter instead,
    which only reads it."""
    program = PurePosixPath(run.argv[0]).name if run.argv else ""
    own = ENV_RUNNERS.get(program)
    if own is not None:
        directory, option = own
        env = next((b for a, b in zip(run.argv, run.argv[1:]) if a in option), "ENV")
        src = ', env = { PYTHONPATH = "src" }' if run.src_packages and "src" not in run.pythonpath else ""
        return (f"{program} writes into {directory}/ whenever it runs, and the seat world shows {directory}/ "
                f"read-only; run that environment's own interpreter as the gate: [gates.{run.gate}] command = "
                f'["{directory}/{env}/bin/python", "-m", "pytest", "-q"]{src} (make the environment first, in your '
                f"checkout: {program} {'-e' if program == 'tox' else '-s'} {env} "
                f"{'--notest' if program == 'tox' else '--install-only'})")
    shown = ", ".join(f"{name}/" for name in run.read_only) or "nothing of yours"
    return (f"the world shows read-only {shown} and everything outside the workspace; make the gate write inside "
            f"the workspace (its cache or log directory, an option of its own), or leave that directory out of "
            "[workspace] environment")


def setup_failed_verdict(gate: str, what: str) -> HeadVerdict:
    """A setup that failed: nothing the gate says afterwards would be about the task."""
    return HeadVerdict(UNAVAILABLE, f"gate {gate}'s setup {what}",
                       f"run [gates.{gate}] setup by hand in a fresh clone of the integration head and fix it")


def no_runner_module(output: str) -> str | None:
    """The module Python said a `python -m MODULE` gate's interpreter does not have, or None."""
    found = _NO_RUNNER.search(output)
    return found.group(1) if found else None


def _missing_program(output: str) -> str | None:
    found = _SHELL_NOT_FOUND.search(output)
    return found.group(1) if found else None


def unimportable_modules(output: str) -> list[str]:
    """The modules the output says cannot be imported, first named first. `cannot import name
    'N' from 'M'` gives M, then M.N: the name may be a submodule (`from em import _version`,
    a file hatch-vcs generates), whose file is what a fix would bring."""
    modules = list(dict.fromkeys(_NO_MODULE.findall(output)))
    for name, module in _CANNOT_IMPORT.findall(output):
        modules += [found for found in (module, f"{module}.{name}") if found not in modules]
    return modules


def module_paths(module: str) -> list[str]:
    """Repository paths where `module` (and each package on the way) could be defined."""
    parts = module.split(".")
    paths = []
    for root in ("", "src/", "lib/"):
        for depth in range(1, len(parts) + 1):
            stem = root + "/".join(parts[:depth])
            paths += [stem + ".py", stem + "/__init__.py"]
    return paths


def _modules_in_scope(modules: Sequence[str], in_scope) -> bool:
    return any(in_scope(path) for module in modules for path in module_paths(module))


def _mentions_scope(paths: Sequence[str], run: HeadRun, in_scope) -> bool:
    for path in paths:
        relative = path
        if run.workspace and path.startswith(run.workspace.rstrip("/") + "/"):
            relative = path[len(run.workspace.rstrip("/")) + 1:]
        relative = relative.split("::", 1)[0]
        relative = relative[2:] if relative.startswith("./") else relative
        if relative and in_scope(relative):
            return True
    return False


def _import_fix(module: str, run: HeadRun, config: str) -> str:
    """The one change that would make `module` importable, in the exact lines to write.

    Each is tried in a test on a project that needs it: the include of a generated file
    (hatch-vcs, setuptools-scm write `_version.py`, ignored, so a workspace lacks it), the
    import path of a src layout (in the table the project really uses), an install.
    """
    top = module.split(".", 1)[0]
    generated = [path for path in module_paths(module) if path in run.generated]
    if generated:
        listed = ", ".join(f'"{path}"' for path in generated[:1])
        return (f"{generated[0]} is in your checkout but not in the workspace (it is generated and not tracked): "
                f"add [workspace] include = [{listed}] to .failres.toml, or generate it in a "
                f"[gates.{run.gate}] setup")
    if top in run.src_packages and "src" not in run.pythonpath.split(":"):
        return (f'the package lives under src/: give the gate PYTHONPATH=src ([gates.{run.gate}] env = '
                f'{{ PYTHONPATH = "src" }}), set pythonpath = ["src"] under [{run.pytest_table}] in pyproject.toml, '
                f"or install the project in [gates.{run.gate}] setup")
    return (f"install {top} where the gate runs (a [gates.{run.gate}] setup, or the interpreter the gate names), "
            f"or fix {config}")


def pytest_table(pyproject: str) -> str:
    """Where a project keeps its pytest settings, from its `pyproject.toml`'s text: `[tool.pytest]`
    (pytest 9's own) or `[tool.pytest.ini_options]`."""
    import tomllib

    try:
        tool = tomllib.loads(pyproject).get("tool", {})
    except ValueError:
        return "tool.pytest.ini_options"
    table = tool.get("pytest") if isinstance(tool, dict) else None
    if isinstance(table, dict) and table and "ini_options" not in table:
        return "tool.pytest"
    return "tool.pytest.ini_options"
