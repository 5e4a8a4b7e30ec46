"""Reading a task's dispatch logs for a person: pick a run, render it, follow it live.

The logs are written by `dispatch_logs` as the loop goes; everything in them was
redacted before it was written. Seat and gate output are kept there as the child
printed them, escapes and all, and shown (text and `--json`) as the plain text
everything else in failres keeps (`lessons.terminal`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from failres.engine.dispatch_logs import DispatchRecord, dispatches, task_runs
from failres.containment.locks import live_holder
from failres.errors import UsageError
from lessons.terminal import plain_text


def select_run(git_dir: Path, slug: str, task: str, index: int | None) -> Path:
    from failres.engine.plan import require_id

    require_id(slug, "slug")
    require_id(task, "task")
    runs = task_runs(git_dir, slug, task)
    if not runs:
        msg = f"no logs of {slug}/{task}"
        raise UsageError(msg, hint="logs are kept for runs on this machine; `git failres status` lists the tasks")
    position = -1 if index is None else (index - 1 if index > 0 else index)
    try:
        return runs[position]
    except IndexError:
        msg = f"{slug}/{task} has {len(runs)} logged run(s); there is no run {index}"
        raise UsageError(msg) from None


def _picked(run: Path, attempt: int | None) -> list[DispatchRecord]:
    records = dispatches(run)
    if attempt is None:
        return records
    picked = [r for r in records if r.number == attempt]
    if not picked:
        msg = f"run {run.name} has {len(records)} dispatch(es); there is no dispatch {attempt}"
        raise UsageError(msg)
    return picked


def render_run(run: Path, attempt: int | None) -> str:
    out = [f"run {run.name}\n"]
    for record in _picked(run, attempt):
        seat = record.seat
        title = (f"dispatch {record.number}: {seat.get('seat', '?')} ({seat.get('binding', '?')}), "
                 f"{seat.get('mode', '?')} attempt {seat.get('attempt', '?')}")
        if seat.get("constrained"):
            title += ", constrained"
        if seat:
            status = ("timed out" if seat.get("timedOut") else f"stopped ({seat['stopped']})" if seat.get("stopped")
                      else f"exit {seat.get('exitCode')}")
            title += f" — {status} in {seat.get('durationMs', 0) / 1000:.1f}s"
        out.append("=" * 72 + f"\n{title}\n")
        for heading, name in (("prompt", "prompt.md"), ("seat output", "seat.log"), ("gate output", "gate.log")):
            text = _output(record, name)
            if text is None and name == "seat.log":
                text = _output(record, "live.log")  # still running
            if text is None:
                continue
            if name == "gate.log":
                gate = record.gate
                heading += f" ({gate.get('gate')}: exit {gate.get('exitCode')}, in {gate.get('cwd')})"
            out.append(f"--- {heading} ---\n{text.rstrip()}\n")
        transcripts = sorted(p.name for p in record.directory.glob("transcript*"))
        if transcripts:
            out.append(f"--- agent transcript: {', '.join(str(record.directory / n) for n in transcripts)}\n")
    return "".join(out)


def _output(record: DispatchRecord, name: str) -> str | None:
    """A log file as shown: the prompt as written, a child's output as plain text."""
    text = record.read(name)
    return text if text is None or name == "prompt.md" else plain_text(text)


def run_document(run: Path, attempt: int | None) -> dict:
    return {
        "run": run.name,
        "dispatches": [
            {"number": r.number, "seat": r.seat, "gate": r.gate or None, "prompt": r.read("prompt.md"),
             "seatOutput": _output(r, "seat.log") if r.read("seat.log") is not None else _output(r, "live.log"),
             "gateOutput": _output(r, "gate.log"),
             "transcripts": sorted(str(p) for p in r.directory.glob("transcript*"))}
            for r in _picked(run, attempt)
        ],
    }


def follow_run(git_dir: Path, slug: str, task: str, run: Path, poll: float = 0.2) -> Iterator[str]:
    """What each dispatch (and the gate after it) prints, as it prints it, until the task's run ends.

    While a seat runs its output grows in `live.log`; once it ends the bounded,
    redacted `seat.log` replaces it. A dispatch already streamed is not shown again. Live
    output goes out line by line as plain text: an escape or a redrawn line is whole only
    once its line is.
    """
    streamed: dict[int, int] = {}  # dispatch -> bytes of live.log shown
    finished: set[int] = set()
    gates: set[int] = set()
    while True:
        live = live_holder(git_dir, slug, task) is not None
        latest = task_runs(git_dir, slug, task)
        if latest and latest[-1] != run:
            run = latest[-1]  # the run that started after we began following
        progressed = False
        for record in dispatches(run):
            if record.number not in streamed and record.number not in finished:
                yield f"=== dispatch {record.number} ===\n"
                streamed[record.number] = 0
            if record.number not in finished:
                done = _output(record, "seat.log")
                if done is not None:
                    if streamed[record.number] == 0:
                        yield done
                    finished.add(record.number)
                    progressed = True
                else:
                    text = record.read("live.log") or ""
                    text = plain_text(text[:text.rfind("\n") + 1])
                    if len(text) > streamed[record.number]:
                        yield text[streamed[record.number]:]
                        streamed[record.number] = len(text)
                        progressed = True
            gate = _output(record, "gate.log")
            if gate is not None and record.number not in gates:
                gates.add(record.number)
                yield f"--- gate output ---\n{gate}"
                progressed = True
        if not live and not progressed:
            return
        if not progressed:
            time.sleep(poll)
