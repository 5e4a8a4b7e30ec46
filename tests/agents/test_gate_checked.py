"""`init` checks the gate it guesses: a program that is not here, or a tox without a test environment,
is replaced by the checkout's own pytest, or written as a marked placeholder, and said in one line."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import git, run_failres
from failres.agents.gate_guess import PYTEST, GateGuess, check_gate, is_test_env, tox_envs
from sandbox_projects import python_project, the_test_site_packages

# git and this run's python, no tox, no pytest on a bare python3 of PATH's own.
BARE_PATH = os.pathsep.join(["/usr/bin", "/bin"])
TOX = GateGuess(("tox", "-q"), why="the project declares tox")


def files(**texts: str):
    return set(texts), lambda name: texts.get(name)


@pytest.mark.parametrize(("texts", "envs"), [
    ({"tox.ini": "[tox]\nenvlist = py311, lint\n"}, ("py311", "lint")),
    ({"tox.ini": "[tox]\nenv_list =\n    lint\n    type\n[testenv]\ncommands = pytest\n"}, ("lint", "type")),
    ({"tox.ini": "[tox]\nenvlist = py{310,311}-django, docs\n"}, ("py{310,311}-django", "docs")),
    ({"tox.ini": "[testenv]\ncommands = pytest\n"}, None),
    ({"setup.cfg": "[metadata]\nname = x\n[tox:tox]\nenvlist = flake8\n"}, ("flake8",)),
    ({"pyproject.toml": "[tool.tox]\nenv_list = ['3.13', 'lint']\n"}, ("3.13", "lint")),
    ({"pyproject.toml": "[tool.tox]\nlegacy_tox_ini = '''\n[tox]\nenvlist = py312\n'''\n"}, ("py312",)),
])
def test_tox_env_lists_are_read_from_each_place_tox_reads_them(texts, envs):
    assert tox_envs(*files(**texts)) == envs


@pytest.mark.parametrize(("env", "tests"), [
    ("py", True), ("py311", True), ("py{310,311}-django", True), ("pypy3", True), ("unit", True),
    ("tests", True), ("lint", False), ("docs", False), ("type", False), ("flake8", False), ("copy", False),
])
def test_a_tox_environment_runs_tests_by_its_name(env, tests):
    assert is_test_env(env) is tests


def finder(*present: str):
    return lambda program: f"/found/{program}" if program in present else None


def test_a_guess_that_runs_here_is_kept():
    names, read = files(**{"tox.ini": "[tox]\nenvlist = py311\n"})
    assert check_gate(TOX, names, read, finder("tox"), lambda python, module: True).guess == TOX


def test_a_missing_tox_is_replaced_by_the_checkouts_venv_with_pytest_and_said_in_one_line():
    names, read = files(**{"tox.ini": "[tox]\nenvlist = py311\n", "pyproject.toml": ""})
    choice = check_gate(TOX, names, read, finder(".venv/bin/python", "python3"),
                        lambda python, module: python == ".venv/bin/python" and module == "pytest", ["pkg"])
    assert choice.guess.command == (".venv/bin/python", "-m", "pytest", "-q") and not choice.placeholder
    assert dict(choice.guess.env) == {"PYTHONPATH": "src"}
    assert choice.note == ('the gate guessed (tox -q: the project declares tox) cannot run here: "tox" is not on '
                           "PATH; wrote .venv/bin/python -m pytest -q instead (pytest is installed in .venv)")
    assert "\n" not in choice.note


def test_in_the_seat_world_tox_is_replaced_by_its_test_environments_own_interpreter():
    """tox writes into .tox/ whenever it runs, and the world lends .tox/ read-only: the gate that
    runs there is a test environment's own python, which only reads it."""
    names, read = files(**{"pyproject.toml": "[tool.tox]\nenv_list = ['lint', 'py3.11']\n"})
    choice = check_gate(TOX, names, read, finder("tox", ".tox/py3.11/bin/python", ".venv/bin/python"),
                        lambda python, module: module == "pytest", ["pkg"], in_world=True)
    assert choice.guess.command == (".tox/py3.11/bin/python", "-m", "pytest", "-q")
    assert dict(choice.guess.env) == {"PYTHONPATH": "src"}
    assert "tox writes into .tox/ whenever it runs, which the seat world lends read-only" in choice.note
    without = check_gate(TOX, names, read, finder("tox", ".tox/py3.11/bin/python"), lambda python, module: True)
    assert without.guess == TOX  # outside the world tox runs as it always did


def test_a_tox_without_a_test_environment_is_replaced_too():
    names, read = files(**{"tox.ini": "[tox]\nenvlist = lint, docs\n"})
    choice = check_gate(TOX, names, read, finder("tox", "python3"), lambda python, module: python == "python3")
    assert choice.guess.command == PYTEST
    assert "tox's env_list (lint, docs) has no environment that runs the tests" in choice.note


def test_a_python3_without_pytest_is_not_a_gate_that_runs():
    names, read = files(**{"pyproject.toml": ""})
    choice = check_gate(GateGuess(PYTEST), names, read, finder("python3"), lambda python, module: False)
    assert choice.placeholder and choice.guess.command == PYTEST
    assert "python3 has no module 'pytest'" in choice.note


def test_the_checkouts_venv_with_pytest_is_preferred_to_a_bare_python3():
    names, read = files(**{"pyproject.toml": ""})
    choice = check_gate(GateGuess(PYTEST), names, read, finder("python3", ".venv/bin/python"),
                        lambda python, module: True)
    assert choice.guess.command[0] == ".venv/bin/python" and choice.note == ""


def tox_project(top: Path) -> None:
    python_project(top)
    (top / "tox.ini").write_text("[tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n")
    git(top, "add", "tox.ini")
    git(top, "commit", "-q", "-m", "tox")


