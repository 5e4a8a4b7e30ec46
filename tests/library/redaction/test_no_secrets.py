"""No secret reaches git: a canary corpus through every write path, then `git log -p` of the store.

Each write path is one function registered with `@write_path`; it gets a fresh project
and lines of text (canaries, or innocent look-alikes), and must push every line through
its path into the store. The test then reads what git holds — every store commit with
its patch, and the messages of the snapshot commits quarantines keep — and checks that
no canary's secret is there, that every canary line did arrive (by the marker that
leads it, so a path that silently dropped the text cannot pass), and that every
look-alike arrived unredacted.

Adding a write path (reflections, rules, proposals, lessons import ...) is adding one
function here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import git
from project import Project

DATA = Path(__file__).resolve().parents[2] / "data"
CANARIES = DATA / "secret_canaries.txt"
LOOKALIKES = DATA / "innocent_lookalikes.txt"
# Seat and gate output reaches a quarantine message through its last 2000 characters;
# a chunk of lines that fits is one task, so every line is in some message.
CHUNK_CHARS = 1500
CHUNK_LINES = 15


@dataclass(frozen=True)
class Canary:
    marker: str
    text: str
    secret: str


def _lines(path: Path) -> list[str]:
    # The corpora are part of the repository: a missing one is a failure, never a skip.
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and
            not line.startswith("#")]


def load_canaries() -> list[Canary]:
    """`kind<TAB>text<TAB>secret` lines; `\\n` in a text stands for a line break (key blocks)."""
    canaries = []
    for number, line in enumerate(_lines(CANARIES), start=1):
        kind, text, secret = line.split("\t")[:3]
        canaries.append(Canary(f"canary{number:03d}", text.replace("\\n", "\n"), secret.replace("\\n", "\n")))
    return canaries


def load_lookalikes() -> list[str]:
    """One look-alike a line (or `kind<TAB>text`, when the file names the kind)."""
    return [line.split("\t")[1] if "\t" in line else line for line in _lines(LOOKALIKES)]


def chunks(lines: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in lines:
        if out[-1] and (sum(len(x) + 1 for x in out[-1]) + len(line) > CHUNK_CHARS or len(out[-1]) >= CHUNK_LINES):
            out.append([])
        out[-1].append(line)
    return out


# ---- what git holds ----

def everything_git_holds(top: Path) -> str:
    """Every store commit with its patch, plus the messages of every snapshot commit."""
    text = git(top, "log", "-p", "--format=%H%n%B", "refs/failres/store")
    snapshots = git(top, "for-each-ref", "--format=%(refname)", "refs/failres/snapshots").split()
    for ref in snapshots:
        text += git(top, "log", "-1", "--format=%B", ref)
    return text


# ---- the write paths ----

WRITE_PATHS: dict[str, Callable[..., None]] = {}


def write_path(function: Callable[..., None]) -> Callable[..., None]:
    WRITE_PATHS[function.__name__] = function
    return function


SEAT = """\
import json, os, sys
chunks = json.load(open(sys.argv[1]))
lines = chunks[int(os.environ["FAILRES_TASK"][1:])]
mode = sys.argv[2]
if mode == "scope-request":
    for n, line in enumerate(lines):
        print(f"SCOPE-REQUEST: docs/need{n}.md — " + line.replace(chr(10), " "))
else:
    print("\\n".join(lines))
sys.exit(0 if mode == "quiet" else 1)
"""


def _run_plan(project: Project, tmp: Path, lines: list[str], *, seat_mode: str, gate_mode: str, cli) -> None:
    parts = chunks(lines)
    (tmp / "chunks.json").write_text(json.dumps(parts))
    script = tmp / "scripted_seat.py"
    script.write_text(SEAT)
    seat = [sys.executable, str(script), str(tmp / "chunks.json"), seat_mode]
    gate = [sys.executable, str(script), str(tmp / "chunks.json"), gate_mode]
    (project.top / ".failres.toml").write_text(
        f"[gates.check]\ncommand = {json.dumps(gate)}\ncwd = \"repo\"\ntimeout = \"60s\"\n"
        f"[bindings.impl]\ncommand = {json.dumps(seat)}\ntimeout = \"60s\"\n"
        "[seats]\nimplementer = \"impl\"\n"
        # Canary text may look like an engine that is down (a 429); its probe must not wait.
        "[probe]\nattempts = 1\nbackoff = \"10ms\"\n"
        + (f'[sandbox]\nmode = "{Project.sandbox_mode}"\n' if Project.sandbox_mode else ""))
    plan = tmp / "plan.toml"
    tasks = "".join(
        f'[[tasks]]\nid = "t{n}"\ntitle = {json.dumps(part[0][:80])}\nprompt = {json.dumps(chr(10).join(part))}\n'
        f'files = ["src/calc.py"]\n'
        for n, part in enumerate(parts))
    plan.write_text(f'slug = "canaries"\n{tasks}')
    result = cli(project.top, "run", str(plan), "--quiet")
    assert result.code == 1, result.err  # every task is meant to be quarantined


@write_path
def seat_output_in_a_quarantine(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """A seat that prints the lines and fails: quarantine message, lesson, journal, plan text."""
    _run_plan(project, tmp, lines, seat_mode="fail", gate_mode="fail", cli=cli)


@write_path
def gate_output_in_a_quarantine(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """A quiet seat, then a gate that prints the lines and stays red."""
    _run_plan(project, tmp, lines, seat_mode="quiet", gate_mode="fail", cli=cli)


@write_path
def scope_requests_and_decisions(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """SCOPE-REQUEST reasons: scope-request events, the decision's requests, the lesson."""
    _run_plan(project, tmp, lines, seat_mode="scope-request", gate_mode="fail", cli=cli)


