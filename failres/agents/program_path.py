"""Where a command's program is found, and what to write when it is not: one rule for every reader.

`init` wrote a gate of `tox -q` on a machine without tox, and `doctor` then told the person
to "put it on PATH" while `init` had said "a path from the repository top": two rules for
one question, so neither could be trusted. The rule is the one `run` applies, written once:

- a bare name (`pytest`, `claude`) is looked up on PATH;
- a name with a slash is a path: absolute as it stands, relative from the repository top
  (seats and workspace gates run in a checkout of the same tree, and inside the seat world
  the workspace stands at the top, with the environment dirs such as `.venv/` at their place).

A program spelled with a placeholder (`{repo}/tools/agent`) is resolved once the placeholder
is filled, so it is not judged here.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

WHERE_PROGRAMS_ARE = "a program on PATH, or a path from the repository top"


def find_program(program: str, top: Path | None, path: str | None = None) -> str | None:
    """Where `program` is (an executable file), by the rule above; None when it is not there."""
    if not program:
        return None
    if "/" not in program:
        return shutil.which(program, path=path if path is not None else os.environ.get("PATH", os.defpath))
    candidate = Path(program) if os.path.isabs(program) or top is None else Path(top) / program
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


def is_templated(program: str) -> bool:
    """Whether the program is spelled with a placeholder, so only a run can say where it is."""
    return "{" in program


def not_found_detail(program: str) -> str:
    """What is wrong, in the rule's own words."""
    if "/" in program:
        return f'"{program}" is not an executable file (a path from the repository top, or absolute)'
    return f'"{program}" is not on PATH'


def not_found_fix(program: str, install: str | None = None) -> str:
    """How to make it found: the same sentence wherever a missing program is named."""
    name = PurePosixPath(program).name or program
    rule = f"name it in the command as {WHERE_PROGRAMS_ARE}"
    if install:
        return f"install it: {install}; or {rule}"
    return f'{rule} (e.g. "{name}", ".venv/bin/{name}")'


def missing_program(program: str, install: str | None = None) -> str:
    """The one line for a program that is not there: what is missing and how to fix it."""
    return f'"{program}" cannot be found: {not_found_fix(program, install)}'
