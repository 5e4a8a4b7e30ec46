"""`facts set|list|timeline`: project facts addressed by category and key, with their history."""

from __future__ import annotations

import typer

from failres.cli.app import app
from failres.clidoc.model import KNOWLEDGE
from failres.cli.common import console, emit_json, open_context
from failres.cli.policy_cmds import current_policy
from lessons.bounds.facts import DEFAULT_CONFIDENCE, DEFAULT_SOURCE, fact_timeline, list_facts, set_fact

facts_app = typer.Typer(no_args_is_help=True, help="Project facts that ride in prompts. Alone, it is facts list.",
                        epilog="git failres facts list --category judge")
app.add_typer(facts_app, name="facts", rich_help_panel=KNOWLEDGE)


@facts_app.command("set", epilog='git failres facts set judge command "bash lib/gates.sh gate0"')
def set_command(
    category: str = typer.Argument(..., help="The fact's category, e.g. judge."),
    key: str = typer.Argument(..., help="The fact's key within its category, e.g. command."),
    value: str = typer.Argument(..., help="The value."),
    confidence: float = typer.Option(DEFAULT_CONFIDENCE, "--confidence", help="0 to 1."),
    source: str = typer.Option(DEFAULT_SOURCE, "--source", help="Who or what says so."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Set a fact; the old value stays in its timeline. A contradiction is printed with its severity."""
    ctx = open_context()
    result = set_fact(ctx.store, category, key, value, policy=current_policy(ctx), confidence=confidence,
                      source=source)
    write = result.write
    contradiction = write.contradiction.document() if write.contradiction else None
    archived = sum(len(plan.evicted) for plan in result.reclaim.plans) if result.reclaim else 0
    if json_out:
        emit_json({"action": write.action, "fact": dict(write.fact), "contradiction": contradiction,
                   "commit": result.commit, "archived": archived})
        return
    out = console()
    address = f"{write.fact.get('category')}/{write.fact.get('key')}"
    if write.action == "confirmed":
        out.print(f"confirmed {address} ({write.fact.get('confirmation_count')} confirmations)", markup=False)
    else:
        out.print(f"{write.action} {address}", markup=False)
    if contradiction:
        out.print(f"contradiction ({contradiction['severity']}): it was \"{contradiction['previous_value']}\" "
                  f"(confidence {contradiction['previous_confidence']:g}, "
                  f"confirmed {contradiction['previous_confirmations']} time(s))", markup=False)
    if archived:
        out.print(f"the facts store was full: {archived} fact version(s) moved to the archive "
                  "(git failres restore --store facts)", markup=False)


@facts_app.command("list", epilog="git failres facts list --category judge")
def list_command(
    category: str = typer.Option(None, "--category", help="Only this category."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most this many (default: policy list_limit)."),
    json_out: bool = typer.Option(False, "--json", help="Print the facts as a JSON array."),
) -> None:
    """Current facts by category and key, with their confidence decayed to today."""
    import sys

    from failres.cli.tables import note_cut

    ctx = open_context()
    every = list_facts(ctx.store, current_policy(ctx), category=category, limit=sys.maxsize)
    cap = limit or current_policy(ctx).list_limit
    rows = [view.document() for view in every[:cap]]
    note_cut(len(rows), len(every), what="facts")
    if json_out:
        emit_json(rows)
        return
    if not rows:
        console().print("no facts recorded" + (f" in {category}" if category else ""), markup=False)
        return
    from failres.cli.tables import Column, print_table

    columns = (Column("fact"), Column("confidence"), Column("confirmed", right=True), Column("source"),
               Column("since"), Column("value", wraps=True))
    print_table(columns, [(f"{row['category']}/{row['key']}",
                           f"{row['effective_confidence']:.2f}" + (" (stale)" if row["candidate"] else ""),
                           row["confirmation_count"], row["source"], str(row["valid_from"])[:10], row["value"])
                          for row in rows])


@facts_app.command("timeline", epilog="git failres facts timeline judge command")
def timeline_command(
    category: str = typer.Argument(..., help="The fact's category."),
    key: str = typer.Argument(..., help="The fact's key."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most this many, the newest (default: policy "
                                                           "timeline_limit)."),
    json_out: bool = typer.Option(False, "--json", help="Print the versions as a JSON array."),
) -> None:
    """Every version of one fact, oldest first: the newest ones, up to the policy's timeline_limit."""
    import sys

    from failres.cli.tables import note_cut

    ctx = open_context()
    every = fact_timeline(ctx.store, category, key, current_policy(ctx), limit=sys.maxsize)
    versions = every[-(limit or current_policy(ctx).timeline_limit):] if every else []
    note_cut(len(versions), len(every), what="versions (the newest)")
    if not versions:
        from failres.errors import UsageError

        msg = f"no fact {category}/{key} is recorded"
        raise UsageError(msg, hint="git failres facts list shows the facts there are")
    if json_out:
        emit_json(versions)
        return
    out = console()
    for version in versions:
        until = version.get("valid_until") or "now"
        marks = [f"contradiction: {version['contradiction']['severity']}"] if version.get("contradiction") else []
        if version.get("archived"):
            marks.append("archived")
        note = f"  ({'; '.join(marks)})" if marks else ""
        out.print(f"{str(version.get('valid_from'))[:19]} .. {str(until)[:19]}  {version.get('value')}{note}",
                  markup=False)
