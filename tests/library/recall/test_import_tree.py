"""A bulk import, with the policy's reclaim after it, leaves exactly the tree it always left.

The import's per-lesson work (parsing, redaction, signatures, encoding) and the reclaim
that follows it were made several times faster; what they write must not change by one
byte. `EXPECTED_TREE` is the store's tree id after importing `mixed_lines()` with the code
as it was before (the field-by-field redaction, the record read back blob by blob, every
moved blob rewritten): a tree id names every byte of every record and path under it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import git
from lessons.storage.store import Store
from test_import import store  # noqa: F401  (the fixture: a repository with a store)

# `git rev-parse refs/failres/store^{tree}` after the import below, with the earlier code.
EXPECTED_TREE = "9ac8e8c559c3f0653b0d4e92a36d1b9cf4e4cd64"
LESSONS = 3000
MAX_LESSONS = 1000  # the import fills the store three times over: the reclaim archives most of it

SECRETS = ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "AKIA" + "IOSFODNN7EXAMPLE",
           "sk-ant-" + "api03-" + "Zx9Qw2Er7Ty4Ui1Op6As3Df8Gh5Jk0Lz2Xc7Vb4Nm9", "postgres://app:hunter2hunter2@db.internal:5432/app",
           "password=Tr0ub4dor&3xyz")
CLASSES = ("gate-not-green-after-fixer", "fixer-scope-violation", "wrapper-engine-down", "seat-timeout")


def mixed_lines() -> list[str]:
    """Lessons of every shape an import meets: secrets in any field, volatile parts for the
    signature to normalise, given ids and signatures, resolved ones, repeats of a line."""
    lines = []
    for n in range(LESSONS):
        # Every time is years old: which lessons the reclaim keeps does not drift with the clock.
        doc: dict[str, object] = {
            "ts": f"2020-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{(7 * n) % 60:02d}"
                  + ("Z" if n % 3 else "+02:00"),
            "slug": f"plan{n % 7}", "task": f"t{n % 31}", "failClass": CLASSES[n % len(CLASSES)],
            "message": f"FAILED tests/test_m{n % 50}.py::test_{n} - assert {n} == {n + 1} after {n % 9}.5s "
                       f"in /tmp/tmp.{n:06x}/work, pid {1000 + n}",
        }
        if n % 11 == 0:
            doc["message"] = f"{doc['message']}\nexported {SECRETS[n % len(SECRETS)]} in step {n}"
        if n % 13 == 0:
            doc["package"] = f"pkg {SECRETS[(n // 13) % len(SECRETS)]}" if n % 26 == 0 else "src"
        if n % 5 == 0:
            doc["resolved_by"] = [["scope-widened"], ["unknown"], ["integration-head-moved", "scope-widened"]][n % 3]
            doc["resolved_at"] = "2020-12-31T00:00:00Z"
        if n % 17 == 0:
            doc["id"] = f"{n:016x}"
        if n % 19 == 0:
            doc["signature"] = f"{doc['failClass']}|worker 0x7f3a{n:08x} died at 12:0{n % 10}:33"
        if n % 23 == 0:
            doc["intHead"] = f"{n:040x}"
        lines.append(json.dumps(doc, ensure_ascii=n % 2 == 0))
        if n % 29 == 0:
            lines.append(lines[-1])  # the same lesson twice is one lesson
    return lines


def test_an_import_and_its_reclaim_leave_the_tree_they_always_left(repo: Path, store: Store, cli, monkeypatch) -> None:
    monkeypatch.setenv("FAILRES_POLICY_MAX_LESSONS", str(MAX_LESSONS))
    lines = mixed_lines()
    before = git(repo, "rev-parse", "refs/failres/store").strip()
    broken = repo.parent / "broken.jsonl"
    broken.write_text("\n".join([*lines[:2000], '{"ts": "2020-01-01T00:00:00Z", "slug": "s"}', *lines[2000:]]) + "\n")
    refused = cli(repo, "lessons", "import", str(broken))
    assert refused.code == 2, refused.out + refused.err
    assert f"broken.jsonl:2001: missing required field 'task'" in refused.err
    assert git(repo, "rev-parse", "refs/failres/store").strip() == before  # nothing written

    source = repo.parent / "mixed.jsonl"
    source.write_text("\n".join(lines) + "\n")
    result = cli(repo, "lessons", "import", str(source), "--json")
    assert result.code == 0, result.out + result.err
    assert json.loads(result.out)["imported"] == LESSONS
    assert git(repo, "rev-parse", "refs/failres/store^{tree}").strip() == EXPECTED_TREE
    tree = git(repo, "ls-tree", "-r", "--name-only", "refs/failres/store")
    for secret in (*SECRETS, "hunter2", "Tr0ub4dor"):
        found = subprocess.run(["git", "grep", "-F", "-l", secret, "refs/failres/store"], cwd=repo,
                               capture_output=True, text=True)
        assert found.returncode == 1 and not found.stdout, found.stdout  # in no record, live or archived
    assert sum(1 for path in tree.splitlines() if path.startswith("lessons/")) == MAX_LESSONS * 3 // 4
    assert "consolidate lessons" in git(repo, "log", "-1", "--format=%s", "refs/failres/store")
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
