"""`decisions [--open]`, `decisions propose ID` and `decide ID`: questions for a person, and their answers."""

from __future__ import annotations

import json

import typer

from failres.cli.app import app
from failres.clidoc.model import LOOP
from failres.cli.common import console, emit_json, err_console, open_context
from failres.errors import EXIT_NOT_GREEN

decisions_app = typer.Typer(help="Decision requests and their answers.", invoke_without_command=True,
                            epilog="git failres decisions --open")
app.add_typer(decisions_app, name="decisions", rich_help_panel=LOOP)


def _who(store) -> str:
    signature = store.signature()
    return f"{signature.name} <{signature.email}>"


@decisions_app.callback()
def decisions(
    ctx: typer.Context,
    open_only: bool = typer.Option(False, "--open", help="Only decisions still waiting for an answer."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON array with the contract's fields."),
) -> None:
    """Decision requests and their answers, oldest first."""
    if ctx.invoked_subcommand is not None:
        return
    from failres.decisions.answering import decision_document
    from failres.decisions.records import read_decisions

    repo = open_context()
    found, problems = read_decisions(repo.store)
    for problem in problems:
        err_console().print(f"warning: skipped unreadable record {problem}", markup=False)
    if open_only:
        from failres.decisions.records import WAITING

        found = [d for d in found if d.get("status") in WAITING]
    documents = [decision_document(d) for d in found]
    if json_out:
        emit_json(documents)
        return
    if not documents:
        console().print("no open decisions" if open_only else "no decisions")
        return
    from failres.cli.tables import Column, bounded_list, print_table

    columns = (Column("id"), Column("task"), Column("status"), Column("files"), Column("requests", wraps=True),
               Column("answer", wraps=True))
    rows = []
    for d in documents:
        listed = d["requests"] if isinstance(d["requests"], list) else []  # a damaged record shows none
        requests = bounded_list([f"{r.get('file')}: {r.get('reason')}" for r in listed if isinstance(r, dict)],
                                sep="; ")
        answer = "" if d["answer"] is None else json.dumps(d["answer"], ensure_ascii=False)
        proposal = d.get("proposal")
        if d["answer"] is None and isinstance(proposal, dict):
            answer = f"proposed by {proposal.get('by')}: {json.dumps(proposal.get('answer'), ensure_ascii=False)}"
        files = d["files"] if isinstance(d["files"], list) else []
        rows.append((str(d["id"])[:8], f"{d['slug']}/{d['task']}", d["status"], bounded_list(files), requests, answer))
    print_table(columns, rows)


@decisions_app.command(epilog="git failres decisions propose 3f9a2b")
def propose(
    decision_id: str = typer.Argument(..., metavar="ID", help="The decision's id (a unique prefix will do)."),
    json_out: bool = typer.Option(False, "--json", help="Print the outcome as JSON."),
) -> None:
    """Ask the resolver seat for an answer; it counts only in the exact scope shape. Exit 1 if none."""
    from failres.engine.resolver_seat import propose_answer

    repo = open_context()
    proposal = propose_answer(repo.top, repo.repo, repo.config, repo.store, decision_id)
    if json_out:
        emit_json({"decision": proposal.decision, "binding": proposal.binding, "accepted": proposal.accepted,
                   "answered": proposal.answered, "answer": proposal.answer, "reason": proposal.reason,
                   "log": str(proposal.log) if proposal.log else None})
    elif proposal.answered:
        console().print(f"decision {proposal.decision[:8]} answered by resolver:{proposal.binding}: "
                        f"{json.dumps(proposal.answer)}", markup=False)
    elif proposal.accepted:
        console().print(f"resolver:{proposal.binding} proposes for decision {proposal.decision[:8]}: "
                        f"{json.dumps(proposal.answer)}", markup=False)
        console().print(f"a person decides: git failres decide {proposal.decision[:8]} --accept-proposal",
                        markup=False)
    else:
        console().print(f"decision {proposal.decision[:8]} stays open: {proposal.reason}", markup=False)
        if proposal.log:
            console().print(f"the reply is in {proposal.log}", markup=False)
    if not proposal.accepted:
        raise typer.Exit(EXIT_NOT_GREEN)


@app.command(rich_help_panel=LOOP, epilog="git failres decide 3f9a2b --scope-files src/util/dates.py")
def decide(
    decision_id: str = typer.Argument(..., metavar="ID", help="The decision's id (a unique prefix will do)."),
    paths: list[str] = typer.Argument(None, metavar="[PATH...]", help="With --scope-files: the paths to allow."),
    scope_files: bool = typer.Option(False, "--scope-files", help="Answer by allowing the PATHs that follow."),
    answer_json: str = typer.Option(None, "--answer-json", help="Answer with this JSON (any shape is recorded)."),
    accept: bool = typer.Option(False, "--accept-proposal", help="Take the resolver's proposal as your answer."),
    force: bool = typer.Option(False, "--force", help="Replace an earlier answer (it stays in the history)."),
    json_out: bool = typer.Option(False, "--json", help="Print the answered decision as JSON."),
) -> None:
    """Answer a decision. Only an answer shaped {"scopeFiles": ["path", ...]} widens the task's scope."""
    from failres.decisions.answering import accept_proposal, answer_decision, answer_from_arguments, decision_document
    from failres.errors import UsageError

    if accept and (scope_files or paths or answer_json is not None):
        msg = "--accept-proposal takes the resolver's answer; give no other answer with it"
        raise UsageError(msg)
    if paths and not scope_files:
        msg = f"unexpected argument {paths[0]!r}"
        raise UsageError(msg, hint="paths follow --scope-files: decide ID --scope-files PATH...")
    if scope_files and not paths:
        msg = "--scope-files needs at least one path"
        raise UsageError(msg)
    from failres.cli.policy_cmds import current_policy
    from lessons.bounds.capacity import reclaim_full_stores

    repo = open_context()
    policy = current_policy(repo)  # a bad policy is refused before anything is written
    if accept:
        result = accept_proposal(repo.store, repo.config.scope.protected, decision_id, answered_by=_who(repo.store))
    else:
        answer = answer_from_arguments(paths or [], answer_json)
        result = answer_decision(repo.store, repo.config.scope.protected, decision_id, answer,
                                 answered_by=_who(repo.store), force=force)
    reclaim_full_stores(repo.store, policy, names=("journal",))  # the answer is a journal event too
    if json_out:
        emit_json({**decision_document(result.decision), "widens": list(result.widened)})
        return
    short = str(result.decision.get("id", ""))[:8]
    if result.widened:
        console().print(f"decision {short} answered; the scope of {result.decision.get('slug')}/"
                        f"{result.decision.get('task')} now also allows: {', '.join(result.widened)}", markup=False)
    else:
        console().print(f"decision {short} answered; this answer widens nothing "
                        '(only {"scopeFiles": [paths]} does)', markup=False)
