"""What failres removes in a workspace's kept paths never reaches through a seat's link.

Before every gate, failres clears the tool caches in the kept paths and, when they changed,
removes them whole to set them up again: on the host, after the seat. `**/node_modules`
follows links, so a seat's `node_modules/evil -> your checkout's web/` once made your
`web/node_modules` a kept root, and its cache, then all of it, were removed.
"""

from __future__ import annotations

from pathlib import Path

from failres.containment import kept
from failres.gitops.workspace_files import remove_tree


def test_no_kept_root_or_cache_is_reached_through_a_link_and_your_files_stay(tmp_path: Path) -> None:
    yours = tmp_path / "checkout" / "web" / "node_modules"
    (yours / ".cache").mkdir(parents=True)
    (yours / ".cache" / "built").write_text("yours\n")
    (yours / "pkg").mkdir()
    (yours / "pkg" / "index.js").write_text("module.exports = 1\n")
    workspace = tmp_path / "workspace"
    (workspace / "node_modules" / ".cache").mkdir(parents=True)
    (workspace / "node_modules" / "evil").symlink_to(tmp_path / "checkout" / "web")
    (workspace / ".venv").mkdir()
    (workspace / ".venv" / "evil").symlink_to(tmp_path / "checkout" / "web")
    keep = ["node_modules/", ".venv/"]
    assert kept.kept_roots(workspace, keep) == [workspace / "node_modules", workspace / ".venv"]
    assert kept.caches(workspace, keep) == [workspace / "node_modules" / ".cache"]
    for path in kept.caches(workspace, keep) + kept.kept_roots(workspace, keep):  # as the check before a gate
        remove_tree(path)
    assert (yours / ".cache" / "built").read_text() == "yours\n"
    assert (yours / "pkg" / "index.js").read_text() == "module.exports = 1\n"
    assert not (workspace / "node_modules").exists()
