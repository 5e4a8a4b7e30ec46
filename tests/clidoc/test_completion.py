"""Completion for `git failres <TAB>` (through git's own completion), `git-failres` and `failres`,
in bash and zsh, installed without touching git's completion."""

from __future__ import annotations

import json
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
from test_land import LoopProject
from test_learning_budget import steer_session, write_sessions

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


def test_the_pager_flags_complete_before_the_command_and_the_command_after_them() -> None:
    assert candidates("--no") == ["--no-pager"]
    assert candidates("--no-pager", "jou") == ["journal"]
    assert candidates("--no-pager", "lessons", "li") == ["list"]


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
    env = {**shell_env(tmp_path), "SHELL": "/bin/tcsh"}
    proc = subprocess.run([sys.executable, "-m", "failres", "completion", "install"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["error: no completion for shell 'tcsh'",
                                        "hint: pass --shell bash, --shell zsh or --shell fish"]
    assert not (tmp_path / ".local").exists()


def offered_in(cwd: Path, *words: str) -> list[str]:
    """What <TAB> offers for the last of `words` in the repository at `cwd`, asked as the scripts ask."""
    proc = subprocess.run([sys.executable, "-m", "failres", "__complete", *words], cwd=cwd,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout.splitlines()


def test_slugs_tasks_and_lesson_ids_come_from_the_repository(kept_demo: Path) -> None:
    tasks = sorted(row["task"] for row in json.loads(run_failres(kept_demo, "status", "--json").stdout))
    assert offered_in(kept_demo, "status", "") == ["demo"]
    assert offered_in(kept_demo, "land", "demo", "") == tasks
    assert offered_in(kept_demo, "logs", "demo", tasks[0][:-1]) == [t for t in tasks if t.startswith(tasks[0][:-1])]
    assert offered_in(kept_demo, "journal", "demo", "--task", "") == tasks
    assert offered_in(kept_demo, "lessons", "list", "--slug=demo", "--task", "") == tasks
    assert offered_in(kept_demo, "land", "no-such-plan", "") == []
    lessons = json.loads(run_failres(kept_demo, "lessons", "list", "--json", "--limit", "1000").stdout)
    lesson_ids = sorted(lesson["id"] for lesson in lessons)
    assert lesson_ids and offered_in(kept_demo, "lessons", "show", "") == lesson_ids
    # The demo's one decision is answered: `decide` has nothing left to offer.
    assert offered_in(kept_demo, "decide", "") == []


def test_run_task_offers_the_tasks_the_plan_file_names(tmp_path: Path) -> None:
    (tmp_path / "plan.toml").write_text('slug = "rel"\n[[tasks]]\nid = "lint"\n[[tasks]]\nid = "docs"\n')
    assert offered_in(tmp_path, "run", "plan.toml", "--task", "") == ["lint", "docs"]
    assert offered_in(tmp_path, "run", "plan.toml", "--task", "l") == ["lint"]
    (tmp_path / "broken.toml").write_text("slug = [\n")
    assert offered_in(tmp_path, "run", "broken.toml", "--task", "") == []
    assert offered_in(tmp_path, "run", "missing.toml", "--task", "") == []


def test_decide_offers_only_the_decisions_still_waiting(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    project.configure([{"write": {"docs/notes.md": "edited out of scope\n"}}])
    project.run(cli, expect=1)
    waiting = project.decision_id()
    assert offered_in(project.top, "decide", "") == [waiting]
    assert offered_in(project.top, "decisions", "propose", waiting[:3]) == [waiting]
    assert cli(project.top, "decide", waiting, "--scope-files", "docs/notes.md").code == 0
    assert offered_in(project.top, "decide", "") == []


def test_proposals_accept_offers_only_pending_proposals_and_show_offers_every_one(repo: Path, tmp_path: Path,
                                                                                   cli) -> None:
    sessions = write_sessions(tmp_path / "t", {"a": steer_session("a", "always keep the changelog short")})
    assert cli(repo, "reflect", str(sessions)).code == 0
    (learned,) = json.loads(cli(repo, "learn", "--json").out)
    pending = learned["proposal"]["id"]
    assert offered_in(repo, "proposals", "accept", "") == [pending]
    assert offered_in(repo, "proposals", "reject", "") == [pending]
    assert cli(repo, "proposals", "accept", pending).code == 0
    assert offered_in(repo, "proposals", "accept", "") == []
    assert offered_in(repo, "proposals", "show", "") == [pending]


def test_a_damaged_store_or_no_repository_offers_nothing_and_changes_nothing(tmp_path: Path, kept_demo: Path) -> None:
    assert offered_in(tmp_path, "status", "") == []
    assert offered_in(tmp_path, "decide", "") == []
    copy = tmp_path / "copy"
    shutil.copytree(kept_demo, copy, symlinks=True)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=copy, input="not a tree\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "update-ref", "refs/failres/store", blob], cwd=copy, check=True)
    refs_before = subprocess.run(["git", "for-each-ref"], cwd=copy, capture_output=True, text=True).stdout
    assert offered_in(copy, "lessons", "show", "") == []
    assert offered_in(copy, "status", "") == ["demo"]  # the task branches still name it
    assert subprocess.run(["git", "for-each-ref"], cwd=copy, capture_output=True, text=True).stdout == refs_before


def test_completion_install_without_shell_set_uses_the_login_shell(tmp_path: Path) -> None:
    """Cron, containers and `env -i` leave $SHELL unset; the password database still names the
    person's shell, and install follows it (or says it cannot, as for an unknown shell)."""
    env = shell_env(tmp_path)
    assert "SHELL" not in env
    login = Path(pwd.getpwuid(os.getuid()).pw_shell).name
    proc = subprocess.run([sys.executable, "-m", "failres", "completion", "install"], capture_output=True,
                          text=True, env=env, cwd=tmp_path)
    if login in ("bash", "zsh", "fish"):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[0] == f"wrote {install_path(login, env)}"
        assert install_path(login, env).read_text() == run_failres(tmp_path, "completion", login).stdout
    else:
        assert proc.returncode == 2
        assert proc.stderr.splitlines()[-1] == "hint: pass --shell bash, --shell zsh or --shell fish"
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
