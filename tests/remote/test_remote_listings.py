"""What the remote lists to `sync`, `status --remote` and `gc --remote`: the refs they ask for, not all it holds.

A remote shared by many runners holds thousands of branches, tags and claims; a listing of
all of them on every look was most of what a look cost. Each fetch speaks protocol v2 with
its refspecs' prefixes, whatever the person's own `protocol.version`, so the remote lists
only those refs. Counted in git's packet trace: the refs the remote advertised.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import git, run_failres
from test_remote_plain_lines import synced  # noqa: F401 - the fixture: a clone and a remote of one store

OTHERS = 25  # branches, tags and another plan's claims the remote holds beside what failres asks for
# A ref the remote advertised, as the client read it (`fetch<`, `git<`: whichever program listed it).
_ADVERTISED = re.compile(r"packet:\s+[\w-]+< ([0-9a-f]{40}) ([^\s\\]+)")


def advertised(trace: Path) -> list[str]:
    """Every ref name a listing from the remote carried, in the order read (one per ref and listing)."""
    names = [m.group(2) for m in _ADVERTISED.finditer(trace.read_text(errors="replace"))]
    return [name for name in names if name.startswith("refs/") or name == "HEAD"]


@pytest.fixture
def crowded(synced: tuple[Path, Path]) -> tuple[Path, Path]:
    """(bare remote, a clone) with the same store, a plan's claim and task branch on the remote, and
    many refs besides; the clone's own config asks for protocol v0 (everything advertised)."""
    bare, clone = synced
    head = git(clone, "rev-parse", "HEAD").strip()
    refs = ["refs/heads/failres/rr/t1", "refs/failres/claims/rr/t1"]
    refs += [f"refs/heads/feature-{n}" for n in range(OTHERS)] + [f"refs/tags/v{n}" for n in range(OTHERS)]
    refs += [f"refs/failres/claimsx/{n}" for n in range(OTHERS)]  # beside the claims' prefix, not under it
    git(clone, "push", "-q", "origin", *[f"{head}:{ref}" for ref in refs])
    git(clone, "config", "protocol.version", "0")
    return bare, clone


def traced(clone: Path, tmp_path: Path, *line: str):
    trace = tmp_path / "packets.txt"
    trace.unlink(missing_ok=True)
    done = run_failres(clone, *line, env={**os.environ, "GIT_TRACE_PACKET": str(trace)})
    assert done.returncode == 0, done.stderr
    return done, advertised(trace)


def test_a_sync_is_listed_the_store_ref_alone(crowded: tuple[Path, Path], tmp_path: Path) -> None:
    bare, clone = crowded
    done, listed = traced(clone, tmp_path, "sync", "--json")
    assert json.loads(done.stdout)["join"] == "up-to-date"
    assert listed == ["refs/failres/store"]  # v0 listed all 55 refs of the remote
    assert git(clone, "rev-parse", "refs/remotes/origin/failres/store") == git(bare, "rev-parse", "refs/failres/store")


def test_status_remote_is_listed_the_claims_store_and_task_branches_of_failres_only(
        crowded: tuple[Path, Path], tmp_path: Path) -> None:
    _, clone = crowded
    done, listed = traced(clone, tmp_path, "status", "--remote", "origin", "--json")
    assert sorted(listed) == ["refs/failres/claims/rr/t1", "refs/failres/store", "refs/heads/failres/rr/t1"]
    assert [row["task"] for row in json.loads(done.stdout)] == ["t1"]


def test_gc_remote_lists_only_failres_refs_and_the_integration_branch(crowded: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    """Its look at the task branches is the view's fetch: no glob `ls-remote` listing every ref."""
    _, clone = crowded
    done, listed = traced(clone, tmp_path, "gc", "--remote", "origin", "--dry-run", "--json")
    assert json.loads(done.stdout)["items"] == []  # nothing landed: nothing to remove
    outside = [name for name in listed if not name.startswith(("refs/failres/claims/", "refs/failres/store",
                                                               "refs/heads/failres/"))]
    assert outside == ["refs/heads/main"]
    assert sorted(set(listed) - {"refs/heads/main"}) == ["refs/failres/claims/rr/t1", "refs/failres/store",
                                                         "refs/heads/failres/rr/t1"]
