"""Whether a gate can run in this checkout, asked of the checkout itself: for `init` and `doctor` alike.

`init` checked the gate it guessed (its program found, its interpreter holding pytest, a tox
`env_list` with a test environment) while `doctor` only looked for the program, said "runs"
for a `python3 -m pytest` whose python3 had no pytest, and named another fix than `init`. So
both read the checkout through one `ProjectLook` and judge through `gate_guess.check_gate`:
what `init` would write instead of a gate that cannot run is the fix `doctor` names.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from failres.agents.gate_guess import GateChoice, GateGuess, check_gate, gate_problem, guess_gate, src_layout_env
from failres.agents.program_path import find_program

_MODULE_TIMEOUT = 30.0


@dataclass
class ProjectLook:
    """The checkout at `top` as the gate checks read it: its top-level names, its files' text,
    the packages under `src/`, programs found by the rule `run` uses (each looked up once)."""

    top: Path | None
    path: str | None = None  # PATH to search; None: this process's own
    names: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    _found: dict = field(default_factory=dict)

    @classmethod
    def of(cls, top: Path | None, names: tuple[str, ...] | None = None, path: str | None = None) -> ProjectLook:
        if names is None:
            names = tuple(sorted(entry.name for entry in top.iterdir())) if top is not None and top.is_dir() else ()
        src = top / "src" if top is not None else None
        packages: tuple[str, ...] = ()
        if src is not None and src.is_dir():
            packages = tuple(p.name.removesuffix(".py") for p in src.iterdir()
                             if (p / "__init__.py").is_file() or (p.suffix == ".py" and p.is_file()))
        return cls(top, path, tuple(names), packages)

    def read(self, name: str) -> str | None:
        try:
            return (self.top / name).read_text(encoding="utf-8", errors="replace") if self.top is not None else None
        except OSError:
            return None

    def find(self, program: str) -> str | None:
        if program not in self._found:
            self._found[program] = find_program(program, self.top, self.path)
        return self._found[program]

    def has_module(self, python: str, module: str) -> bool:
        """Whether that interpreter can import `module` (asked without importing it), run from the top."""
        where = self.find(python)
        if where is None:
            return False
        ask = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({module!r}) else 1)"
        try:
            return subprocess.run([where, "-c", ask], cwd=self.top, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=_MODULE_TIMEOUT, check=False).returncode == 0
        except (OSError, subprocess.SubprocessError):
            return False

    def guessed_gate(self, *, in_world: bool) -> GateChoice:
        """The project's usual check, checked to run here (`gate_guess.check_gate`)."""
        guess = guess_gate(self.names, self.read, self.packages)
        return check_gate(guess, self.names, self.read, self.find, self.has_module, self.packages, in_world=in_world)

    def why_gate_cannot_run(self, command: tuple[str, ...], *, in_world: bool) -> str | None:
        """What stops a configured gate's command here, in `init`'s words; None when nothing does."""
        return gate_problem(GateGuess(command), set(self.names), self.read, self.find, self.has_module, in_world)

    def gate_instead(self, command: tuple[str, ...], env=None, *, in_world: bool) -> GateGuess | None:
        """The gate `init` writes here in place of one that cannot run (None: nothing here runs the tests),
        with the environment the configured gate has, or else the one init would give it (a src layout's)."""
        choice = check_gate(GateGuess(command), self.names, self.read, self.find, self.has_module, self.packages,
                            in_world=in_world)
        if choice.placeholder or choice.guess.command == command:
            return None
        if choice.guess.env:
            return choice.guess
        return replace(choice.guess, env=dict(env or src_layout_env(self.names, self.read, self.packages)))


def gate_lines(gate: str, guess: GateGuess) -> str:
    """The lines, to the word, that put `guess` in the place of gate `gate` in .failres.toml."""
    lines = f"[gates.{gate}] command = {json.dumps(list(guess.command))}"
    if guess.env:
        table = ", ".join(f"{name} = {json.dumps(value)}" for name, value in guess.env.items())
        lines += f", env = {{ {table} }}"
    return f"{lines} ({guess.why})" if guess.why else lines
