"""The failpoint walk: a run killed at each step boundary loses nothing and resumes to the same end.

At each failpoint (`lessons.failpoints`) a whole `git failres` process is SIGKILLed —
no `finally`, no flush — and then the invariants are checked: `git fsck --strict`
clean; the person's refs, index and working tree as they were; every store record
the killed process had written still there; and the next run, with no failpoint,
ends where an uninterrupted run of the same plan ends (the same tasks committed, the
same trees on their branches). Alone, under `--jobs 4`, and with `--remote` (three
clones of one bare remote). CI runs a sample of the walk; `FAILRES_WALK=all` runs
every failpoint in every mode.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from remote_project import clone, make_remote
from lessons.failpoints import ACTIONS, FAILPOINTS, VARIABLE, FailpointError, failpoint, parse

ROOT = Path(__file__).resolve().parents[2]
FULL = os.environ.get("FAILRES_WALK") == "all"
WRONG = {"write": {"src/calc.py": "def add(a, b):\n    return a * b\n"}}
FIX = {"write": {"src/calc.py": FIXED}}
# Reached by every `run` of the walk's plan (an implementer that is wrong, a fixer that is right).
RUN_POINTS = ("workspace-made", "preflight", "dispatch", "dispatch-done", "scope-check", "put-back", "gate",
              "commit", "journal-write", "store-write")
SAMPLE = {"1": ("dispatch", "put-back", "commit", "store-write"), "4": ("commit",)}
REMOTE_POINTS = ("claim", "publish", "fold", "sync")


def call_sites() -> dict[str, list[str]]:
    """Every `failpoint("name")` in failres/ and lessons/, by name: where each one is."""
    found: dict[str, list[str]] = {}
    for package in ("failres", "lessons"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "failpoint"
                        and node.args and isinstance(node.args[0], ast.Constant)):
                    found.setdefault(node.args[0].value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_failpoint_is_declared_and_every_declared_one_is_placed():
    sites = call_sites()
    print("failpoints:", *(f"{name} ({', '.join(sites.get(name, ['nowhere']))}): {what}"
                           for name, what in FAILPOINTS.items()), sep="\n  ")
    assert sorted(sites) == sorted(FAILPOINTS)


def test_a_failpoint_value_names_a_step_an_action_and_a_count():
    assert parse("commit") == ("commit", "crash", 1)
    assert parse("gate:hang@3") == ("gate", "hang", 3)
    assert parse("gate:error") == ("gate", "error", 1)
    assert [parse(v) for v in ("no-such-step", "gate:explode", "gate@0", "gate@x")] == [None] * 4
    assert ACTIONS == ("crash", "error", "hang")


def test_a_failpoint_is_a_no_op_unless_named_and_errors_on_its_nth_hit(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    failpoint("reclaim")  # unset: nothing
    monkeypatch.setenv(VARIABLE, "commit:error@2")
    failpoint("reclaim")  # another step: nothing
    failpoint("commit")  # the first hit of two: nothing
    with pytest.raises(FailpointError, match="failpoint commit"):
        failpoint("commit")


# ── the walk ──────────────────────────────────────────────────────────


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAILRES_")}
    env.update(extra)
    return env


def failres(top: Path, *args: str, point: str = "", timeout: float = 180) -> subprocess.CompletedProcess:
    env = clean_env(**({VARIABLE: point} if point else {}))
    return subprocess.run([sys.executable, "-m", "failres", *args], cwd=top, capture_output=True, text=True,
                          env=env, timeout=timeout)


def stateless_seat(project: Project, name: str, text: str) -> list[str]:
    """A seat that writes the same file whatever ran before: the walk's seats run again after a kill,
    several at once under `--jobs`, so none may keep a count."""
    script = project.agents / f"{name}.py"
    script.write_text(f"import pathlib, sys\nsys.stdin.read()\npathlib.Path('src/calc.py').write_text({text!r})\n")
    return [sys.executable, str(script)]


def walk_project(tmp_path: Path, tasks: int) -> tuple[Project, Path]:
    project = Project.create(tmp_path)
    project.configure(implementer=[WRONG], fixer=[FIX], extra="[repair]\nmax_attempts = 2\n")
    config = project.top / ".failres.toml"
    text = config.read_text()
    for binding, seat in (("impl", stateless_seat(project, "wrong", WRONG["write"]["src/calc.py"])),
                          ("fix", stateless_seat(project, "right", FIXED))):
        old = text.split(f"[bindings.{binding}]\ncommand = ", 1)[1].split("\n", 1)[0]
        text = text.replace(old, json.dumps(seat))
    config.write_text(text)
    plan = project.agents.parent / "plan.toml"
    plan.write_text(f'slug = "{project.slug}"\n' + "".join(
        f'[[tasks]]\nid = "t{n}"\nprompt = "Make tests/check.py pass."\nfiles = ["src/calc.py"]\n'
        for n in range(1, tasks + 1)))
    return project, plan


def person_state(top: Path) -> dict[str, str]:
    """What of the person's repository no failres step may change: refs outside failres's, HEAD, index, files."""
    refs = git(top, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main", "refs/tags")
    files = {str(p.relative_to(top)): p.read_bytes().hex() for p in sorted(top.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(top).parts}
    return {"refs": refs, "head": git(top, "symbolic-ref", "HEAD"), "index": git(top, "ls-files", "--stage"),
            "status": git(top, "status", "--porcelain", "--untracked-files=all"), "files": json.dumps(files)}


def store_records(top: Path) -> set[str]:
    if subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/failres/store"], cwd=top,
                      capture_output=True).returncode:
        return set()
    return set(git(top, "ls-tree", "-r", "--name-only", "refs/failres/store").split())


def end_state(top: Path, tasks: int) -> dict[str, str]:
    """Each task's branch tree: what a run that reached the end left."""
    out = {}
    for n in range(1, tasks + 1):
        done = subprocess.run(["git", "rev-parse", "-q", "--verify", f"failres/rr/t{n}^{{tree}}"], cwd=top,
                              capture_output=True, text=True)
        out[f"t{n}"] = done.stdout.strip()
    return out


