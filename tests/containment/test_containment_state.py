"""failres's own state under `.git/failres/` is within a seat's reach: planting there reaches nothing else.

A seat runs as the person and can write there by absolute path before failres
writes: a link at its log's name, a guessed evidence directory pointing at `.git`,
a lock file swapped for a copy. Each test asserts the guarantee: the person's git
files byte for byte the same, nothing written outside `.git/failres/`, one live run
per task.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import git
from failres import beneath
from failres.containment.locks import flock_owners
from project import FIXED, Project
from test_containment import assert_second_run_refused


# Each attack with the seat world off (the tamper check alone) and on (`seat_world`).
pytestmark = pytest.mark.usefixtures("seat_world")


FIX = {"write": {"src/calc.py": FIXED}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def run(cli, project: Project, task: str = "t1"):
    return cli(project.top, "run", str(project.plan(task=task)), "--quiet")


def git_files(project: Project) -> dict[str, bytes]:
    """Every file of the person's git dir that failres's own run never writes (its config, hooks, info, HEAD ...)."""
    git_dir = project.top / ".git"
    found = {}
    for root, dirs, names in os.walk(git_dir):
        relative = Path(root).relative_to(git_dir)
        if relative == Path("."):
            dirs[:] = [d for d in dirs if d not in ("failres", "objects", "refs", "logs")]
        for name in names:
            if relative == Path(".") and name in ("index", "packed-refs", "ORIG_HEAD"):
                continue
            found[str(relative / name)] = (Path(root) / name).read_bytes()
    return found


def quarantine(project: Project, task: str = "t1") -> tuple[dict, list[str]]:
    events = project.events(task)
    quarantined = [e for e in events if e["type"] == "quarantined"][-1]
    what = [line for e in events if e["type"] == "seat-tamper" for line in e["what"]]
    return quarantined, what


def wait_for(condition, seconds: float = 30.0) -> None:
    give_up = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < give_up, "timed out waiting"
        time.sleep(0.05)


# ── dispatch logs ─────────────────────────────────────────────────────────

LIVE_DIR = "$(dirname \"$(ls -t {git}/failres/logs/rr/t1/*/*/live.log | head -1)\")"
LOG_PLANTS = {
    "a symlink at seat.log": "ln -sf {git}/config \"$D/seat.log\"",
    "a hard link at seat.log": "ln -f {git}/config \"$D/seat.log\"",
    "the log directory swapped for a link to .git": "rm -rf \"$D\" && ln -s {git} \"$D\"",
}


@pytest.mark.parametrize("plant", sorted(LOG_PLANTS))
def test_a_seat_that_plants_its_own_log_never_gets_its_output_into_the_persons_git_dir(
        project: Project, cli, plant, seat_world: bool):
    git_dir = project.top / ".git"
    evil = "[core]\\n\\tfsmonitor = /tmp/evil.sh\\n"
    command = f"D={LIVE_DIR.format(git=git_dir)}; {LOG_PLANTS[plant].format(git=git_dir)}; printf '{evil}'"
    project.configure(implementer=[{**FIX, "shell": [command]}])
    before = git_files(project)
    result = run(cli, project)
    assert git_files(project) == before
    assert "fsmonitor" not in (git_dir / "config").read_text()
    if seat_world:  # inside the world the person's git dir is not there to plant in
        return
    assert result.code == 1
    quarantined, what = quarantine(project)
    assert quarantined["failClass"] == "seat-tamper"
    assert any("the dispatch log" in line and "was not written there" in line for line in what)


def test_a_planted_log_name_for_a_later_dispatch_is_refused_and_reported(project: Project, cli, seat_world: bool):
    """The next dispatch's directory is predictable; a link planted there is reported, never written through."""
    git_dir = project.top / ".git"
    plant = f"D={LIVE_DIR.format(git=git_dir)}; N=$(dirname \"$D\")/2; mkdir -p \"$N\"; ln -s {git_dir}/config \"$N/prompt.md\""
    project.configure(implementer=[{"shell": [plant]}], fixer=[FIX])
    before = git_files(project)
    run(cli, project)
    assert git_files(project) == before
    if not seat_world:  # inside the world the person's git dir is not there to plant in
        assert any("prompt.md" in line for line in quarantine(project)[1])


# ── tamper evidence ──────────────────────────────────────────────────────

