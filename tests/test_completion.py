"""Completion for `git failres <TAB>` (through git's own completion), `git-failres` and `failres`,
in bash and zsh, installed without touching git's completion."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_failres
from failres.cli.help_cmds import description
from failres.clidoc.completion import DIRS, FILES, complete, install_path

GIT_COMPLETION = Path("/usr/share/bash-completion/completions/git")
BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")
BIN = str(Path(sys.executable).parent)  # where this test run's git-failres is


def candidates(*words: str) -> list[str]:
    return complete(description(), list(words)).lines()


def test_commands_complete_at_the_top() -> None:
    assert candidates("les") == ["lessons"]
    assert set(candidates("")) == {c.name for c in description().visible_subcommands()}
    assert "__complete" not in candidates("")


def test_subcommands_options_and_values_complete() -> None:
    assert candidates("lessons", "") == ["import", "list", "relevant", "show"]
    assert candidates("lessons", "list", "--f") == ["--fail-class"]
    assert candidates("prompt", "s", "t", "--mode", "") == ["implement", "fix"]
    assert candidates("reflect", "--no") == ["--no-edits"]
    assert candidates("help", "less") == ["lessons"]
    assert candidates("help", "lessons", "s") == ["show"]


def test_an_option_already_given_is_not_offered_again() -> None:
    assert "--json" not in candidates("status", "--json", "--")
    assert candidates("run", "plan.toml", "--task", "t1", "--ta") == ["--task"]  # repeatable


def test_paths_are_left_to_the_shell() -> None:
    assert candidates("run", "") == [FILES]
    assert candidates("report", "--html", "") == [FILES]
    assert candidates("demo", "--keep", "") == [DIRS]
    assert candidates("journal", "") == []  # a slug: nothing to guess from the command line


def test_the_program_answers_the_completion_protocol(tmp_path: Path) -> None:
    proc = run_failres(tmp_path, "__complete", "lessons", "li")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "list\n", "")


def bash(script: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                          env=env, timeout=60)


def shell_env(home: Path) -> dict[str, str]:
    return {"PATH": f"{BIN}:{os.environ['PATH']}", "HOME": str(home), "LANG": "C.UTF-8",
            "GIT_CONFIG_NOSYSTEM": "1", "XDG_DATA_HOME": str(home / ".local" / "share")}


def complete_git_line(line: str) -> str:
    """Bash that completes `line` the way <TAB> at its end would, through git's completion."""
    return f"""
COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}
read -r -a COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
spec=$(complete -p "${{COMP_WORDS[0]}}")
func=${{spec##*-F }}; func=${{func%% *}}
"$func" "${{COMP_WORDS[0]}}" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""


@pytest.mark.skipif(not GIT_COMPLETION.is_file(), reason="git's bash completion is not installed")
def test_git_failres_tab_completes_through_gits_own_bash_completion(tmp_path: Path) -> None:
    script = run_failres(tmp_path, "completion", "bash").stdout
    (tmp_path / "failres.bash").write_text(script)
    setup = f"source {GIT_COMPLETION}\nsource {tmp_path / 'failres.bash'}\n"
    env = shell_env(tmp_path)
    proc = bash(setup + complete_git_line("git failres les"), env)
    assert proc.stdout.split() == ["lessons"], proc.stderr
    proc = bash(setup + complete_git_line("git failres lessons list --unre"), env)
    assert proc.stdout.split() == ["--unresolved"], proc.stderr
    # git's own completion is still git's: `git che` still offers checkout and cherry-pick.
    proc = bash(setup + "complete -p git\n" + complete_git_line("git che"), env)
    assert "__git_wrap__git_main git" in proc.stdout
    assert {"checkout", "cherry-pick"} <= set(proc.stdout.split())


@pytest.mark.skipif(not GIT_COMPLETION.is_file(), reason="git's bash completion is not installed")
def test_git_failres_completes_when_typed_as_its_own_program(tmp_path: Path) -> None:
    script = run_failres(tmp_path, "completion", "bash").stdout
    (tmp_path / "failres.bash").write_text(script)
    env = shell_env(tmp_path)
    for program in ("git-failres", "failres"):
        proc = bash(f"source {tmp_path / 'failres.bash'}\n" + complete_git_line(f"{program} decisions pr"), env)
        assert proc.stdout.split() == ["propose"], proc.stderr


@pytest.mark.skipif(not (BASH_COMPLETION.is_file() and GIT_COMPLETION.is_file()),
                    reason="bash-completion is not installed (Debian: bash-completion)")
def test_completion_install_is_found_by_bash_completion_for_git_failres(tmp_path: Path) -> None:
    env = shell_env(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "failres", "completion", "install", "--shell", "bash"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    target = install_path("bash", env)
    assert target == tmp_path / ".local/share/bash-completion/completions/git-failres"
    assert proc.stdout.splitlines()[0] == f"wrote {target}"
    # Everything written is that one file, under the person's own data directory.
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == [target]
    # A new interactive-style shell: bash-completion loads git's completion, which loads ours lazily.
    proc = bash(f"source {BASH_COMPLETION}\n_completion_loader git\n" + complete_git_line("git failres rep"), env)
    assert proc.stdout.split() == ["report"], proc.stderr
    again = subprocess.run([sys.executable, "-m", "failres", "completion", "install", "--shell", "bash"],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert again.stdout.splitlines()[0] == f"already up to date: {target}"


def test_completion_install_without_a_known_shell_is_exit_2(tmp_path: Path) -> None:
    env = {**shell_env(tmp_path), "SHELL": "/bin/fish"}
    proc = subprocess.run([sys.executable, "-m", "failres", "completion", "install"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["error: no completion for shell 'fish'", "hint: pass --shell bash or --shell zsh"]
    assert not (tmp_path / ".local").exists()


def test_completion_install_without_shell_set_uses_the_login_shell(tmp_path: Path) -> None:
    """Cron, containers and `env -i` leave $SHELL unset; the password database still names the
    person's shell, and install follows it (or says it cannot, as for an unknown shell)."""
    env = shell_env(tmp_path)
    assert "SHELL" not in env
    login = Path(pwd.getpwuid(os.getuid()).pw_shell).name
    proc = subprocess.run([sys.executable, "-m", "failres", "completion", "install"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    if login in ("bash", "zsh"):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[0] == f"wrote {install_path(login, env)}"
        assert install_path(login, env).read_text() == run_failres(tmp_path, "completion", login).stdout
    else:
        assert proc.returncode == 2
        assert proc.stderr.splitlines()[-1] == "hint: pass --shell bash or --shell zsh"
        assert not (tmp_path / ".local").exists()


ZSH_DRIVER = """
compadd() {{ while [[ $1 != -- ]]; do shift; done; shift; print -rl -- "$@"; }}
_files() {{ print -r -- FILES; }}
_path_files() {{ print -r -- DIRS; }}
compdef() {{ :; }}
source {script}
words=({words}); CURRENT=${{#words}}
_git-failres
"""


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
@pytest.mark.parametrize(("words", "expected"), [
    ("failres less", ["lessons"]),          # under git: zsh's _git calls _git-failres with words from "failres"
    ("git-failres lessons ''", ["import", "list", "relevant", "show"]),
    ("failres run ''", ["FILES"]),
    ("failres demo --keep ''", ["DIRS"]),
])
def test_the_zsh_function_offers_what_the_program_answers(tmp_path: Path, words: str, expected: list[str]) -> None:
    script = tmp_path / "_git-failres"
    script.write_text(run_failres(tmp_path, "completion", "zsh").stdout)
    syntax = subprocess.run(["zsh", "-n", str(script)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    proc = subprocess.run(["zsh", "-f", "-c", ZSH_DRIVER.format(script=script, words=words)], capture_output=True,
                          text=True, env=shell_env(tmp_path), timeout=60)
    assert proc.stdout.split() == expected, proc.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_lists_git_failres_among_gits_third_party_commands(tmp_path: Path) -> None:
    """zsh's own `_git` reads `_git-*` files on $fpath as third-party commands, with their description."""
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_git-failres").write_text(run_failres(tmp_path, "completion", "zsh").stdout)
    probe = (f"fpath=({functions} $fpath); autoload -Uz compinit; compinit -u -d {tmp_path / 'dump'}; "
             "autoload -Uz _git; (( $+functions[_git-failres] )) && print autoloadable; "
             "print -r -- ${_comps[git-failres]} ${_comps[failres]}")
    proc = subprocess.run(["zsh", "-f", "-c", probe], capture_output=True, text=True, env=shell_env(tmp_path),
                          timeout=60)
    assert proc.stdout.split() == ["autoloadable", "_git-failres", "_git-failres"], proc.stderr