def assert_sound(top: Path) -> None:
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=top, capture_output=True, text=True)
    assert fsck.returncode == 0 and "missing" not in fsck.stdout + fsck.stderr, fsck.stdout + fsck.stderr


def walk(jobs: tuple[str, ...]) -> list[tuple[str, str]]:
    """(failpoint, jobs) pairs: every run failpoint in every mode, or CI's sample of them."""
    return [(point, j) for j in jobs for point in RUN_POINTS if FULL or point in SAMPLE[j]]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, str]]:
    """The end state of the walk's plan run once without a failpoint, for one task and for four."""
    ends = {}
    for tasks, jobs in ((1, "1"), (4, "4")):
        project, plan = walk_project(tmp_path_factory.mktemp(f"plain{tasks}"), tasks)
        done = failres(project.top, "run", str(plan), "--quiet", "--jobs", jobs)
        assert done.returncode == 0, done.stderr
        ends[tasks] = end_state(project.top, tasks)
    assert len(set(ends[4].values())) == 1 and ends[4]["t1"] == ends[1]["t1"]
    return ends


@pytest.mark.parametrize(("point", "jobs"), walk(("1", "4")))
def test_a_run_killed_at_a_failpoint_loses_nothing_and_resumes_to_the_same_end(
        tmp_path: Path, uninterrupted, point: str, jobs: str):
    tasks = 1 if jobs == "1" else 4
    project, plan = walk_project(tmp_path, tasks)
    before = person_state(project.top)
    killed = failres(project.top, "run", str(plan), "--quiet", "--jobs", jobs, point=point)
    assert killed.returncode == -9, f"{point} was not reached: {killed.returncode} {killed.stderr[-2000:]}"
    written = store_records(project.top)
    assert_sound(project.top)
    assert person_state(project.top) == before
    resumed = failres(project.top, "run", str(plan), "--quiet", "--jobs", jobs)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert_sound(project.top)
    assert person_state(project.top) == before
    assert written <= store_records(project.top)  # no record ever written is missing
    assert end_state(project.top, tasks) == uninterrupted[tasks]


