"""The merge hooks: installed where git looks, chained to what was there, never blocking a merge."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, git
from failres.hooks.install import MARKER, PORTABLE_RUNNER, render_script
from test_land import LoopProject, quarantine_then_commit

FOREIGN = b"#!/bin/sh\n# the person's own hook, with bytes that must survive: \xc3\xa9\necho foreign \"$@\" >> foreign.log\n"


def hooks_dir(top: Path) -> Path:
    return Path(git(top, "rev-parse", "--path-format=absolute", "--git-path", "hooks").strip())


def merge(top: Path, *args: str) -> subprocess.CompletedProcess:
    """A person's `git merge`, with whatever hooks are installed."""
    return subprocess.run(["git", "merge", *args], cwd=top, capture_output=True, text=True)


@pytest.fixture
def project(tmp_path: Path) -> LoopProject:
    return LoopProject(tmp_path)


# ── install and uninstall ───────────────────────────────────────────────────


def test_install_writes_both_hooks_executable_with_the_marker(project: LoopProject, cli) -> None:
    result = cli(project.top, "hooks", "install", "--json")
    assert result.code == 0, result.err
    assert {h["hook"]: h["action"] for h in json.loads(result.out)["hooks"]} == {
        "pre-merge-commit": "installed", "post-merge": "installed"}
    for name in ("pre-merge-commit", "post-merge"):
        path = hooks_dir(project.top) / name
        assert MARKER in path.read_text() and os.access(path, os.X_OK)


def test_install_over_a_foreign_hook_chains_it_and_uninstall_restores_it_byte_for_byte(project: LoopProject,
                                                                                       cli) -> None:
    hook = hooks_dir(project.top) / "post-merge"
    hook.write_bytes(FOREIGN)
    os.chmod(hook, 0o751)
    assert cli(project.top, "hooks", "install").code == 0
    assert (hooks_dir(project.top) / "post-merge.legacy").read_bytes() == FOREIGN
    git(project.top, "checkout", "-q", "-b", "side")
    project.move_main("side.txt")
    git(project.top, "checkout", "-q", "main")
    assert merge(project.top, "-q", "side").returncode == 0
    assert (project.top / "foreign.log").read_text() == "foreign 0\n"  # called, with git's argument
    assert cli(project.top, "hooks", "uninstall").code == 0
    assert hook.read_bytes() == FOREIGN
    assert stat.S_IMODE(hook.stat().st_mode) == 0o751
    assert not (hooks_dir(project.top) / "post-merge.legacy").exists()
    assert not (hooks_dir(project.top) / "pre-merge-commit").exists()


def test_installing_twice_never_chains_failres_to_itself(project: LoopProject, cli) -> None:
    assert cli(project.top, "hooks", "install").code == 0
    again = cli(project.top, "hooks", "install", "--json")
    assert {h["action"] for h in json.loads(again.out)["hooks"]} == {"unchanged"}
    assert not list(hooks_dir(project.top).glob("*.legacy"))


def test_install_refuses_when_a_foreign_hook_and_a_legacy_one_both_exist(project: LoopProject, cli) -> None:
    directory = hooks_dir(project.top)
    (directory / "post-merge").write_bytes(FOREIGN)
    (directory / "post-merge.legacy").write_bytes(b"#!/bin/sh\nexit 0\n")
    result = cli(project.top, "hooks", "install")
    assert result.code == 2 and "hint: " in result.err
    assert (directory / "post-merge").read_bytes() == FOREIGN
    assert not (directory / "pre-merge-commit").exists()  # checked before anything was written


def test_core_hooks_path_inside_the_repository_is_honoured(project: LoopProject, cli) -> None:
    git(project.top, "config", "core.hooksPath", ".githooks")
    assert cli(project.top, "hooks", "install").code == 0
    assert MARKER in (project.top / ".githooks" / "post-merge").read_text()
    assert not (project.top / ".git" / "hooks" / "post-merge").exists()


def test_core_hooks_path_outside_the_repository_is_refused_unless_shared(project: LoopProject, cli,
                                                                         tmp_path: Path) -> None:
    shared = tmp_path / "all-my-hooks"
    git(project.top, "config", "core.hooksPath", str(shared))
    refused = cli(project.top, "hooks", "install")
    assert refused.code == 2 and "outside this repository" in refused.err and "--shared" in refused.err
    assert not shared.exists()
    assert cli(project.top, "hooks", "install", "--shared").code == 0
    assert MARKER in (shared / "post-merge").read_text()


def test_the_scripts_in_hooks_are_the_portable_rendering() -> None:
    for name in ("pre-merge-commit", "post-merge"):
        path = ROOT / "hooks" / name
        assert path.read_text() == render_script(name, PORTABLE_RUNNER)
        assert os.access(path, os.X_OK)