@write_path
def fact_values(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """`facts set` with the line as value, as source, and as key (which a commit message names)."""
    for line in lines:
        key = " ".join(line.split())[:200]
        result = cli(project.top, "facts", "set", "canary", key, line, "--source", key)
        assert result.code == 0, result.err


@write_path
def decision_answers(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """`git failres decide ID --answer-json J`: a person's answer is recorded whatever its shape."""
    from failres.decisions.records import decision_put, make_decision
    from lessons.storage.records import change_of
    from lessons.storage.store import Store

    store = Store(project.top)
    for line in lines:
        decision = make_decision(slug="canaries", task="t0", files=["docs/x.md"], requests=[])
        store.commit(change_of([decision_put(decision)]), "test: a decision to answer")
        result = cli(project.top, "decide", decision["id"], "--answer-json", json.dumps({"note": line}))
        assert result.code == 0, result.err


@write_path
def lesson_records(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """Lessons written by another harness through the library (what an import writes)."""
    from lessons.recall.lesson import lesson_put, make_lesson
    from lessons.storage.records import change_of
    from lessons.storage.store import Store

    lessons = [make_lesson(slug="canaries", task=f"t{n}", fail_class="unknown", message=line, files=["src/x.py"],
                           int_head="0" * 40, snapshot=None, note=line) for n, line in enumerate(lines)]
    Store(project.top).commit(change_of([lesson_put(x) for x in lessons]), "test: lessons from elsewhere")


@write_path
def lessons_import(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """`git failres lessons import FILE` of JSONL lines."""
    source = tmp / "lessons.jsonl"
    source.write_text("".join(json.dumps({"ts": "2030-01-01T00:00:00.000000Z", "slug": "canaries", "task": f"t{n}",
                                          "failClass": "unknown", "message": line}) + "\n"
                              for n, line in enumerate(lines)))
    result = cli(project.top, "lessons", "import", str(source))
    assert result.code == 0, result.err


def _transcript_of(lines: list[str], tmp: Path) -> Path:
    """A generic-format session in which a person steers with each line, one call apiece."""
    messages = [{"format": "failres.transcript/1", "session_id": "canaries", "kind": "interactive",
                 "cwd": str(tmp)}, {"role": "user", "text": "Fix the parser."}]
    for n, line in enumerate(lines):
        messages.append({"role": "assistant", "tool": "Read", "tool_use_id": f"r{n}",
                         "input": {"file_path": "parser.py"}})
        messages.append({"role": "tool", "tool_use_id": f"r{n}", "text": f"step {n}: the parser"})
        messages.append({"role": "user", "text": line})
    path = tmp / "session.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return path


@write_path
def reflections(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """`git failres reflect` of a transcript whose person speaks the lines."""
    result = cli(project.top, "reflect", str(_transcript_of(lines, tmp)), "--no-edits")
    assert result.code == 0, result.err


@write_path
def proposals_and_rules(project: Project, tmp: Path, lines: list[str], cli) -> None:
    """`learn` turns the person's words into a proposal; accepting it writes a rules file."""
    assert cli(project.top, "reflect", str(_transcript_of(lines, tmp)), "--no-edits").code == 0
    learned = cli(project.top, "learn")
    assert learned.code == 0, learned.err
    listed = json.loads(cli(project.top, "proposals", "list", "--json").out)
    pending = [p for p in listed if p.get("status") == "pending"]
    if pending:
        accepted = cli(project.top, "proposals", "accept", pending[0]["id"])
        assert accepted.code == 0, accepted.err


# ---- the test ----

# The paths a seat or gate writes through run with the seat world off and on (`seat_world`).
SEAT_PATHS = ("gate_output_in_a_quarantine", "scope_requests_and_decisions", "seat_output_in_a_quarantine")


@pytest.mark.parametrize("path", SEAT_PATHS)
def test_no_canary_secret_a_seat_prints_reaches_git_through(path: str, tmp_path: Path, cli, seat_world) -> None:
    test_no_canary_secret_reaches_git_through(path, tmp_path, cli)


@pytest.mark.parametrize("path", sorted(set(WRITE_PATHS) - set(SEAT_PATHS)))
def test_no_canary_secret_reaches_git_through(path: str, tmp_path: Path, cli) -> None:
    canaries = load_canaries()
    assert len(canaries) >= 30, "the corpus must hold at least 30 secret shapes"
    project = Project.create(tmp_path)
    assert cli(project.top, "init", "--no-hooks").code == 0
    WRITE_PATHS[path](project, tmp_path, [f"{c.marker}: {c.text}" for c in canaries], cli)
    held = everything_git_holds(project.top)
    leaked = [f"{c.marker} ({c.secret[:6]}...)" for c in canaries if c.secret in held]
    assert leaked == []
    missing = [c.marker for c in canaries if c.marker not in held]
    assert missing == [], "these lines never reached the store, so the path proves nothing about them"


@pytest.mark.parametrize("path", sorted(WRITE_PATHS))
def test_innocent_lookalikes_survive(path: str, tmp_path: Path, cli) -> None:
    lookalikes = load_lookalikes()
    project = Project.create(tmp_path)
    assert cli(project.top, "init", "--no-hooks").code == 0
    WRITE_PATHS[path](project, tmp_path, lookalikes, cli)
    held = everything_git_holds(project.top)
    redacted = [text for text in lookalikes if _as_stored(text) not in held]
    assert redacted == []


def _as_stored(text: str) -> str:
    """How a line appears in a JSON record (escaped), which is how `git log -p` shows it."""
    return json.dumps(text, ensure_ascii=False)[1:-1]
