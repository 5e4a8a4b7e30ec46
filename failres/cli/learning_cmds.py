"""`reflect`, `learn`, `proposals` and `rules`: the learning loop, reviewed by a person."""

from __future__ import annotations

from pathlib import Path

import typer

from failres.cli.app import app
from failres.clidoc.model import KNOWLEDGE
from failres.cli.common import camel_case, console, emit_json, open_context
from failres.cli.policy_cmds import current_policy
from failres.inert import inert
from lessons.redaction.redact import redact_value

proposals_app = typer.Typer(help="Rule proposals: review, accept or reject what learning proposes. "
                                 "Alone, it is proposals list.",
                            no_args_is_help=True, epilog="git failres proposals list --status pending")
rules_app = typer.Typer(help="The rules in force, with each learned rule's measured tally.",
                        invoke_without_command=True, epilog="git failres rules --domain behavior")
app.add_typer(proposals_app, name="proposals", rich_help_panel=KNOWLEDGE)
app.add_typer(rules_app, name="rules", rich_help_panel=KNOWLEDGE)


def _warn(text: str) -> None:
    # One line whatever the terminal width: a script may grep for it.
    typer.echo(f"warning: {inert(text)}", err=True)


@app.command(rich_help_panel=KNOWLEDGE, epilog="git failres reflect ~/.claude/projects/my-repo")
def reflect(
    paths: list[Path] = typer.Argument(None, help="Claude Code, Codex or aider transcripts, or directories of them "
                                                  "(default: failres's own dispatches' and learning.transcripts, "
                                                  "else Claude Code's folder for this repository)."),
    edits: bool = typer.Option(True, "--edits/--no-edits", help="Also mine people's edits of landed tasks."),
    json_out: bool = typer.Option(False, "--json", help="Print the reflections recorded, as a JSON array."),
) -> None:
    """Record what people's interventions teach, from sessions not mined before."""
    from failres.knowledge.learning import reflect as run_reflect

    ctx = open_context()
    policy = current_policy(ctx)  # a bad policy is refused before anything is written
    report = run_reflect(ctx.store, ctx.repo, ctx.config, ctx.top, paths or [], edits=edits, policy=policy)
    outcome = report.outcome
    for note in [*report.notes, *outcome.problems, *outcome.unusable]:
        _warn(note)
    recorded = [redact_value(doc) for doc in outcome.recorded]  # exactly as stored
    if json_out:
        emit_json(recorded)
        return
    out = console()
    out.print(f"mined {outcome.sources_mined} new session(s); {len(recorded)} reflection(s) recorded"
              + (f"; {outcome.already_mined} already mined" if outcome.already_mined else "")
              + (f"; {outcome.model_skipped} judged no lesson" if outcome.model_skipped else ""), markup=False)
    for doc in recorded:
        text = " ".join(str(doc["reflexion_text"]).split())
        out.print(f"  {doc['id']}  {doc['trigger']:<8} {doc['origin']:<9} {text[:60]}", markup=False)
    if recorded:
        out.print("next: git failres learn   (only clean reflections can become rules)", markup=False)


@app.command(rich_help_panel=KNOWLEDGE, epilog="git failres learn --domain behavior")
def learn(
    domain: str = typer.Option(None, "--domain", help="Learn this domain only (e.g. behavior, code)."),
    json_out: bool = typer.Option(False, "--json", help="Print what was proposed, as a JSON array."),
) -> None:
    """Propose rules from clean reflections and resolved lessons. Never changes live rules."""
    from failres.knowledge.learning import learn as run_learn

    ctx = open_context()
    outcomes = run_learn(ctx.store, ctx.config, ctx.top, domain, policy=current_policy(ctx))
    for o in outcomes:
        if o.unusable:
            _warn(f"{o.domain}: {o.note}; nothing was proposed")
    if json_out:
        emit_json([{"domain": o.domain, "note": o.note, "unusable": o.unusable, "waiting": o.waiting,
                    "proposal": redact_value(o.proposal.to_document()) if o.proposal else None} for o in outcomes])
        return
    out = console()
    for o in outcomes:
        p = o.proposal
        if p is None:
            out.print(f"{o.domain}: {o.note}", markup=False)
            continue
        status = p.status if not p.gate else f"{p.status}: {p.gate}"
        out.print(f"{o.domain}: proposal {p.id} ({p.mode}, {status}) - {p.evidence}", markup=False)
        if o.waiting:
            out.print(f"  {o.waiting} more candidate rule(s) wait for room in the budget", markup=False)
        if p.status == "pending":
            out.print(f"  review: git failres proposals show {p.id}", markup=False)