@pytest.mark.parametrize("point", ["land", "hook-stamp"] if FULL else ["land"])
def test_a_land_killed_at_a_failpoint_lands_once_and_is_stamped_once(tmp_path: Path, uninterrupted, point: str):
    """Killed before its merge, `land` lands when run again; killed after it, before the stamp, the
    merge stands and `label` stamps it (what the merge hook's own failure leaves, too)."""
    project, plan = walk_project(tmp_path, 1)
    assert failres(project.top, "run", str(plan), "--quiet").returncode == 0
    killed = failres(project.top, "land", "rr", "t1", point=point)
    assert killed.returncode == -9, killed.stderr
    assert_sound(project.top)
    again = failres(project.top, "land" if point == "land" else "label", *(("rr", "t1") if point == "land" else ()))
    assert again.returncode == 0, again.stdout + again.stderr
    assert_sound(project.top)
    assert git(project.top, "show", "main:src/calc.py") == FIXED
    assert len(git(project.top, "log", "--merges", "--format=%s", "main").splitlines()) == 1
    assert [e["type"] for e in project.events()].count("landed") == 1


def test_an_import_killed_between_batches_writes_nothing_and_imports_whole_when_run_again(tmp_path: Path):
    project, _ = walk_project(tmp_path, 1)
    lines = [json.dumps({"ts": "2026-11-01T00:00:00.000Z", "slug": "imp", "task": f"t{n}", "failClass": "gate-red",
                         "message": f"lesson {n}"}) for n in range(30)]
    source = tmp_path / "lessons.jsonl"
    source.write_text("\n".join(lines) + "\n")
    tip = git(project.top, "rev-parse", "refs/failres/store")
    killed = failres(project.top, "lessons", "import", str(source), point="import-batch")
    assert killed.returncode == -9, killed.stderr
    assert git(project.top, "rev-parse", "refs/failres/store") == tip  # all or nothing
    assert_sound(project.top)
    again = failres(project.top, "lessons", "import", str(source))
    assert again.returncode == 0, again.stdout + again.stderr
    imported = subprocess.run([sys.executable, "-m", "failres", "lessons", "list", "--json"], cwd=project.top,
                              capture_output=True, text=True, env=clean_env())
    assert sum(1 for lesson in json.loads(imported.stdout) if lesson.get("slug") == "imp") == 30
    assert_sound(project.top)


@pytest.mark.parametrize("point", list(REMOTE_POINTS if FULL else ("publish",)))
def test_a_remote_runner_killed_at_a_failpoint_loses_nothing_and_the_plan_ends_committed(tmp_path: Path, point):
    tasks = ["a", "b", "c"]
    bare, plan, _ = make_remote(tmp_path, tasks, lease="2s")
    runners = [clone(tmp_path, bare, f"r{n}") for n in range(3)]
    before = [person_state(top) for top in runners]
    killed = failres(runners[0], "run", str(plan), "--remote", "origin", "--quiet", point=point)
    assert killed.returncode == -9, f"{point} was not reached: {killed.returncode} {killed.stderr[-2000:]}"
    assert_sound(runners[0])
    procs = [subprocess.Popen([sys.executable, "-m", "failres", "run", str(plan), "--remote", "origin", "--quiet"],
                              cwd=top, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for top in runners]
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode in (0, 1), out + err
    for top, was in zip(runners, before):
        assert_sound(top)
        assert person_state(top) == was
    subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=bare, check=True, capture_output=True)
    for task in tasks:
        branch = git(bare, "rev-parse", "-q", "--verify", f"refs/heads/failres/rr/{task}")
        assert branch.strip(), f"{task} was not published"
        assert git(bare, "show", f"refs/heads/failres/rr/{task}:src/{task}.py") == f"DONE = {task!r}\n"