def test_init_installs_the_hooks_and_no_hooks_skips_them(project: LoopProject, cli, tmp_path: Path) -> None:
    result = cli(project.top, "init", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["hooks"]["installed"] == {"pre-merge-commit": "installed",
                                                            "post-merge": "installed"}
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    skipped = cli(other, "init", "--no-hooks", "--json")
    assert skipped.code == 0 and json.loads(skipped.out)["hooks"] is None
    assert not (other / ".git" / "hooks" / "post-merge").exists()


# ── what the hooks do at merge time ─────────────────────────────────────────


def committed_after_a_quarantine(project: LoopProject, cli) -> None:
    quarantine_then_commit(project, cli)
    assert cli(project.top, "hooks", "install").code == 0


def test_a_real_git_merge_with_the_hook_installed_stamps(project: LoopProject, cli) -> None:
    committed_after_a_quarantine(project, cli)
    before = project.move_main()
    done = merge(project.top, "--no-ff", "--no-edit", "failres/rr/t1")
    assert done.returncode == 0, done.stderr
    assert "failres: merging task rr/t1" in done.stderr  # pre-merge-commit's note
    assert "stamped 1 lesson(s): unknown" in done.stderr
    landed = [e for e in project.events() if e["type"] == "landed"]
    assert [(e["commit"], e["intHead"]) for e in landed] == [(git(project.top, "rev-parse", "HEAD").strip(), before)]
    assert project.lessons()[0]["resolved_by"] == ["unknown"]


def test_a_fast_forward_merge_stamps(project: LoopProject, cli) -> None:
    committed_after_a_quarantine(project, cli)
    before = git(project.top, "rev-parse", "HEAD").strip()
    done = merge(project.top, "failres/rr/t1")
    assert done.returncode == 0 and "Fast-forward" in done.stdout
    landed = [e for e in project.events() if e["type"] == "landed"]
    assert [(e["commit"], e["intHead"]) for e in landed] == [(git(project.top, "rev-parse", "HEAD").strip(), before)]
    assert project.lessons()[0]["resolved_by"] == ["unknown"]


def test_a_squash_merge_stamps_nothing_until_label(project: LoopProject, cli) -> None:
    committed_after_a_quarantine(project, cli)
    project.move_main()
    assert merge(project.top, "--squash", "failres/rr/t1").returncode == 0
    assert "landed" not in project.types()
    git(project.top, "commit", "-q", "--no-edit")
    assert cli(project.top, "label").code == 0
    assert project.lessons()[0]["resolved_by"] == ["unknown"]


def test_a_merge_of_a_non_task_branch_leaves_the_store_alone(project: LoopProject, cli) -> None:
    committed_after_a_quarantine(project, cli)
    git(project.top, "checkout", "-q", "-b", "side")
    project.move_main("side.txt")
    git(project.top, "checkout", "-q", "main")
    tip = project.store_tip()
    done = merge(project.top, "--no-ff", "--no-edit", "side")
    assert done.returncode == 0 and "failres" not in done.stderr
    assert project.store_tip() == tip


def test_a_task_branch_merged_into_another_branch_is_not_a_landing(project: LoopProject, cli) -> None:
    committed_after_a_quarantine(project, cli)
    git(project.top, "checkout", "-q", "-b", "release")
    assert merge(project.top, "--no-ff", "--no-edit", "failres/rr/t1").returncode == 0
    assert "landed" not in project.types()


def test_a_crashing_store_leaves_the_merge_done_and_exit_0(project: LoopProject, cli) -> None:
    committed_after_a_quarantine(project, cli)
    project.move_main()
    ref = project.top / ".git" / "refs" / "failres" / "store"
    git(project.top, "pack-refs", "--all")  # the store ref now lives in packed-refs...
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text("this is not an object id\n")  # ...and a loose file shadows it with garbage
    done = merge(project.top, "--no-ff", "--no-edit", "failres/rr/t1")
    assert done.returncode == 0, done.stderr
    assert "the post-merge hook failed (the merge is unaffected; " in done.stderr and "hooks.log" in done.stderr
    assert git(project.top, "rev-list", "--parents", "-n", "1", "HEAD").count(" ") == 2  # the merge commit exists
    log = (project.top / ".git" / "failres" / "log" / "hooks.log").read_text()
    assert "post-merge" in log and "Traceback" in log


def test_a_failing_legacy_pre_merge_commit_hook_still_blocks_the_merge(project: LoopProject, cli) -> None:
    committed_after_a_quarantine(project, cli)
    (hooks_dir(project.top) / "pre-merge-commit").unlink()
    veto = hooks_dir(project.top) / "pre-merge-commit"
    veto.write_text("#!/bin/sh\necho 'not today' >&2\nexit 3\n")
    os.chmod(veto, 0o755)
    assert cli(project.top, "hooks", "install").code == 0  # chains the veto
    project.move_main()
    before = git(project.top, "rev-parse", "HEAD").strip()
    done = merge(project.top, "--no-ff", "--no-edit", "failres/rr/t1")
    assert done.returncode != 0 and "not today" in done.stderr
    assert git(project.top, "rev-parse", "HEAD").strip() == before
    assert "landed" not in project.types()
    git(project.top, "merge", "--abort")


def test_a_failing_legacy_post_merge_hook_keeps_its_status_and_failres_still_stamps(project: LoopProject,
                                                                                   cli) -> None:
    committed_after_a_quarantine(project, cli)
    legacy = hooks_dir(project.top) / "post-merge.legacy"
    legacy.write_text("#!/bin/sh\nexit 4\n")
    os.chmod(legacy, 0o755)
    script = hooks_dir(project.top) / "post-merge"
    project.move_main()
    assert merge(project.top, "--no-ff", "--no-edit", "failres/rr/t1").returncode == 0  # git ignores it
    rerun = subprocess.run([str(script), "0"], cwd=project.top, capture_output=True, text=True)
    assert rerun.returncode == 4
    assert "landed" in project.types()


def test_hooks_run_is_what_the_scripts_call_and_always_exits_0(project: LoopProject, cli) -> None:
    result = cli(project.top, "hooks", "run", "post-merge", "0")
    assert result.code == 0  # no ORIG_HEAD here: logged, not failed
    assert cli(project.top, "hooks", "run", "no-such-hook").code == 0
