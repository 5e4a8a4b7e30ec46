"""`run`, as a plain function a start-up without typer can call.

Every task of a plan is a `git failres run` process, and each pays the process's start:
building the whole command line (every command module, typer, click's parse of the
options, the pydantic typer asks about them) was about a fifth of the cpu failres spent
on a task whose gate is a small pytest suite. `run_fast` takes the lines a plan is
usually run with (a plan, `--task` as many times as wanted, `--quiet`, `--json`) and
calls the same function the typer command calls; any other word (help, `--jobs`,
`--patch`, `--`, a value that begins with a dash) hands the line back to typer, whose
answer stays the one a person sees.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from failres.cli.common import emit_json, open_context, print_lines
from failres.errors import EXIT_NOT_GREEN

_FLAGS = {"--quiet": "quiet", "-q": "quiet", "--json": "json_out"}


def run_command(plan: Path, task_ids: list[str], *, quiet: bool = False, json_out: bool = False,
                jobs: int = 1, patch: Path | None = None, force: bool = False,
                remote: str | None = None) -> int:
    """Run (or resume) the plan's tasks through the loop; the exit code the command ends with."""
    from failres.containment.interrupts import Interrupted, stop_on_signals
    from failres.engine.entry import engine_for, outcome_document, outcome_lines, progress_for, run_plan_file
    from failres.knowledge.attach import attach_knowledge

    ctx = open_context()
    progress = progress_for(quiet=quiet or json_out)
    engine = engine_for(ctx, progress, attach=attach_knowledge)
    try:
        with stop_on_signals(engine.stop):
            if remote is not None:
                outcomes = _run_remote(engine, plan, remote, task_ids, patch, jobs)
            else:
                outcomes = run_plan_file(engine, plan, task_ids=task_ids, patch=patch, force=force, jobs=jobs)
    except Interrupted:
        outcomes = None
    except Exception:
        # The same Ctrl-C that stops the run reaches its git children; what fails because
        # of it is the stop, said as one (the resume line, 128 + the signal's number).
        if not engine.stop.is_set():
            raise
        outcomes = None
    finally:
        # The live display is put away first: a line printed under it would be drawn over.
        close = getattr(progress, "close", None)
        if close is not None:
            close()
    if outcomes is None or engine.stop.is_set():
        from failres.engine.progress import resume_line

        sys.stdout.flush()
        sys.stderr.write(resume_line(engine.stop.signum, plan, task_ids) + "\n")
        sys.stderr.flush()
        return engine.stop.exit_code
    if json_out:
        emit_json([outcome_document(o) for o in outcomes])
    else:
        print_lines([line for o in outcomes for line in outcome_lines(o)])
    # Green is committed or landed; a task still waiting on `after` has not gone green either.
    return EXIT_NOT_GREEN if any(o.state not in ("committed", "landed") for o in outcomes) else 0


def _run_remote(engine, plan: Path, remote: str, task_ids: list[str], patch: Path | None, jobs: int):
    from failres.errors import UsageError
    from failres.remote.runner import run_plan_remote

    if patch is not None:
        msg = "--patch applies a person's patch on this machine; it does not go with --remote"
        raise UsageError(msg, hint="run it without --remote, then push the task branch")
    return run_plan_remote(engine, plan, remote, task_ids=task_ids, jobs=jobs)


def run_fast(args: list[str]) -> Callable[[], int] | None:
    """The call a plain `run` line asks for, or None when typer should parse it.

    Taken here only what typer would take the same way: one plan, `--task T` or
    `--task=T` (repeatable, as typer's list option is), `--quiet`/`-q` and `--json`.
    """
    if args[:1] != ["run"]:
        return None
    plans: list[str] = []
    tasks: list[str] = []
    flags: set[str] = set()
    rest = iter(args[1:])
    for word in rest:
        name, eq, inline = word.partition("=")
        if word in _FLAGS:
            flags.add(_FLAGS[word])
        elif name == "--task":
            value = inline if eq else next(rest, None)
            if not value or value.startswith("-"):
                return None
            tasks.append(value)
        elif word.startswith("-") or plans:
            return None
        else:
            plans.append(word)
    if not plans:
        return None
    return lambda: run_command(Path(plans[0]), tasks, quiet="quiet" in flags, json_out="json_out" in flags)
