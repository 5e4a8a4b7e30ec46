"""`run`, `status` and `prompt`: driving tasks through the loop and looking at them."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli.app import app
from failres.clidoc.model import LOOP
from failres.cli.common import console, echo_text, emit_json, open_context


@app.command(rich_help_panel=LOOP, epilog="git failres run plan.toml --task t1")
def run(
    plan: Path = typer.Argument(..., help="The plan file (TOML)."),
    task: list[str] = typer.Option([], "--task", help="Run only this task (repeatable)."),
    patch: Path = typer.Option(None, "--patch", help="Apply this approved patch exactly; never repaired."),
    force: bool = typer.Option(False, "--force", help="With --patch: replace a committed or landed task's commit."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, metavar="N",
                             help="Run up to N independent tasks at once, each in its own workspace."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check the plan against the configuration and the "
                                                          "repository; dispatch nothing, write nothing."),
    preflight: bool = typer.Option(False, "--preflight", help="With --dry-run: also run each task's gate once at "
                                                              "the integration head (no seat, no record)."),
    json_out: bool = typer.Option(False, "--json", help="Print each task's outcome as JSON."),
    remote: str = typer.Option(None, "--remote", metavar="REMOTE",
                               help="Work the plan together with every other runner of it on this remote: "
                                    "each task claimed there first, results pushed, the store synced."),
) -> None:
    """Run (or resume) a plan's tasks through the loop. Exit 1 if any task is not committed (pending included).

    Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the seats' processes, journal `interrupted`
    (reason `signal`), print the command that resumes and exit 128 + the signal's number.
    """
    from failres.cli.run_plain import run_command

    if preflight and not dry_run:
        from failres.errors import UsageError

        msg = "--preflight goes with --dry-run"
        raise UsageError(msg, hint="a run checks each gate at the integration head itself (gates' preflight = true)")
    if dry_run:
        _dry_run(open_context(), plan, task, patch, json_out, preflight=preflight)
        return
    code = run_command(plan, task, quiet=quiet, json_out=json_out, jobs=jobs, patch=patch, force=force, remote=remote)
    if code:
        raise typer.Exit(code)


def _dry_run(ctx, plan_path: Path, task_ids: list[str], patch: Path | None, json_out: bool, *,
             preflight: bool = False) -> None:
    from failres.errors import EXIT_BAD_INPUT
    from failres.engine.plan import load_plan
    from failres.engine.dry_run import check_plan, read_repo_facts, with_preflight

    plan = load_plan(plan_path, ctx.config)
    checked = check_plan(plan, ctx.config, read_repo_facts(ctx.top, ctx.repo, ctx.store, ctx.config, plan),
                         task_ids=task_ids, patch=patch is not None)
    # The gates are worth checking whatever else is wrong (a binding not installed yet), as
    # long as there is a head to run them at and a gate for each task.
    if preflight and not any(p.level == "error" and p.subject in ("integration.branch", "gates")
                             for p in checked.problems):
        from failres.engine.entry import engine_for
        from failres.engine.preflight_check import preflight_tasks

        running = [t.task for t in checked.tasks if t.action == "run"]
        checked = with_preflight(checked, preflight_tasks(engine_for(ctx), plan, running) if running else [])
    if json_out:
        emit_json(checked.document())
    else:
        from failres.cli.tables import Column, print_table

        out = console()
        out.print(f"plan {checked.slug} ({checked.plan}): nothing was dispatched or written", markup=False)
        print_table((Column("task"), Column("would"), Column("gate"), Column("scope"), Column("why", wraps=True)),
                    [(t.task, t.action, t.gate, f"{len(t.files)} entr{'y' if len(t.files) == 1 else 'ies'}, "
                      f"{t.matched} file{'' if t.matched == 1 else 's'}", t.reason) for t in checked.tasks])
        for item in checked.preflight:
            if item.verdict == "red":
                out.print(f"preflight: task {item.task}: {item.message}", markup=False)
        for problem in checked.problems:
            out.print(f"{problem.level}: {problem.subject}: {problem.message}", markup=False)
        out.print("the plan can run" if checked.ok else "the plan cannot run as it is", markup=False)
    if not checked.ok:
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command(rich_help_panel=LOOP, epilog="git failres status release-readiness --json")
def status(
    slug: str = typer.Argument(None, help="Only this plan's tasks."),
    json_out: bool = typer.Option(False, "--json", help="Print an array of {slug, task, state, ...}."),
    remote: str = typer.Option(None, "--remote", metavar="REMOTE",
                               help="Each task as the remote knows it: its state and who holds it (host, pid, "
                                    "lease left)."),
) -> None:
    """Each task of every plan that ran (pending ones too), its state as the journal tells it, and the totals."""
    from failres.cli.read_cmds import status_command

    status_command(slug, json_out, remote)


@app.command(rich_help_panel=LOOP, epilog="git failres prompt release-readiness t1 --mode fix")
def prompt(
    slug: str = typer.Argument(..., help="The plan's slug."),
    task: str = typer.Argument(..., help="The task id."),
    mode: str = typer.Option("implement", "--mode", metavar="implement|fix", help="Which seat's prompt."),
    plan: Path = typer.Option(None, "--plan", help="The plan file (default: found by slug in the journal)."),
    json_out: bool = typer.Option(False, "--json", help="Print {slug, task, mode, prompt} as one JSON document."),
) -> None:
    """Print the exact prompt that seat would get now."""
    from failres.engine.entry import engine_for, prompt_now
    from failres.knowledge.attach import attach_knowledge

    ctx = open_context()
    text = prompt_now(engine_for(ctx, attach=attach_knowledge), slug, task, mode, plan)
    if json_out:
        emit_json({"slug": slug, "task": task, "mode": mode, "prompt": text})
        return
    echo_text(text)