PREDICTED = (
    "now=$(date +%s); for i in $(seq -2 30); do "
    "d={git}/failres/tamper/rr-t1-$(date -d @$((now+i)) +%Y%m%dT%H%M%S); "
    "mkdir -p \"$d\"; ln -sfn {git} \"$d/checkout\"; done"
)
PREDICTED_NAME = "the evidence directories of the coming seconds"
EVIDENCE_PLANTS = {
    PREDICTED_NAME: PREDICTED,
    "the whole tamper directory as a link to .git": "mkdir -p {git}/failres && rm -rf {git}/failres/tamper && "
                                                    "ln -s {git} {git}/failres/tamper",
}


@pytest.mark.parametrize("plant", sorted(EVIDENCE_PLANTS))
def test_evidence_of_a_tamper_undo_cannot_be_aimed_at_the_persons_git_dir(project: Project, cli, plant, seat_world: bool):
    git_dir = project.top / ".git"
    config = "[core]\\n\\thooksPath = /tmp/planted-hooks\\n"
    project.configure(implementer=[{**FIX, "shell": [
        EVIDENCE_PLANTS[plant].format(git=git_dir),
        f"printf '{config}' > {project.top}/config",
        f"ln -s {git_dir}/config {project.top}/link-to-config"]}])
    before = git_files(project)
    result = run(cli, project)
    assert git_files(project) == before
    assert not (project.top / "config").exists() and not (project.top / "link-to-config").is_symlink()
    if seat_world:  # inside the world the person's checkout and git dir are not there to write
        return
    assert result.code == 1
    quarantined, what = quarantine(project)
    assert quarantined["failClass"] == "seat-tamper"
    kept = [p for p in (git_dir / "failres" / "tamper").glob("*/checkout") if not p.is_symlink()]
    if plant == PREDICTED_NAME:
        # Kept in a directory of its own, a link as a link: nothing of the person's was read or written.
        [checkout] = kept
        assert (checkout / "config").read_text() == config.replace("\\n", "\n").replace("\\t", "\t")
        assert os.readlink(checkout / "link-to-config") == str(git_dir / "config")
    else:
        assert any("could not be kept as evidence" in line for line in what)


# ── the task lock ────────────────────────────────────────────────────────

SWAPS = {
    "a copy": "cp \"$L\" \"$L.new\" && mv -f \"$L.new\" \"$L\"",
    "an empty file": ": > \"$L.new\" && mv -f \"$L.new\" \"$L\"",
}


@pytest.mark.parametrize("swap", sorted(SWAPS))
def test_a_seat_that_swaps_its_lock_file_cannot_let_a_second_run_in(project: Project, cli, swap, seat_world: bool):
    lock = project.top / ".git" / "failres" / "locks" / "rr" / "t1.lock"
    swapped, go = project.agents / "swapped", project.agents / "go"
    project.configure(implementer=[
        {"shell": [f"L={lock}; {SWAPS[swap]}; touch {swapped}",
                   f"for i in $(seq 1200); do [ -e {go} ] && break; sleep 0.05; done"]},
        FIX])
    plan = project.plan()
    first = subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan), "--quiet"], cwd=project.top,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(swapped.exists)
        # The holder notices and puts its own lock file back while its seat still runs.
        wait_for(lambda: f'"pid": {first.pid}' in lock.read_text())
        assert_second_run_refused(project, cli, plan, first.pid)
    finally:
        go.touch()
        first.wait(timeout=120)
    if not seat_world:  # inside the world the lock file is not there to swap
        assert first.returncode == 1, first.stderr.read()
        quarantined, what = quarantine(project)
        assert quarantined["failClass"] == "seat-tamper"
        assert any("t1.lock was replaced: put back" in line for line in what)
    assert run(cli, project).code == 0
    [committed] = [e["commit"] for e in project.events() if e["type"] == "task-committed"]
    assert git(project.top, "rev-parse", "failres/rr/t1").strip() == committed


def test_a_lock_file_replaced_by_a_copy_still_shows_its_live_holder():
    """The copy names the holder's pid and inode, and /proc/locks shows that flock: the prober counts it live."""
    text = ("1: FLOCK  ADVISORY  WRITE 4242 fe:00:2146603 0 EOF\n"
            "1: -> FLOCK  ADVISORY  WRITE 4343 fe:00:2146603 0 EOF\n"
            "2: POSIX  ADVISORY  WRITE 77 00:2f:99 0 EOF\n")
    assert flock_owners(text) == {(4242, 2146603)}


