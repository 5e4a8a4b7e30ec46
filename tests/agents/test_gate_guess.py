"""The gate `init --agent` writes is the project's own check, and can import a src-layout package."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import git
from failres.agents.gate_guess import PYTEST, guess_gate
from failres.initialise import init_repository


def files(**texts: str):
    return set(texts), lambda name: texts.get(name)


@pytest.mark.parametrize(("texts", "command"), [
    ({"tox.ini": "[tox]\n", "pyproject.toml": ""}, ("tox", "-q")),
    ({"pyproject.toml": "[tool.tox]\nlegacy_tox_ini = ''\n"}, ("tox", "-q")),
    ({"noxfile.py": "", "setup.py": ""}, ("nox",)),
    ({"pyproject.toml": "[tool.hatch.envs.default.scripts]\ntest = 'pytest'\n"}, ("hatch", "run", "test")),
    ({"pyproject.toml": "[tool.hatch.envs.hatch-test]\n"}, ("hatch", "test")),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, ("npm", "test")),
    ({"Cargo.toml": ""}, ("cargo", "test")),
    ({"go.mod": ""}, ("go", "test", "./...")),
    ({"pyproject.toml": "", "package.json": "{}"}, PYTEST),
    ({"README.md": ""}, PYTEST),
])
def test_the_projects_declared_runner_is_the_gate(texts, command):
    names, read = files(**texts)
    assert guess_gate(names, read).command == command


def test_a_src_layout_gets_pythonpath_src_in_the_gates_environment():
    names, read = files(**{"pyproject.toml": "[project]\nname = 'pkg'\n"})
    guess = guess_gate(names | {"src"}, read, ["pkg"])
    assert guess.command == PYTEST and dict(guess.env) == {"PYTHONPATH": "src"}


@pytest.mark.parametrize("texts", [
    {"pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['src']\n"},
    {"pyproject.toml": "[tool.pytest]\npythonpath = ['src']\n"},  # pytest 9's own table
    {"pyproject.toml": "", "pytest.ini": "[pytest]\npythonpath = src\n"},
])
def test_a_src_layout_whose_pytest_sets_pythonpath_itself_needs_none(texts):
    names, read = files(**texts)
    assert dict(guess_gate(names | {"src"}, read, ["pkg"]).env) == {}


def src_layout(top: Path) -> None:
    (top / "src" / "pkg").mkdir(parents=True)
    (top / "src" / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (top / "tests").mkdir()
    (top / "tests" / "test_pkg.py").write_text("from pkg import VALUE\n\n\ndef test_value():\n    assert VALUE == 2\n")
    (top / "pyproject.toml").write_text("[project]\nname = 'pkg'\nversion = '0'\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "a src layout")


def test_init_on_a_src_layout_writes_a_gate_whose_preflight_is_red_not_unavailable(plain_repo: Path, cli):
    src_layout(plain_repo)
    init_repository(plain_repo, hooks=False, agent="script")
    text = (plain_repo / ".failres.toml").read_text()
    gate = tomllib.loads(text)["gates"]["tests"]
    assert gate["env"] == {"PYTHONPATH": "src"} and gate["command"] == list(PYTEST)
    # The interpreter the tests run under has pytest; the gate is otherwise as written.
    (plain_repo / ".failres.toml").write_text(text.replace('"python3", "-m", "pytest"',
                                                           f'{json.dumps(sys.executable)}, "-m", "pytest"'))
    plan = plain_repo.parent / "plan.toml"
    plan.write_text('slug = "s"\n[[tasks]]\nid = "t1"\ntitle = "t"\nprompt = "p"\nfiles = ["src/pkg/__init__.py"]\n')
    result = cli(plain_repo, "run", str(plan), "--dry-run", "--preflight", "--json")
    doc = json.loads(result.out)
    assert [(p["task"], p["verdict"]) for p in doc["preflight"]] == [("t1", "red")], doc
