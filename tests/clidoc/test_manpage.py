"""The git-failres(1) manual page: generated from the commands, valid roff, installed where
`git failres --help` (git's `git help failres`) and `man git-failres` find it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from wheels import build_wheel, install_in_fresh_venv
from failres.cli.help_cmds import description
from failres.cli.manpage_build import build_date
from failres.clidoc.roff import code, escape, render_manpage


def page() -> str:
    return render_manpage(description(), version="9.8.7", date="2026-11-30")


def man_text(source: Path, env: dict | None = None) -> str:
    proc = subprocess.run(["man", "-l", str(source)], capture_output=True, text=True,
                          env={**os.environ, "MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat", **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_page_names_every_command_and_every_option() -> None:
    text = page()
    for command in description().walk():
        if command.hidden or not command.path:
            continue
        assert f"\\fB{code(command.full_name)}\\fR" in text, command.full_name
        for option in command.options:
            assert f"\\fB{code(option.longest_flag() if not option.negations else '--[no-]' + option.longest_flag()[2:])}\\fR" in text
        for example in command.examples:
            assert code(example) in text


def test_the_page_carries_version_date_and_the_exit_codes() -> None:
    text = page()
    assert '.TH "GIT\\-FAILRES" "1" "2026-11-30" "failres 9.8.7" "failres Manual"' in text
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "FILES", "SEE ALSO"):
        assert f'.SH "{section}"' in text


def test_roff_escaping_keeps_text_from_becoming_requests() -> None:
    assert escape(".TH evil\n'br") == "\\&.TH evil\n\\&'br"
    assert escape("a\\b") == "a\\eb"
    assert code("--json") == "\\-\\-json"


def test_the_build_date_follows_source_date_epoch() -> None:
    assert build_date({"SOURCE_DATE_EPOCH": "1764460800"}) == "2025-11-30"


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed (Debian: groff-base)")
def test_the_page_is_warning_free_roff(tmp_path: Path) -> None:
    source = tmp_path / "git-failres.1"
    source.write_text(page())
    proc = subprocess.run(["groff", "-man", "-ww", "-z", str(source)], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == ""


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed (Debian: man-db)")
def test_man_renders_the_page_with_grouped_commands(tmp_path: Path) -> None:
    source = tmp_path / "git-failres.1"
    source.write_text(page())
    text = man_text(source)
    assert text.startswith("GIT-FAILRES(1)")
    assert "git-failres - failure resolution and learning for automated code changes, kept in git" in text
    positions = [text.index(f"   {title}\n") for title in ("The loop", "The lessons", "Learning and knowledge",
                                                           "Housekeeping")]
    assert positions == sorted(positions)
    assert "git failres run PLAN [--task TASK]..." in text
    assert "git failres run plan.toml --task t1" in text


def _installed_wheel(tmp_path: Path) -> Path:
    """Build this project's wheel (as pip does, minus the isolated build environment)."""
    return build_wheel(tmp_path / "wheels")


def test_the_wheel_carries_the_page_and_the_completion_scripts(tmp_path: Path) -> None:
    wheel = _installed_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [man] = [n for n in names if n.endswith("/data/share/man/man1/git-failres.1")]
        assert archive.read(man).decode().startswith('.\\" Generated from the command line of failres')
        assert any(n.endswith("/data/share/bash-completion/completions/git-failres") for n in names)
        assert any(n.endswith("/data/share/zsh/site-functions/_git-failres") for n in names)
        assert any(n.endswith("/data/share/fish/vendor_conf.d/git-failres.fish") for n in names)
        assert any(n.endswith("/data/share/man/man1/git-failres-lessons.1") for n in names)
        # init --full writes the documented example from inside the installed package.
        assert "failres/data/failres.toml.example" in names


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed (Debian: man-db)")
def test_git_failres_help_opens_the_page_from_a_fresh_venv(tmp_path: Path) -> None:
    """Installed into a new venv, `git failres --help` (git runs `git help failres`, which runs
    man) and `man git-failres` both find the page; nothing but PATH points at the venv."""
    wheel = _installed_wheel(tmp_path)
    venv = tmp_path / "venv"
    install_in_fresh_venv(wheel, venv)  # the dependencies from this test run; failres from the wheel
    assert (venv / "share" / "man" / "man1" / "git-failres.1").is_file()
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "MANPAGER": "cat", "PAGER": "cat",
           "MANWIDTH": "100", "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8"}
    via_git = subprocess.run(["git", "failres", "--help"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert via_git.returncode == 0, via_git.stderr
    assert via_git.stdout.startswith("GIT-FAILRES(1)")
    assert "git failres lessons list [--slug SLUG]" in via_git.stdout
    via_man = subprocess.run(["man", "git-failres"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert via_man.returncode == 0 and via_man.stdout == via_git.stdout
    # The program in the venv is this version, and answers help itself for a subcommand.
    sub = subprocess.run(["git", "failres", "run", "--help"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert sub.returncode == 0 and sub.stdout.startswith("usage: git failres run PLAN")
    # A page per command, as git-lfs ships them: `man git-failres-lessons`, `man git-failres-run`.
    lessons = subprocess.run(["man", "git-failres-lessons"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert lessons.returncode == 0 and lessons.stdout.startswith("GIT-FAILRES-LESSONS(1)"), lessons.stderr
    assert "git failres lessons relevant --fail-class CLASS" in lessons.stdout
    assert "git failres run" not in lessons.stdout
    run = subprocess.run(["man", "git-failres-run"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("GIT-FAILRES-RUN(1)")
    # The whole page, `git failres --help`, names them.
    assert "git-failres-lessons(1)" in re.sub(r"-\n\s+", "-", via_git.stdout)  # a line may break after a hyphen


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed (Debian: groff-base)")
def test_every_command_page_is_warning_free_roff(tmp_path: Path) -> None:
    from failres.clidoc.roff import page_name, render_command_page

    for command in description().visible_subcommands():
        source = tmp_path / f"{page_name(command)}.1"
        source.write_text(render_command_page(command, version="9.8.7", date="2026-11-30"))
        proc = subprocess.run(["groff", "-man", "-ww", "-z", str(source)], capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stderr == "", (command.path, proc.stderr)