# ── writing beneath a root ───────────────────────────────────────────────


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root").mkdir()
    (tmp_path / "victim").write_text("the person's\n")
    return tmp_path / "root"


def test_a_write_beneath_a_root_never_follows_a_link_at_the_name(root: Path):
    victim = root.parent / "victim"
    (root / "logs").mkdir()
    os.symlink(victim, root / "logs" / "seat.log")
    for write in (lambda: beneath.write_file(root, "logs/seat.log", b"seat"),
                  lambda: beneath.append_file(root, "logs/seat.log", b"seat")):
        with pytest.raises(beneath.Planted):
            write()
    with pytest.raises(FileExistsError):
        beneath.write_file(root, "logs/seat.log", b"seat", exclusive=True)
    assert victim.read_text() == "the person's\n"


def test_a_write_beneath_a_root_never_crosses_a_linked_directory(root: Path):
    os.symlink(root.parent, root / "logs")
    with pytest.raises(beneath.Planted):
        beneath.write_file(root, "logs/victim", b"seat")
    assert (root.parent / "victim").read_text() == "the person's\n"


def test_a_write_beneath_a_root_refuses_a_hard_link_and_a_fifo(root: Path):
    os.link(root.parent / "victim", root / "hard")
    os.mkfifo(root / "fifo")
    for name in ("hard", "fifo"):
        with pytest.raises(beneath.Planted):
            beneath.append_file(root, name, b"seat")
    with pytest.raises(beneath.Planted):
        beneath.write_file(root, "hard", b"seat")
    assert (root.parent / "victim").read_text() == "the person's\n"


def test_a_path_that_leaves_the_root_is_refused(root: Path):
    for relative in ("../victim", "/etc/passwd", "a/../../victim"):
        with pytest.raises(ValueError, match="not a path beneath a root"):
            beneath.write_file(root, relative, b"seat")


def test_copying_evidence_copies_a_link_as_a_link(root: Path):
    os.symlink(root.parent / "victim", root / "link")
    assert beneath.copy_in(root / "link", root, "evidence/link")
    assert os.readlink(root / "evidence" / "link") == str(root.parent / "victim")
    (root / "file").write_text("left by the seat\n")
    assert beneath.copy_in(root / "file", root, "evidence/file")
    assert (root / "evidence" / "file").read_text() == "left by the seat\n"
    with pytest.raises(FileExistsError):
        beneath.copy_in(root / "file", root, "evidence/link")


# ── failres's private index of a workspace ───────────────────────────────


@pytest.mark.parametrize("plant", ["the state directory", "its scratch directory"])
def test_a_seat_that_links_its_workspace_state_to_git_never_gets_the_persons_index_written(project: Project, cli,
                                                                                            plant, seat_world: bool):
    """The private index (and the snapshot's scratch index) are git's to write: never through the seat's link."""
    git_dir = project.top / ".git"
    state = git_dir / "failres" / "workspaces" / "rr" / "t1"
    target = state if plant == "the state directory" else state / "scratch"
    project.configure(implementer=[{"write": {"src/other.py": "VALUE = 2\n"},
                                    "shell": [f"rm -rf {target} && ln -s {git_dir} {target}"]}])
    (project.top / "notes.txt").write_text("the person's own notes\n")
    git(project.top, "add", "notes.txt")  # the person's staged work is in their index
    index = (git_dir / "index").read_bytes()
    before = git_files(project)
    result = run(cli, project)
    assert (git_dir / "index").read_bytes() == index
    assert git_files(project) == before
    if plant == "the state directory" and not seat_world:  # failres's next git call would have used it: the run stops there
        assert result.code == 2 and "tampered with" in result.err


def test_the_hooks_log_is_never_appended_through_a_link_a_seat_left(project: Project, monkeypatch):
    from failres.hooks.run import LOG_NAME, log_line

    git_dir = project.top / ".git"
    (git_dir / "failres" / "log").mkdir(parents=True)
    os.symlink(git_dir / "config", git_dir / "failres" / "log" / LOG_NAME)
    before = git_files(project)
    monkeypatch.chdir(project.top)
    assert log_line("[core]\n\tfsmonitor = /tmp/evil.sh") is None
    assert git_files(project) == before
