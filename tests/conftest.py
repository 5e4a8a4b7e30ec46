"""Shared fixtures: an isolated home, a git identity, real repositories, the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

# The tests live in folders beside what they check. As when they were one folder, a test module
# or helper (project.py here, test_land's LoopProject in landing/ ...) imports by its name from
# any of them: every folder holding tests is on the import path, after everything else.
TESTS = Path(__file__).resolve().parent
for _folder in sorted({path.parent for path in TESTS.rglob("test_*.py")} - {TESTS}):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Person",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test Person",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def pytest_configure(config: pytest.Config) -> None:
    """Keep the tests' temporary directories out of /tmp.

    Codex will not set up its sandbox helper when its home (a dispatch directory, here under
    the test's home) lies under /tmp or $TMPDIR; with the distribution's bubblewrap on PATH,
    which it prefers and which cannot start the helper any other way, every shell command of
    a Codex seat then fails. People's dispatch directories live under their cache directory,
    never under /tmp, so the tests put theirs where a person's would be: outside it.
    """
    if os.environ.get("PYTEST_DEBUG_TEMPROOT") or config.option.basetemp:
        return
    root = Path("/var/tmp")
    if root.is_dir() and os.access(root, os.W_OK | os.X_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(root)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test gets an empty home and no system git config, so nothing of the
    machine's (or the person's) configuration leaks in, and nothing is written there."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    for name in list(os.environ):
        if name.startswith("FAILRES_"):
            monkeypatch.delenv(name)
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    # libgit2 read HOME once, when pygit2 was first imported: point its search path
    # at the empty home too, so in-process reads see no global or system identity.
    import pygit2

    levels = (pygit2.GIT_CONFIG_LEVEL_GLOBAL, pygit2.GIT_CONFIG_LEVEL_XDG, pygit2.GIT_CONFIG_LEVEL_SYSTEM)
    before = {level: pygit2.settings.search_path[level] for level in levels}
    for level in levels:
        pygit2.settings.search_path[level] = str(home)
    yield home
    for level, value in before.items():
        pygit2.settings.search_path[level] = value


def git(cwd: Path, *args: str, check: bool = True, env: dict | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


@pytest.fixture
def plain_repo(tmp_path: Path) -> Path:
    """A real repository on branch main with one commit, and no failres store."""
    top = tmp_path / "repo"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    (top / "README.md").write_text("a project\n")
    git(top, "add", "README.md")
    git(top, "commit", "-q", "-m", "initial")
    return top


@pytest.fixture
def repo(plain_repo: Path) -> Path:
    """A real repository on branch main with one commit and an empty store, as `git failres init`
    creates it (a write never creates a store)."""
    from lessons.storage.store import Store

    Store(plain_repo).create()
    return plain_repo


@pytest.fixture(params=["off", "required"], ids=["world-off", "world-on"])
def seat_world(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """A hostile seat meets the tamper check, the second wall, twice: alone, with the seat
    world off (`[sandbox] mode = "off"`), and behind the world where this machine gives one
    (`mode = "required"`: a world that cannot start fails the test rather than quietly
    running without one). Inside the world many attacks cannot even reach the person's
    files; the test asserts the same guarantee all the same. True where the world is on."""
    from failres.sandbox.probe import machine_sandbox
    from project import Project

    if request.param == "required":
        found = machine_sandbox()
        if not found.available:
            pytest.skip(f"no seat world on this machine: {found.why}")
    monkeypatch.setattr(Project, "sandbox_mode", request.param)
    return request.param == "required"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """Run `git failres ARGS` in-process from a directory; returns code, stdout, stderr."""
    from failres.cli import run

    def invoke(cwd: Path, *args: str) -> CliResult:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = run(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return invoke


def run_failres(cwd: Path, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run failres as its own process, the way a person or a hook does."""
    return subprocess.run([sys.executable, "-m", "failres", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.fixture(scope="session")
def kept_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`git failres demo --keep`'s repository, made once per session: landed, committed and
    stopped tasks, an answered decision, lessons resolved and not. Tests must not change it."""
    root = tmp_path_factory.mktemp("kept-demo") / "demo"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAILRES_")}
    proc = run_failres(root.parent, "demo", "--keep", str(root), env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return root
