"""Hooks that say when they cannot work, hooks a team commits, and hooks a person changed:
real `git merge`s through the real scripts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from failres.hooks.install import _render_first_version, installed_runner
from failres.hooks.install import install_hooks as install_with
from test_land import LoopProject, quarantine_then_commit

VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def project(tmp_path: Path, cli) -> LoopProject:
    """A task rr/t1 committed after a quarantine, main moved on: ready to be merged by a person."""
    project = LoopProject(tmp_path)
    quarantine_then_commit(project, cli)
    project.move_main()
    return project


def merge(project: LoopProject, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "merge", "--no-ff", "--no-edit", "failres/rr/t1"], cwd=project.top,
                          capture_output=True, text=True, env=env)


def failres_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "failres" in line]


def hooks_log(project: LoopProject) -> str:
    path = project.top / ".git" / "failres" / "log" / "hooks.log"
    return path.read_text() if path.exists() else ""


def assert_merged_unstamped(project: LoopProject, done: subprocess.CompletedProcess) -> str:
    """The merge went through; failres said why it could not stamp, in one line; label can still stamp."""
    assert done.returncode == 0, done.stderr
    assert git(project.top, "rev-list", "--parents", "-n", "1", "HEAD").count(" ") == 2
    lines = failres_lines(done.stderr)
    assert len(lines) == 1, done.stderr
    assert "git failres label" in lines[0] and lines[0] in hooks_log(project)
    assert "landed" not in project.types()
    return lines[0]


def test_a_hook_whose_python_is_gone_says_so_in_one_line_and_the_merge_goes_on(project: LoopProject,
                                                                              tmp_path: Path, cli) -> None:
    python = tmp_path / "old-venv" / "python"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    install_with(project.top, python=str(python))
    python.unlink()  # the virtual environment was deleted
    line = assert_merged_unstamped(project, merge(project))
    assert "is gone" in line and str(python) in line and "git failres hooks install" in line
    assert cli(project.top, "label").code == 0
    assert project.lessons()[0]["resolved_by"] == ["unknown"]


def test_a_hook_whose_python_lacks_failres_names_the_import_error(project: LoopProject, tmp_path: Path) -> None:
    bare = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    install_with(project.top, python=str(bare / "bin" / "python"))
    line = assert_merged_unstamped(project, merge(project))
    assert "cannot run failres" in line and "failres.hooks.run" in line


def portable_env(with_failres: bool) -> dict:
    """A PATH with git, with or without the directory that holds `git-failres`."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and Path(d) != VENV_BIN]
    if with_failres:
        dirs.insert(0, str(VENV_BIN))
    return {**os.environ, "PATH": os.pathsep.join(dirs)}


def test_a_tracked_hooks_directory_gets_portable_hooks_and_install_says_so(project: LoopProject, cli) -> None:
    git(project.top, "config", "core.hooksPath", ".githooks")
    result = cli(project.top, "hooks", "install", "--json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["portable"] is True and any("PATH" in note for note in report["notes"])
    for hook in ("pre-merge-commit", "post-merge"):
        text = (project.top / ".githooks" / hook).read_text()
        assert "git failres hooks run" in text
        assert sys.executable not in text and str(VENV_BIN) not in text  # nothing of this machine


def test_a_portable_hook_with_failres_on_path_stamps(project: LoopProject, cli) -> None:
    git(project.top, "config", "core.hooksPath", ".githooks")
    assert cli(project.top, "hooks", "install").code == 0
    done = merge(project, env=portable_env(with_failres=True))
    assert done.returncode == 0, done.stderr
    assert "stamped 1 lesson(s)" in done.stderr
    assert project.lessons()[0]["resolved_by"] == ["unknown"]


def test_a_portable_hook_without_failres_on_path_says_so_in_one_line(project: LoopProject, cli) -> None:
    git(project.top, "config", "core.hooksPath", ".githooks")
    assert cli(project.top, "hooks", "install").code == 0
    line = assert_merged_unstamped(project, merge(project, env=portable_env(with_failres=False)))
    assert "git-failres is not on PATH" in line


def test_a_line_a_person_added_to_a_hook_survives_install_and_uninstall(project: LoopProject, cli) -> None:
    assert cli(project.top, "hooks", "install").code == 0
    hook = project.top / ".git" / "hooks" / "post-merge"
    edited = hook.read_text().replace("exit \"$status\"\n", "echo mine >> mine.log\nexit \"$status\"\n")
    hook.write_text(edited)
    again = cli(project.top, "hooks", "install", "--json")
    assert again.code == 0
    actions = {h["hook"]: h["action"] for h in json.loads(again.out)["hooks"]}
    assert actions == {"pre-merge-commit": "unchanged", "post-merge": "kept-edited"}
    assert hook.read_text() == edited
    gone = cli(project.top, "hooks", "uninstall", "--json")
    assert {h["hook"]: h["action"] for h in json.loads(gone.out)["hooks"]} == {
        "pre-merge-commit": "removed", "post-merge": "kept-edited"}
    assert hook.read_text() == edited
    assert "changed" in cli(project.top, "hooks", "uninstall").out


def test_a_hook_an_earlier_failres_wrote_is_updated_in_place(project: LoopProject, cli) -> None:
    hook = project.top / ".git" / "hooks" / "post-merge"
    hook.write_text(_render_first_version("post-merge", installed_runner()))
    os.chmod(hook, 0o755)
    result = cli(project.top, "hooks", "install", "--json")
    assert {h["hook"]: h["action"] for h in json.loads(result.out)["hooks"]}["post-merge"] == "updated"
    assert not (hook.parent / "post-merge.legacy").exists()
    assert "failres_cannot" in hook.read_text()


def test_a_store_that_is_gone_is_said_at_merge_time_and_the_merge_goes_on(project: LoopProject, cli) -> None:
    assert cli(project.top, "hooks", "install").code == 0
    git(project.top, "update-ref", "-d", "refs/failres/store")
    done = merge(project)
    assert done.returncode == 0, done.stderr
    line = next(line for line in failres_lines(done.stderr) if "post-merge" in line)
    assert "is gone" in line and "git failres label" in line