@proposals_app.command("list", epilog="git failres proposals list --status pending")
def proposals_list(
    status: str = typer.Option(None, "--status", help="Only pending, accepted, rejected or rejected_by_gate."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most this many, the newest (default: policy "
                                                           "list_limit)."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON array, oldest first."),
) -> None:
    """Proposals, oldest first: the newest ones, up to the policy's list_limit."""
    from failres.knowledge.learning import list_proposals

    ctx = open_context()
    listing = list_proposals(ctx.store, ctx.config, status, limit or current_policy(ctx).list_limit)
    docs = listing.documents
    for problem in listing.problems:
        _warn(f"skipped unreadable proposal {problem}")
    if listing.hidden:
        from failres.cli.tables import note_cut

        note_cut(len(docs), len(docs) + listing.hidden, what="proposals (the newest)")
    if json_out:
        emit_json(docs)
        return
    if not docs:
        console().print("no proposals", markup=False)
        return
    from failres.cli.tables import Column, print_table

    columns = (Column("id"), Column("domain"), Column("status"), Column("mode"), Column("changes", right=True),
               Column("created"), Column("evidence", wraps=True))
    print_table(columns, [(d["id"], d["domain"], d["status"] + (" (stale)" if d["stale"] else ""), d["mode"],
                           len(d["changes"]), str(d["created_at"])[:19].replace("T", " "), d["evidence"])
                          for d in docs])


@proposals_app.command("show", epilog="git failres proposals show 7c1e0a")
def proposals_show(
    proposal_id: str = typer.Argument(..., metavar="ID", help="The proposal id (or a unique prefix)."),
    json_out: bool = typer.Option(False, "--json", help="Print the proposal as JSON."),
) -> None:
    """One proposal: its evidence, the change, and the rules block it would put in prompts."""
    from failres.knowledge.learning import show_proposal

    ctx = open_context()
    doc = show_proposal(ctx.store, ctx.config, proposal_id)
    if json_out:
        emit_json(doc)
        return
    out = console()
    out.print(f"proposal {doc['id']}  {doc['domain']}  {doc['status']}  ({doc['mode']})", markup=False)
    for key in ("gate", "reason"):
        if doc.get(key):
            out.print(f"{key}: {doc[key]}", markup=False)
    if doc["stale"]:
        out.print("stale: the live learned rules changed since; accepting it is refused", markup=False)
    out.print(f"evidence: {doc['evidence']}", markup=False)
    for ev in doc.get("evidence_lines", []):
        where = f"{ev['source_path'] or ev['session_id']}" + (f":{ev['line']}" if ev["line"] else "")
        words = " ".join(str(ev["intervention"]).split())
        out.print(f"  {where}  session {ev['session_id']}  {ev['trigger']} {ev['origin']}: {words[:100]}", markup=False)
    out.print("changes:", markup=False)
    for line in doc["changes"] or ["(none)"]:
        out.print(f"  {line}", markup=False)
    out.print("\nthe rules block seats would read once accepted:\n", markup=False)
    out.print(doc["preview"] or "(empty: no rules would ride in prompts)", markup=False)


@proposals_app.command("accept", epilog="git failres proposals accept 7c1e0a")
def proposals_accept(
    proposal_id: str = typer.Argument(..., metavar="ID", help="The proposal id (or a unique prefix)."),
    only: list[str] = typer.Option(None, "--only", metavar="RULE",
                                   help="Take only the change to this rule (an id `proposals show` lists); "
                                        "repeat for more. The other changes are declined."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Make a pending proposal's rules the live learned rules (one store commit)."""
    from failres.knowledge.learning import accept

    ctx = open_context()
    proposal, commit, exported = accept(ctx.store, ctx.config, proposal_id, only or (), policy=current_policy(ctx),
                                        top=ctx.top)
    if json_out:
        emit_json({"id": proposal.id, "domain": proposal.domain, "status": proposal.status, "commit": commit,
                   "accepted_rules": list(proposal.accepted_rules) if proposal.accepted_rules is not None else None,
                   "declined_rules": list(proposal.declined_rules),
                   "export": exported.document() if exported is not None else None})
        return
    took = f" (only {', '.join(proposal.accepted_rules)})" if proposal.accepted_rules is not None else ""
    console().print(f"accepted {proposal.id}{took}: rules/{proposal.domain}.learned.toml updated in {commit[:12]}\n"
                    f"undo: git failres undo {commit[:12]}", markup=False)
    if exported is not None:
        console().print(export_line(exported), markup=False)


@proposals_app.command("reject", epilog='git failres proposals reject 7c1e0a --reason "too broad"')
def proposals_reject(
    proposal_id: str = typer.Argument(..., metavar="ID", help="The proposal id (or a unique prefix)."),
    reason: str = typer.Option(..., "--reason", help="Why: recorded with the proposal."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Reject a pending proposal, recording why. Live rules are untouched."""
    from failres.knowledge.learning import reject

    ctx = open_context()
    proposal, commit = reject(ctx.store, proposal_id, reason, policy=current_policy(ctx))
    if json_out:
        emit_json({"id": proposal.id, "domain": proposal.domain, "status": proposal.status,
                   "reason": proposal.reason, "commit": commit})
        return
    console().print(f"rejected {proposal.id} in {commit[:12]}", markup=False)


@rules_app.callback()
def rules(
    ctx_typer: typer.Context,
    domain: str = typer.Option(None, "--domain", help="Only this domain."),
    json_out: bool = typer.Option(False, "--json", help="Print the block, its hash and each rule as JSON."),
) -> None:
    """The rules block prompts carry now, and each learned rule's tally."""
    if ctx_typer.invoked_subcommand is not None:
        return
    from failres.knowledge.learning import rules_view

    ctx = open_context()
    view = rules_view(ctx.store, ctx.config, domain)
    for problem in view["problems"]:
        _warn(f"unreadable rules file skipped: {problem}")
    for over in view["over_budget"]:
        dropped = ", ".join(r.get("id") or repr(r["text"][:40]) for r in over["dropped"])
        _warn(f"{over['domain']}: {over['active']} active learned rules ({over['chars']} characters), more than the "
              f"budget of {over['max_rules']} rules and {over['max_chars']} characters; prompts leave out "
              f"{len(over['dropped'])}: {dropped}")
    if json_out:
        # The view's own fields are camelCase (docs/json.md); the rule records inside keep theirs.
        emit_json(camel_case(view, frozenset({"domains", "dropped"})))
        return
    out = console()
    if not view["block"]:
        out.print("no rules ride in prompts yet", markup=False)
    else:
        out.print(view["block"], markup=False)
        out.print(f"(block hash {view['hash']})", markup=False)
    learned = [(d["domain"], r) for d in view["domains"] for r in d["learned"]]
    if not learned:
        return
    from failres.cli.tables import Column, print_table

    rows = []
    for name, rule in learned:
        tally = rule["tally"] or {}
        state = "active" if rule["in_prompts"] else "over budget" if rule["active"] else (
            "retired" if rule.get("retired_at") else "disabled")
        rows.append((name, rule.get("id", ""), state, rule.get("based_on_count") or "", tally.get("observations", 0),
                     tally.get("committed", 0), tally.get("quarantined", 0), rule["text"]))
    columns = (Column("domain"), Column("id"), Column("state"), Column("evidence", right=True),
               Column("seen", right=True), Column("committed", right=True), Column("quarantined", right=True),
               Column("text", wraps=True))
    print_table(columns, rows, title="learned rules")


@rules_app.command("export", epilog="git failres rules export --to CLAUDE.md")
def rules_export(
    to: Path = typer.Option(None, "--to", metavar="FILE",
                            help="Write into this file of the repository (default: [learning] export, else the "
                                 "file the implementer's agent reads: CLAUDE.md, AGENTS.md or CONVENTIONS.md; "
                                 "else AGENTS.md)."),
    json_out: bool = typer.Option(False, "--json", help="Print what was written, as JSON."),
) -> None:
    """Write the rules in force into the managed block of your agent's instructions file.

    Only the lines between failres's markers change: review them with git diff and commit them.
    """
    from failres.knowledge.rules_export import export_rules

    ctx = open_context()
    result = export_rules(ctx.store, ctx.config, ctx.top, to)
    if json_out:
        emit_json(result.document())
        return
    console().print(export_line(result), markup=False)


def export_line(result) -> str:
    """What an export did, in one line a person acts on."""
    plan = result.plan
    if not result.changed:
        return (f"{plan.shown}: no rules to export; nothing written" if plan.before is None else
                f"{plan.shown}: already holds the {plan.rules} rule(s) in force; nothing written")
    return (f"{plan.shown}: wrote {plan.rules} rule(s) into failres's block; "
            f"review with git diff {plan.shown}, then commit")


@rules_app.command("retire", epilog='git failres rules retire r-3f9a --reason "no longer true"')
def rules_retire(
    rule_id: str = typer.Argument(..., metavar="RULE_ID", help="The learned rule's id (see `git failres rules`)."),
    reason: str = typer.Option(..., "--reason", help="Why it should stop riding in prompts."),
    json_out: bool = typer.Option(False, "--json", help="Print the proposal as JSON."),
) -> None:
    """Propose retiring a learned rule: kept as evidence, never shown again once accepted."""
    from failres.knowledge.learning import retire

    ctx = open_context()
    proposal = retire(ctx.store, ctx.config, rule_id, reason, policy=current_policy(ctx))
    if json_out:
        emit_json(redact_value(proposal.to_document()))
        return
    console().print(f"proposal {proposal.id} ({proposal.status}); accept it with: "
                    f"git failres proposals accept {proposal.id}", markup=False)
