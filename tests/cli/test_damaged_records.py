"""Damaged records, odd arguments and odd files: one line and exit 2 (or a warning), never a
crash, and nothing the store held is lost or replaced by what does not read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, run_failres
from failres.decisions.records import decision_put, make_decision
from lessons.storage.records import change_of
from test_land import ASK_FOR_DOCS, FIX_WITH_DOCS, LoopProject


@pytest.fixture
def demo(kept_demo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "demo"
    shutil.copytree(kept_demo, copy, symlinks=True)
    return copy


def inject(top: Path, path: str, data: bytes = b"", *, mode: str = "100644", oid: str = "") -> str:
    """One store commit, made with plain git, that puts `data` (or the object `oid`) at `path`."""
    tip = git(top, "rev-parse", "refs/failres/store").strip()
    if not oid:
        oid = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=top, input=data, capture_output=True,
                             check=True).stdout.decode().strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(top.parent / "inject-index")}
    subprocess.run(["git", "read-tree", tip], cwd=top, env=env, check=True)
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"{mode},{oid},{path}"], cwd=top, env=env,
                   check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=top, env=env, capture_output=True, text=True,
                          check=True).stdout.strip()
    commit = git(top, "commit-tree", tree, "-p", tip, "-m", f"damage {path}").strip()
    git(top, "update-ref", "refs/failres/store", commit, tip)
    return commit


def clean(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert "Traceback" not in proc.stderr and "unexpected error" not in proc.stderr, proc.stderr


def test_a_submodule_entry_or_a_directory_where_a_record_belongs_is_read_past(demo: Path) -> None:
    commit = git(demo, "rev-parse", "HEAD").strip()
    inject(demo, "lessons/ab/cd/abcdabcdabcdabcd.json", mode="160000", oid=commit)
    inject(demo, "journal/demo/ab/cd/abcdabcdabcdabce.json", mode="160000", oid=commit)
    inject(demo, "lessons/ab/ce/abceabceabceabce.json/x", b"{}")
    for args in (["status"], ["journal", "demo"], ["lessons", "list"], ["report", "--json"], ["gc", "--dry-run"],
                 ["lessons", "show", "abceabceabceabce"], ["lessons", "show", "abcdabcdabcdabcd"]):
        clean(run_failres(demo, *args))


@pytest.mark.parametrize(("path", "record"), [
    ("lessons/ab/cd/abcdabcdabcdabc1.json", {"failClass": "seat-crashed", "message": "m", "slug": "demo",
                                             "task": "t1", "ts": "2026-11-30T10:00:00Z"}),
    ("journal/demo/ab/cd/abcdabcdabcdabc2.json", {"id": "abcdabcdabcdabc2", "ts": 5, "slug": "demo", "task": "t9",
                                                  "type": "task-started"}),
    ("decisions/ab/cd/abcdabcdabcdabc3.json", {"id": "abcdabcdabcdabc3", "ts": "2026-11-30T10:00:00Z",
                                               "slug": "demo", "task": "t1", "kind": "scope", "files": "x",
                                               "requests": "not a list", "status": "open"}),
])
def test_records_with_the_wrong_types_are_shown_without_a_crash(demo: Path, path: str, record: dict) -> None:
    inject(demo, path, json.dumps(record).encode())
    for args in (["status"], ["decisions"], ["report"], ["lessons", "list"]):
        clean(run_failres(demo, *args))


def test_arguments_that_are_not_utf8_are_refused_and_nothing_is_written(demo: Path) -> None:
    tip = git(demo, "rev-parse", "refs/failres/store")
    odd = os.fsdecode(b"k\xff\xfe")
    proc = subprocess.run([sys.executable, "-m", "failres", "facts", "set", "a", odd, "v"], cwd=demo,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr, proc.stderr
    assert git(demo, "rev-parse", "refs/failres/store") == tip


def test_slugs_and_tasks_are_checked_before_they_become_file_names(demo: Path, tmp_path: Path) -> None:
    plan = tmp_path / "long.toml"
    plan.write_text(f'slug = "{"a" * 300}"\n[[tasks]]\nid = "t1"\nprompt = "p"\nfiles = ["src/x.py"]\n')
    for args in (["run", str(plan)], ["run", str(plan), "--dry-run"], ["logs", "..", ".."], ["logs", "demo", "t1/.."],
                 ["prompt", "", "t1"], ["logs", "", ""]):
        proc = run_failres(demo, *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        clean(proc)


def test_an_empty_path_among_the_scope_files_is_refused_and_the_decision_stays_open(tmp_path: Path, cli) -> None:
    project = LoopProject(tmp_path)
    project.configure([ASK_FOR_DOCS, FIX_WITH_DOCS])
    decision = make_decision(slug="rr", task="t1", files=["docs/notes.md"], requests=[])
    project.store().commit(change_of([decision_put(decision)]), "test: a decision")
    for args in (["--scope-files", "docs/notes.md", ""], ["--scope-files", ""],
                 ["--answer-json", '{"scopeFiles": [""]}'], ["--answer-json", '{"scopeFiles": [1, " "]}']):
        result = cli(project.top, "decide", decision["id"], *args)
        assert result.code == 2, (args, result.out, result.err)
    [after] = json.loads(cli(project.top, "decisions", "--json").out)
    assert after["status"] == "open"


@pytest.mark.parametrize("kind", ["dangling", "loop", "fifo"])
def test_a_configuration_that_is_a_broken_link_or_a_fifo_is_an_error_not_an_absence(demo: Path, kind: str) -> None:
    config = demo / ".failres.toml"
    config.unlink()
    if kind == "dangling":
        config.symlink_to(demo / "no-such-file.toml")
    elif kind == "loop":
        config.symlink_to(config)
    else:
        os.mkfifo(config)
    proc = run_failres(demo, "config", "show", timeout=30)
    assert proc.returncode == 2 and ".failres.toml" in proc.stderr, proc.stderr


def test_sync_never_replaces_a_record_that_reads_with_one_that_does_not(demo: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(demo, "remote", "add", "r", str(remote))
    assert run_failres(demo, "sync", "r").returncode == 0
    lesson = json.loads(run_failres(demo, "lessons", "list", "--json").stdout)[0]["id"]
    path = next(p for p in git(demo, "ls-tree", "-r", "--name-only", "refs/failres/store").split()
                if p.startswith("lessons/") and p.endswith(f"/{lesson}.json"))
    # The remote's store gets a damaged version of that record (whatever its blob id)...
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    git(other, "fetch", "-q", "origin", "refs/failres/store:refs/failres/store")
    inject(other, path, b"{damaged")
    git(other, "push", "-q", "origin", "refs/failres/store:refs/failres/store")
    # ... and ours moves on too, so the sync is a real merge.
    assert run_failres(demo, "facts", "set", "build", "tool", "make").returncode == 0
    clean(run_failres(demo, "sync", "r"))
    shown = run_failres(demo, "lessons", "show", lesson, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["id"] == lesson


def test_a_configuration_saved_with_a_byte_order_mark_reads_like_one_without(demo: Path) -> None:
    config = demo / ".failres.toml"
    config.write_bytes(b"\xef\xbb\xbf" + config.read_bytes())
    proc = run_failres(demo, "config", "show", "--json")
    assert proc.returncode == 0, proc.stderr


def test_output_limits_have_an_upper_bound(demo: Path) -> None:
    config = demo / ".failres.toml"
    config.write_text(config.read_text() + "\n[output]\nhead_bytes = 100000000000000000000\n")
    proc = run_failres(demo, "config", "show")
    assert proc.returncode == 2 and "output.head_bytes" in proc.stderr, proc.stderr


def test_reflect_on_a_fifo_is_refused_instead_of_waiting_for_ever(demo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    proc = run_failres(demo, "reflect", str(fifo), timeout=30)
    assert proc.returncode == 2 and "not a transcript file" in proc.stderr, proc.stderr


def test_what_failres_logs_while_a_command_runs_is_one_warning_line(demo: Path) -> None:
    # A limit SQLite cannot hold: the index gives up and the store answers, with a warning.
    proc = run_failres(demo, "lessons", "list", "--limit", "99999999999999999999999")
    clean(proc)
    assert proc.stderr.splitlines() == [
        "warning: store index unavailable, reading the store instead: OverflowError: Python int too large to "
        "convert to SQLite INTEGER"]


def test_a_warning_logged_by_a_module_imported_after_the_start_is_one_inert_line(tmp_path: Path) -> None:
    # A read command starts without `logging`; whatever imports it later still logs in failres's style.
    script = (
        "import sys\n"
        "sys.argv = ['git-failres', 'status', '--json']  # as a read command starts\n"
        "from failres.cli.boundary import run_guarded\n"
        "assert 'logging' not in sys.modules, 'logging imported at the start'\n"
        "def body(_):\n"
        "    import logging\n"
        "    logging.getLogger('failres.late').warning('damaged %s', 'rec\\x1b[31mord')\n"
        "    return 0\n"
        "sys.exit(run_guarded(body, []))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == ["warning: damaged rec\\x1b[31mord"]
