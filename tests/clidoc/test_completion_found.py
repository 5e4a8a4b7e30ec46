"""<TAB> works in a person's shell after a plain venv or pipx install: found by Debian's own
bash-completion (2.11, which never looks beside PATH) and by fish, tried in the real shells."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, run_failres
from terminal import run_on_terminal

BIN = str(Path(sys.executable).parent)  # where this install's git-failres is
BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")
SKEL_BASHRC = Path("/etc/skel/.bashrc")  # what a new Debian account's ~/.bashrc is: it loads bash-completion
FISH = shutil.which("fish")


def person(home: Path, shell: str) -> dict[str, str]:
    """A person's environment: their own home, this install's bin on PATH, their login shell."""
    return {"HOME": str(home), "PATH": f"{BIN}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "SHELL": shell,
            "TERM": "xterm", "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@example.com",
            "GIT_COMMITTER_NAME": "P", "GIT_COMMITTER_EMAIL": "p@example.com"}


def typed_in_bash(line: str, env: dict[str, str], cwd: Path) -> str:
    """What the line reads after <TAB> at its end in a new interactive bash (its ~/.bashrc read)."""
    keys = line + "\t\x01echo TYPED=\x05\nexit\n"  # TAB, then home, prefix an echo, end, run it
    code, lines = run_on_terminal(["bash", "-i"], cwd, env, columns=200, stdin_text=keys)
    typed = [text for text in lines if text.startswith("TYPED=")]
    assert typed, lines
    return typed[-1][len("TYPED="):].rstrip()


def offered_by_fish(line: str, env: dict[str, str], cwd: Path) -> list[str]:
    proc = subprocess.run([FISH, "-c", f"complete -C {line!r}"], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [entry.split("\t")[0] for entry in proc.stdout.splitlines()]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    top = tmp_path / "project"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    git(top, "commit", "-q", "--allow-empty", "-m", "initial")
    return top


needs_bash_completion = pytest.mark.skipif(not (BASH_COMPLETION.is_file() and SKEL_BASHRC.is_file()),
                                           reason="Debian's bash-completion is not installed")


@needs_bash_completion
def test_init_on_a_terminal_makes_tab_work_in_the_next_bash(home: Path, project: Path) -> None:
    shutil.copy(SKEL_BASHRC, home / ".bashrc")
    env = person(home, "/bin/bash")
    code, lines = run_on_terminal([f"{BIN}/git-failres", "init"], project, env, columns=400)
    assert code == 0, lines
    target = home / ".local/share/bash-completion/completions/git-failres"
    assert f"completion for bash: wrote {target} (new shells complete git failres)" in lines
    assert target.read_text() == run_failres(project, "completion", "bash").stdout
    assert typed_in_bash("git failres less", env, project) == "git failres lessons"
    assert typed_in_bash("git-failres lessons li", env, project) == "git-failres lessons list"
    assert typed_in_bash("git chec", env, project) == "git checkout"  # git's own completion is still git's
    code, lines = run_on_terminal([f"{BIN}/git-failres", "init"], project, env, columns=400)  # found now: not written again
    assert code == 0 and not any(line.startswith("completion for") for line in lines)


@needs_bash_completion
def test_a_copy_bash_completion_already_reads_is_left_alone(home: Path, project: Path, tmp_path: Path) -> None:
    shared = tmp_path / "share"
    (shared / "bash-completion" / "completions").mkdir(parents=True)
    (shared / "bash-completion" / "completions" / "git-failres").write_text("# the distribution's copy\n")
    env = {**person(home, "/bin/bash"), "XDG_DATA_DIRS": str(shared)}
    code, lines = run_on_terminal([f"{BIN}/git-failres", "init"], project, env, columns=400)
    assert code == 0 and not (home / ".local").exists(), lines


@pytest.mark.parametrize("how", ["piped", "--no-completion"])
def test_init_from_a_script_or_told_not_to_writes_nothing_in_home(home: Path, project: Path, how: str) -> None:
    env = person(home, "/bin/bash")
    if how == "piped":
        proc = subprocess.run([f"{BIN}/git-failres", "init"], cwd=project, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    else:
        code, lines = run_on_terminal([f"{BIN}/git-failres", "init", "--no-completion"], project, env)
        assert code == 0, lines
    assert list(home.rglob("*")) == []


@pytest.mark.skipif(FISH is None, reason="fish is not installed")
def test_fish_completes_all_three_names_after_completion_install(home: Path, project: Path) -> None:
    env = person(home, FISH)
    proc = subprocess.run([f"{BIN}/git-failres", "completion", "install", "--shell", "fish"], cwd=project, env=env,
                          capture_output=True, text=True)
    target = home / ".config/fish/conf.d/git-failres.fish"
    assert (proc.returncode, proc.stdout.splitlines()[0]) == (0, f"wrote {target}")
    assert offered_by_fish("git failres less", env, project) == ["lessons"]
    assert offered_by_fish("git -C . failres lessons list --unre", env, project) == ["--unresolved"]
    assert offered_by_fish("git-failres lessons ", env, project) == ["import", "list", "relevant", "show"]
    assert offered_by_fish("failres decisions pr", env, project) == ["propose"]
    (project / "plan.toml").write_text("")
    assert "plan.toml" in offered_by_fish("git failres run pl", env, project)  # paths left to fish
    assert "failres" in offered_by_fish("git fail", env, project)
    assert {"checkout", "cherry-pick"} <= set(offered_by_fish("git che", env, project))  # git's own, untouched


@pytest.mark.skipif(FISH is None, reason="fish is not installed")
def test_init_on_a_terminal_sets_up_fish_too(home: Path, project: Path) -> None:
    env = person(home, FISH)
    code, lines = run_on_terminal([f"{BIN}/git-failres", "init"], project, env, columns=400)
    assert code == 0 and any(line.startswith("completion for fish: wrote") for line in lines), lines
    assert offered_by_fish("git failres less", env, project) == ["lessons"]


def test_the_build_installs_the_fish_script_where_fish_looks_under_a_prefix() -> None:
    from failres.cli.manpage_build import INSTALLED, generated_files, installed

    assert ("share/fish/vendor_conf.d", "git-failres.fish") in INSTALLED
    assert set(generated_files("0", "2026-01-01")) == {name for _, name in installed()}
