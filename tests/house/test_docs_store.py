"""docs/store.md: every kind of record in a real store is described, and its plain-git undo
recipe, run as written, reverts exactly one write."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from conftest import ROOT, git, run_failres
from project import Project

DOC = (ROOT / "docs" / "store.md").read_text()


def test_every_collection_of_a_real_store_is_described(kept_demo: Path) -> None:
    paths = git(kept_demo, "ls-tree", "-r", "--name-only", "refs/failres/store").split()
    collections = {path.split("/")[0] for path in paths}
    assert {"journal", "lessons", "decisions"} <= collections
    for name in collections:
        assert f"`{name}/" in DOC, name
    amendments = [p for p in paths if re.search(r"/[0-9a-f]{16}\+[0-9a-f]{16}\.json$", p)]
    assert amendments  # the demo's stamps and answer are amendments, as the page says
    refs = git(kept_demo, "for-each-ref", "--format=%(refname)").split()
    assert any(r.startswith("refs/failres/snapshots/") for r in refs) and "refs/failres/snapshots/" in DOC


def plain_git_undo() -> str:
    after = DOC[re.search(r"The same with\s+plain git", DOC).start():]  # type: ignore[union-attr]
    return re.search(r"```bash\n(.*?)```", after, re.S).group(1)  # type: ignore[union-attr]


def test_the_plain_git_undo_recipe_reverts_one_quarantine(tmp_path: Path) -> None:
    project = Project.create(tmp_path)
    project.configure(implementer=[{"print": "nothing"}])
    assert run_failres(project.top, "run", str(project.plan()), "--quiet").returncode == 1
    tip = git(project.top, "rev-parse", "refs/failres/store").strip()
    quarantine = git(project.top, "log", "--format=%H", "--grep=failres: quarantine", "refs/failres/store").split()
    assert len(quarantine) == 1 and quarantine[0] == tip
    assert len(json.loads(run_failres(project.top, "lessons", "list", "--json").stdout)) == 1
    script = (plain_git_undo().replace("<commit>", quarantine[0]).replace("<the tip you started from>", tip)
              .replace("/tmp/store", str(tmp_path / "store")))
    script = "\n".join(line for line in script.splitlines() if not line.startswith("git log"))
    done = subprocess.run(["bash", "-e", "-c", script], cwd=project.top, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(run_failres(project.top, "lessons", "list", "--json").stdout) == []
    assert "quarantined" not in [e["type"] for e in project.events()]
    assert git(project.top, "rev-parse", "refs/failres/store^").strip() == tip  # a new commit on top: history kept
    assert not (tmp_path / "store").exists()
