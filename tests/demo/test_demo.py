"""`git failres demo` runs the real loop; its store is checked record by record."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import run_failres
from failres.decisions.records import read_decisions
from failres.journal import read_journal
from lessons.recall.lesson import read_lessons
from lessons.storage.store import Store


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("demo") / "kept"
    proc = run_failres(root.parent, "demo", "--keep", str(root), timeout=300, env=without_this_venv())
    return root, proc


def without_this_venv() -> dict[str, str]:
    """The environment as after the README's `.venv/bin/git-failres demo`: the venv is not on PATH."""
    return {**os.environ, "PATH": os.pathsep.join(
        part for part in os.environ.get("PATH", "").split(os.pathsep)
        if part and Path(part).resolve() != Path(sys.executable).parent.resolve())}


def test_the_demo_succeeds_and_says_how_to_look(demo_dir) -> None:
    root, proc = demo_dir
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = " ".join(proc.stdout.split())
    assert f"git -C {root} log -p refs/failres/store" in out
    assert "Past outcomes on similar failures — advisory, not instructions" in out


def test_the_demo_store_holds_the_story(demo_dir) -> None:
    root, proc = demo_dir
    assert proc.returncode == 0
    store = Store(root)
    journal = read_journal(store, "demo")
    assert journal.problems == ()
    by_task = {t: [e["type"] for e in journal.for_task(t)] for t in ("t1", "t2", "t3", "t4")}

    # t1: quarantined after its fixer, repaired by the upgraded one, landed, stamped binding-changed.
    assert by_task["t1"].count("quarantined") == 1 and by_task["t1"].count("binding-changed") == 1
    assert by_task["t1"][-2:] == ["task-committed", "landed"]
    # t2: violation, constrained retry, SCOPE-REQUEST, decision, answer, landing by a plain merge.
    for kind in ("scope-violation", "scope-request", "decision-requested", "decision-answered", "landed"):
        assert kind in by_task["t2"], kind
    # t3: probed down, then healthy, then committed.
    probes = [e["outcome"] for e in journal.for_task("t3") if e["type"] == "repair"]
    assert probes == ["down", "healthy"] and by_task["t3"][-1] == "task-committed"
    # t4: two quarantines, then a stop-loss with nothing dispatched after it.
    assert by_task["t4"].count("stop-loss") == 1
    after_stop = by_task["t4"][by_task["t4"].index("stop-loss"):]
    assert "seat-dispatched" not in after_stop

    lessons, problems = read_lessons(store)
    assert problems == []
    resolved = {lesson["task"]: lesson["resolved_by"] for lesson in lessons if lesson["resolved_by"]}
    assert resolved == {"t1": ["binding-changed"], "t2": ["decision-answered", "scope-widened"]}
    # The stop-loss stop is an event of t4's journal, not one more lesson.
    assert Counter(lesson["failClass"] for lesson in lessons) == Counter({
        "gate-not-green-after-fixer": 3, "fixer-scope-violation": 1})

    decisions, _ = read_decisions(store)
    assert [(d["task"], d["status"], d["answer"]) for d in decisions] == [
        ("t2", "answered", {"scopeFiles": ["src/calc/util.py"]})]


def test_the_demo_leaves_the_store_clean_for_git(demo_dir) -> None:
    root, _ = demo_dir
    subprocess.run(["git", "fsck", "--strict"], cwd=root, check=True, capture_output=True)
    log = subprocess.run(["git", "log", "--format=%s", "refs/failres/store"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    assert "failres: quarantine demo/t2 (fixer-scope-violation)" in log


def test_demo_keep_refuses_a_directory_with_something_in_it(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("mine\n")
    proc = run_failres(tmp_path, "demo", "--keep", str(tmp_path / "busy"))
    assert proc.returncode == 2
    assert (tmp_path / "busy" / "file").read_text() == "mine\n"


def test_demo_keep_puts_the_repository_at_the_directory_given(demo_dir) -> None:
    root, proc = demo_dir
    assert proc.returncode == 0
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert Path(top) == root.resolve()
    # The scripted agents and the plan live beside the project, out of its history and status.
    assert subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True,
                          check=True).stdout == ""
    assert (root / ".failres-demo" / "plan.toml").is_file()


def test_the_demo_prints_lists_as_words_not_python(demo_dir) -> None:
    _, proc = demo_dir
    assert "resolved by binding-changed" in proc.stdout
    assert "['" not in proc.stdout


def test_piped_the_demo_is_plain_words_without_its_styling_tags(demo_dir) -> None:
    _, proc = demo_dir
    assert "1. A red gate" in proc.stdout
    assert not any(tag in proc.stdout for tag in ("[bold]", "[/bold]", "[dim]", "[italic]"))


def test_demo_keep_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine\n")
    proc = run_failres(tmp_path, "demo", "--keep", str(tmp_path / "file"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == f"error: {tmp_path / 'file'} exists and is not a directory"


def test_the_demo_s_closing_command_works_where_git_failres_is_not_on_path(demo_dir) -> None:
    root, proc = demo_dir
    assert proc.returncode == 0, proc.stderr[-3000:]
    closing = [line.strip() for line in proc.stdout.splitlines() if line.strip().startswith("cd ")][-1]
    assert "report" in closing and "lessons list" in closing
    done = subprocess.run(["bash", "-c", closing], env=without_this_venv(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, (closing, done.stderr)
    assert "quarantine" in done.stdout.lower()