def init(top: Path, path: str):
    proc = run_failres(top, "init", "--agent", "script", "--no-hooks", env={**os.environ, "PATH": path})
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("world", ["auto", "off"])
def test_on_a_src_layout_with_a_venv_and_no_tox_init_writes_the_venvs_pytest_and_it_runs(tmp_path: Path, world):
    """In the seat world the workspace stands at the top with `.venv/` at its place; without one, the
    gate's `.venv/bin/python` is the checkout's all the same (and its imports are led to the workspace)."""
    top = tmp_path / "project"
    top.mkdir()
    tox_project(top)
    path = os.pathsep.join([str(Path(sys.executable).parent), BARE_PATH])
    proc = init(top, path)
    with (top / ".failres.toml").open("a") as config:
        config.write(f'\n[sandbox]\nmode = "{world}"\nread = {json.dumps([the_test_site_packages()])}\n')
    assert proc.stderr.splitlines()[0] == (
        'note: the gate guessed (tox -q: the project declares tox) cannot run here: "tox" is not on PATH; wrote '
        ".venv/bin/python -m pytest -q instead (pytest is installed in .venv)")
    assert proc.stdout.splitlines()[-1].endswith("git failres run plan.toml --dry-run --preflight")
    gate = tomllib.loads((top / ".failres.toml").read_text())["gates"]["tests"]
    assert gate["command"] == [".venv/bin/python", "-m", "pytest", "-q"]
    (top / "plan.toml").write_text('slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["src/calc/*.py"]\n')
    dry = run_failres(top, "run", "plan.toml", "--dry-run", "--preflight", "--json", env={**os.environ, "PATH": path})
    doc = json.loads(dry.stdout)
    # red, not unavailable: the gate written runs, and judges the head's bug.
    assert [(p["task"], p["verdict"]) for p in doc["preflight"]] == [("t1", "red")], doc


def test_where_nothing_runs_the_tests_the_gate_is_a_marked_placeholder_and_said_so(tmp_path: Path):
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "tox.ini").write_text("[tox]\nenvlist = py311\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "tox only")
    proc = init(top, BARE_PATH)
    warning = proc.stderr.splitlines()[0]
    assert warning.startswith('warning: the gate guessed (tox -q: the project declares tox) cannot run here: "tox" '
                              "is not on PATH; nothing found that runs the tests")
    assert warning.endswith("the gate written is a placeholder, replace its command with your project's check")
    text = (top / ".failres.toml").read_text()
    assert "# PLACEHOLDER: the gate guessed" in text
    assert tomllib.loads(text)["gates"]["tests"]["command"] == ["tox", "-q"]


@pytest.mark.parametrize("declared", ['[tool.hatch.build.hooks.vcs]\nversion-file = "src/calc/_version.py"\n',
                                      '[tool.setuptools_scm]\nversion_file = "src/calc/_version.py"\n'],
                         ids=["hatch-vcs", "setuptools-scm"])
def test_a_version_file_the_build_writes_and_git_ignores_is_included_by_init_and_the_gate_runs(tmp_path: Path,
                                                                                              declared: str):
    """em-keyboard's package imports the `_version.py` hatch-vcs writes: the first preflight once
    stopped the run to ask for the include that init can see is needed."""
    top = tmp_path / "project"
    top.mkdir()
    python_project(top)
    package = top / "src" / "calc" / "__init__.py"
    package.write_text("from calc import _version\n" + package.read_text())
    with (top / "pyproject.toml").open("a") as pyproject:
        pyproject.write(declared)
    with (top / ".gitignore").open("a") as ignore:
        ignore.write("src/calc/_version.py\n")
    git(top, "commit", "-q", "-am", "the version comes from the build")
    (top / "src" / "calc" / "_version.py").write_text("__version__ = '0.1'\n")  # as the install wrote it
    path = os.pathsep.join([str(Path(sys.executable).parent), BARE_PATH])
    init(top, path)
    config = tomllib.loads((top / ".failres.toml").read_text())
    assert config["workspace"]["include"] == ["src/calc/_version.py"]
    with (top / ".failres.toml").open("a") as written:
        written.write(f'\n[sandbox]\nread = {json.dumps([the_test_site_packages()])}\n')
    (top / "plan.toml").write_text('slug = "s"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["src/calc/__init__.py"]\n')
    dry = run_failres(top, "run", "plan.toml", "--dry-run", "--preflight", "--json", env={**os.environ, "PATH": path})
    doc = json.loads(dry.stdout)
    assert [(p["task"], p["verdict"]) for p in doc["preflight"]] == [("t1", "red")], doc


def test_a_declared_version_file_is_read_as_a_path_inside_the_project():
    from failres.agents.gate_guess import declared_version_files

    assert declared_version_files('[tool.setuptools_scm]\nwrite_to = "./pkg/_v.py"\n') == ("pkg/_v.py",)
    assert declared_version_files('[tool.hatch.build.hooks.vcs]\nversion-file = "../elsewhere.py"\n') == ()


def test_npm_test_without_a_test_script_is_not_a_gate_that_runs():
    """npm says "Missing script: test" and exits 1 on every tree: a red no fix can turn green."""
    npm = GateGuess(("npm", "test"), why="package.json")
    names, read = files(**{"package.json": '{"name": "x"}'})
    choice = check_gate(npm, names, read, finder("npm"), lambda python, module: True)
    assert choice.placeholder and 'package.json has no "test" script, so npm test fails on every tree' in choice.note
    names, read = files(**{"package.json": '{"scripts": {"test": "node t.js"}}'})
    assert check_gate(npm, names, read, finder("npm"), lambda python, module: True).note == ""
