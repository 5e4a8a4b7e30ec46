"""`init` and `undo`: creating the store and reverting one of its writes."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.clidoc.model import HOUSEKEEPING, LOOP
from failres.cli.common import console, emit_json, err_console, open_context


@app.command(rich_help_panel=LOOP, epilog="git failres init")
def init(
    force: bool = typer.Option(False, "--force", help="Overwrite an existing .failres.toml."),
    full: bool = typer.Option(False, "--full", help="Write every key with its default and what it does, commented."),
    no_hooks: bool = typer.Option(False, "--no-hooks", help="Do not install the merge hooks."),
    agent: str = typer.Option(None, "--agent", metavar="claude|codex|aider|script",
                              help="Also write a working gate, binding and seats for this agent."),
    new_store: bool = typer.Option(False, "--new-store",
                                   help="Start an empty store even though an earlier one was deleted, "
                                        "or a remote holds one."),
    no_completion: bool = typer.Option(False, "--no-completion",
                                       help="On a terminal, do not set up <TAB> for your shell (bash, fish)."),
    session_hooks: bool = typer.Option(False, "--session-hooks",
                                       help="With --agent claude: add a SessionEnd hook to .claude/settings.local.json "
                                            "that notes each session's transcript for git failres reflect."),
    learn_with_agent: bool = typer.Option(False, "--learn-with-agent",
                                          help="With --agent claude|codex|aider: reflect and learn ask that agent's "
                                               "print mode (one paid call per reflection and per learn pass)."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Write .failres.toml, create the store ref (or take a remote's), install the hooks.

    Run on a terminal, it also makes <TAB> work for git failres in your shell (bash or fish)
    when no completion it reads is there yet: a venv or pipx install puts its copy where
    bash-completion before 2.12 does not look."""
    from failres.initialise import (check_agent, check_learn_with_agent, check_session_hooks, init_repository,
                                    integration_note, learning_note, next_steps, preflight_offer)

    check_agent(agent)  # before anything is opened or written
    if session_hooks:
        check_session_hooks(agent)
    if learn_with_agent:
        check_learn_with_agent(agent)
    ctx = open_context()
    result = init_repository(ctx.top, force=force, hooks=not no_hooks, agent=agent, new_store=new_store,
                             full=full, session_hooks=session_hooks, learn_with_agent=learn_with_agent)
    steps = next_steps(result.config_path.name, agent if result.wrote_config else None,
                       gate_written=result.gate_guessed)
    readiness = _agent_readiness(agent, ctx.top)
    document = {
        "config": str(result.config_path),
        "wroteConfig": result.wrote_config,
        "storeRef": result.store_ref,
        "storeTip": result.store_tip,
        "storeFrom": result.store_from,
        "hooks": None if result.hooks is None else {
            "dir": str(result.hooks.place.path),
            "installed": {a.hook: a.action for a in result.hooks.actions},
        },
        "hooksProblem": result.hooks_problem,
        "nextSteps": list(steps),
        "agent": None if readiness is None else readiness.document(),
        "integrationBranch": result.integration_branch,
        "sessionHooks": None if result.session_hooks is None else {
            "file": result.session_hooks, "changed": result.session_hooks_changed},
        "gateNote": result.gate_note or None,
        "gatePlaceholder": result.gate_placeholder,
        "preflight": preflight_offer(),
    }
    if json_out:
        emit_json(document)
        _warn_gate(result)
        _warn_unready(readiness)
        return
    out = console()
    if result.wrote_config:
        out.print(f"wrote {result.config_path}")
    else:
        out.print(f"kept {result.config_path} (use --force to overwrite it)")
    for line in integration_note(result):
        out.print(line, markup=False)
    note = learning_note(agent, learn_with_agent and result.wrote_config)
    if note:
        out.print(note, markup=False)
    if result.store_from is not None:
        out.print(f"store {result.store_ref} at {result.store_tip[:12]}, taken from {result.store_from} "
                  f"(keep the two in step with: git failres sync {result.store_from})", markup=False)
    else:
        out.print(f"store {result.store_ref} at {result.store_tip[:12]}")
    if result.hooks is not None:
        actions = ", ".join(f"{a.hook} {a.action}" for a in result.hooks.actions)
        out.print(f"hooks in {result.hooks.place.path}: {actions}", markup=False)
        for note in result.hooks.notes:
            out.print(f"note: {note}", markup=False)
    elif result.hooks_problem:
        out.print(f"hooks not installed: {result.hooks_problem}", markup=False)
    out.print(f"read it with: git log -p {result.store_ref}", markup=False)
    if result.session_hooks is not None:
        done = "added to" if result.session_hooks_changed else "already in"
        out.print(f"session hook {done} {result.session_hooks}: each Claude Code session you end here is "
                  "mined by the next git failres reflect", markup=False)
    if not no_completion:
        _complete_for_newcomer()
    out.print("\nnext:", markup=False)
    for number, step in enumerate(steps, 1):
        out.print(f"  {number}. {step}", markup=False)
    out.print(preflight_offer(), markup=False)
    _warn_gate(result)
    _warn_unready(readiness)


def _warn_gate(result) -> None:
    """The one line on the gate written, when it is not the guess as it stood: on stderr, beside the agent's."""
    if result.gate_note:
        err_console().print(f"{'warning' if result.gate_placeholder else 'note'}: {result.gate_note}", markup=False)


def _agent_readiness(agent: str | None, top):
    """Whether the agent `init --agent` wrote a binding for can run here (None without --agent)."""
    if agent is None:
        return None
    from failres.agents.availability import agent_readiness

    return agent_readiness(agent, top)


def _complete_for_newcomer() -> None:
    """<TAB> for a person at a terminal, whose shell would not find failres's completion yet."""
    import sys

    from failres.cli.common import stdout_is_terminal

    if not (stdout_is_terminal() and sys.stdin.isatty()):
        return  # a script or a seat: nothing written outside the repository
    from failres.clidoc.completion import complete_for_newcomer

    try:
        done = complete_for_newcomer()
    except (OSError, UnicodeError) as problem:  # completion is a comfort: never a failed init
        err_console().print(f"note: completion not set up ({problem}); git failres completion install",
                            markup=False)
        return
    if done is not None:
        console().print(f"completion for {done.shell}: wrote {done.path} (new shells complete git failres)",
                        markup=False)


def _warn_unready(readiness) -> None:
    """What the agent lacks, last and on stderr: the configuration is written, the agent is what is missing."""
    problem = None if readiness is None else readiness.problem()
    if problem is not None:
        err_console().print(f"warning: {problem[0]}", markup=False)
        err_console().print(f"hint: {problem[1]}", markup=False)


@app.command(rich_help_panel=HOUSEKEEPING, epilog="git failres undo 1a2b3c4")
def undo(
    commit: str = typer.Argument(..., help="The store commit to revert (as git names it)."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Revert exactly one store commit, as a new store commit."""
    ctx = open_context()
    from lessons.storage.history import undo_commit

    new = undo_commit(ctx.store, commit)
    if json_out:
        emit_json({"reverted": commit, "commit": str(new)})
        return
    console().print(f"reverted {commit} in {ctx.store.ref} with {str(new)[:12]}")
