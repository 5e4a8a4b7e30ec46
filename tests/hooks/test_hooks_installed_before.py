"""Hooks an earlier failres installed still work: they call `-m failres.hookrun`, the module
path from before the packages were regrouped, and a real merge through them still stamps."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import git
from failres.hooks.install import _render_first_version
from test_hooks import committed_after_a_quarantine, hooks_dir
from test_land import LoopProject


def as_an_earlier_version_wrote_them(top: Path) -> None:
    """The scripts failres 0.1.0 wrote, whose runner is `<python> -m failres.hookrun`."""
    for name in ("pre-merge-commit", "post-merge"):
        hook = hooks_dir(top) / name
        hook.write_text(_render_first_version(name, f"{shlex.quote(sys.executable)} -m failres.hookrun"))
        os.chmod(hook, 0o755)


def test_a_merge_through_hooks_that_call_the_old_module_path_stamps(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    committed_after_a_quarantine(project, cli)
    as_an_earlier_version_wrote_them(project.top)
    project.move_main()
    done = subprocess.run(["git", "merge", "--no-ff", "--no-edit", "failres/rr/t1"], cwd=project.top,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "stamped 1 lesson(s): unknown" in done.stderr
    assert project.lessons()[0]["resolved_by"] == ["unknown"]
    assert git(project.top, "rev-parse", "HEAD").strip() in {e["commit"] for e in project.events() if e["type"] == "landed"}


def test_installing_again_points_such_hooks_at_the_runner_of_today(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    assert cli(project.top, "hooks", "install").code == 0
    as_an_earlier_version_wrote_them(project.top)
    assert cli(project.top, "hooks", "install").code == 0
    for name in ("pre-merge-commit", "post-merge"):
        text = (hooks_dir(project.top) / name).read_text()
        assert "-m failres.hooks.run" in text and "failres.hookrun" not in text
    assert not (hooks_dir(project.top) / "post-merge.legacy").exists()  # recognised as failres's own, not chained
