"""init, journal, undo and the error boundary, through the real command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git, run_failres
from failres.journal import EVENT_FIELDS, event_put, make_event, read_journal, sequence
from lessons.storage.records import change_of
from lessons.storage.store import Store


def test_init_writes_a_config_that_loads_and_creates_the_store(plain_repo: Path, cli) -> None:
    repo = plain_repo
    result = cli(repo, "init", "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["wroteConfig"] is True and doc["storeRef"] == "refs/failres/store"
    assert (repo / ".failres.toml").read_text().count('branch = "main"') == 1
    assert git(repo, "rev-parse", "refs/failres/store").strip() == doc["storeTip"]


def test_init_refuses_to_overwrite_unless_forced(repo: Path, cli) -> None:
    (repo / ".failres.toml").write_text('[integration]\nbranch = "trunk"\n')
    result = cli(repo, "init")
    assert result.code == 0
    assert "kept" in result.out
    assert (repo / ".failres.toml").read_text() == '[integration]\nbranch = "trunk"\n'
    assert cli(repo, "init", "--force").code == 0
    assert 'branch = "main"' in (repo / ".failres.toml").read_text()


def test_bad_config_is_one_line_exit_2_and_nothing_written(plain_repo: Path, cli) -> None:
    (plain_repo / ".failres.toml").write_text("[repair]\nmax_atempts = 3\n")
    result = cli(plain_repo, "init")
    assert result.code == 2
    first = result.err.splitlines()[0]
    assert first.startswith("error: ") and ".failres.toml" in first and "repair.max_atempts" in first
    assert "Traceback" not in result.err
    assert git(plain_repo, "for-each-ref", "refs/failres").strip() == ""


def test_outside_a_repository_exits_2_with_a_hint(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    proc = run_failres(outside, "journal", "s", env=env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "hint: " in proc.stderr


def test_git_failres_runs_as_its_own_process(repo: Path) -> None:
    proc = run_failres(repo, "init", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["storeRef"] == "refs/failres/store"


def every_event(slug: str) -> list[dict]:
    sample = {"intHead": "a" * 40, "seat": "fixer", "binding": "agent", "mode": "fix", "attempt": 2,
              "constrained": True, "exitCode": 1, "timedOut": False, "durationMs": 12, "files": ["src/x.py"],
              "file": "src/x.py", "reason": "needs the helper", "gate": "gate0", "passed": False,
              "kind": "wrapper-probe", "outcome": "healthy", "failClass": "unknown", "signature": "unknown|x",
              "message": "boom", "lesson": "0123456789abcdef", "decision": "fedcba9876543210",
              "answer": {"scopeFiles": ["src/y.py"]}, "from": "a", "to": "b", "count": 2, "commit": "b" * 40,
              "what": ["refs/heads/main was moved from a to b: put back"],
              "proposal": {"answer": {"scopeFiles": ["src/y.py"]}, "by": "resolver:r"},
              "title": "Fix the date parser", "after": ["t0"]}
    events = []
    for event_type, fields in EVENT_FIELDS.items():
        events.append(make_event(event_type, slug, "t1", **{k: sample[k] for k in fields}))
    return events


def test_every_contract_event_round_trips_through_the_journal(repo: Path, cli) -> None:
    store = Store(repo)
    events = sequence(every_event("rr"))
    store.commit(change_of([event_put(e) for e in events]), "failres: events rr/t1")
    back = read_journal(store, "rr").events
    assert [e["type"] for e in back] == list(EVENT_FIELDS)
    assert list(back) == events
    result = cli(repo, "journal", "rr", "--json")
    assert result.code == 0
    printed = json.loads(result.out)
    assert printed == [{**event, "schemaVersion": 1} for event in events]  # every field, and the shape's version
    for event in printed:
        assert {"id", "ts", "slug", "task", "type"} <= set(event)
        assert set(EVENT_FIELDS[event["type"]]) <= set(event)


def test_journal_json_is_byte_identical_across_runs(repo: Path, cli) -> None:
    store = Store(repo)
    store.commit(change_of([event_put(e) for e in sequence(every_event("rr"))]), "failres: events")
    first = cli(repo, "journal", "rr", "--json").out
    assert first == cli(repo, "journal", "rr", "--json").out


def test_journal_table_for_people(repo: Path, cli) -> None:
    store = Store(repo)
    store.commit(change_of([event_put(make_event("task-started", "rr", "t1", intHead="c" * 40))]), "failres: e")
    result = cli(repo, "journal", "rr")
    assert result.code == 0
    assert "task-started" in result.out and "t1" in result.out


def test_an_unknown_event_type_is_refused() -> None:
    from lessons.errors import InvalidInput

    with pytest.raises(InvalidInput):
        make_event("task-exploded", "s", "t", boom=True)
    with pytest.raises(InvalidInput, match="lacks intHead"):
        make_event("task-started", "s", "t")


def test_undo_through_the_cli(repo: Path, cli) -> None:
    store = Store(repo)
    oid = store.commit(change_of([event_put(make_event("task-started", "rr", "t1", intHead="c" * 40))]), "failres: e")
    result = cli(repo, "undo", str(oid)[:10])
    assert result.code == 0, result.err
    assert read_journal(store, "rr").events == ()
    again = cli(repo, "undo", str(oid)[:10])
    assert again.code == 2 and "already undone" in again.err


def test_an_unexpected_error_exits_3_and_names_the_log(repo: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import failres.journal

    def explode(*args, **kwargs):
        raise RuntimeError("the disk caught fire")

    monkeypatch.setattr("failres.cli.known.read_journal", explode)
    result = cli(repo, "journal", "rr")
    assert result.code == 3
    assert "unexpected error" in result.err and "RuntimeError" in result.err
    log = repo / ".git" / "failres" / "log" / "failres.log"
    assert log.exists() and "the disk caught fire" in log.read_text()
    assert failres.journal.read_journal is not explode


def test_a_corrupt_journal_record_is_reported_and_skipped(repo: Path, cli) -> None:
    store = Store(repo)
    good = make_event("task-started", "rr", "t1", intHead="c" * 40)
    store.commit(change_of([event_put(good)]), "failres: e")
    from lessons.storage.store import Change

    store.commit(Change({"journal/rr/00/00/0000000000000000.json": b"\x00garbage"}), "failres: torn")
    result = cli(repo, "journal", "rr", "--json")
    assert result.code == 0
    assert [e["id"] for e in json.loads(result.out)] == [good["id"]]
    assert "journal/rr/00/00/0000000000000000.json" in result.err


# Lines a read command's start takes without typer, and lines it hands to typer.
READ_LINES = (
    ("status", "--json"), ("status", "rr", "--json"), ("status", "--json", "rr"), ("status",),
    ("journal", "rr", "--json"), ("journal", "rr", "--task=t1", "--json"), ("journal", "rr", "--task", "t1"),
    ("status", "nope", "--json"), ("journal", "nope", "--json"), ("journal", "rr", "--task", "nope"),
    ("journal", "--json"), ("journal", "rr", "extra"), ("status", "--json", "--json"), ("status", "--bogus"),
    ("journal", "rr", "--task"), ("status", "--", "rr"), ("journal", "rr", "--task", "--json"),
)


@pytest.mark.parametrize("line", READ_LINES, ids=" ".join)
def test_a_read_command_started_without_typer_answers_what_typer_answers(repo: Path, line: tuple[str, ...]) -> None:
    store = Store(repo)
    store.commit(change_of([event_put(e) for e in sequence(every_event("rr"))]), "failres: events")
    plain = run_failres(repo, *line)
    # The same line through typer's parser: a leading pager flag takes the line off the plain path.
    probe = ("import sys, runpy; sys.argv = ['failres', *sys.argv[1:]]; import failres.cli.read_cmds as r; "
             "r.read_fast = lambda args: None; runpy.run_module('failres', run_name='__main__')")
    typed = subprocess.run([sys.executable, "-c", probe, *line], cwd=repo, capture_output=True, text=True, timeout=120)
    assert (plain.returncode, plain.stdout, plain.stderr) == (typed.returncode, typed.stdout, typed.stderr)


def test_status_and_journal_json_start_without_importing_typer(repo: Path) -> None:
    store = Store(repo)
    store.commit(change_of([event_put(e) for e in sequence(every_event("rr"))]), "failres: events")
    probe = ("import sys, runpy; sys.argv = ['failres', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('failres', run_name='__main__')\n"
             "except SystemExit as done:\n    print('typer' in sys.modules, done.code, file=sys.stderr)")
    for line in (("status", "--json"), ("journal", "rr", "--json")):
        proc = subprocess.run([sys.executable, "-c", probe, *line], cwd=repo, capture_output=True, text=True,
                              timeout=120)
        assert proc.stderr.strip().splitlines()[-1] == "False 0", proc.stderr
        assert json.loads(proc.stdout)
