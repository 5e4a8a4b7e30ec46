"""`policy show|validate`: the knowledge policy in force, where each value came from, the rung table."""

from __future__ import annotations

import os

import typer

from failres.cli.app import app
from failres.clidoc.model import KNOWLEDGE
from failres.cli.common import Context, console, emit_json, open_context
from failres.config.loading import effective_policy_of
from failres.engine.taxonomy import UserRule, render_rung_table, rung_table
from lessons.bounds.policy import EffectivePolicy, Policy

policy_app = typer.Typer(no_args_is_help=True, help="The knowledge policy in force. Alone, it is policy show.",
                         epilog="git failres policy show")
app.add_typer(policy_app, name="policy", rich_help_panel=KNOWLEDGE)


def policy_in_force(ctx: Context) -> EffectivePolicy:
    """The configuration's `[policy]`, overlaid by `FAILRES_POLICY_*` (exit 2 naming a bad one)."""
    return effective_policy_of(ctx.config, os.environ)


def current_policy(ctx: Context) -> Policy:
    return policy_in_force(ctx).policy


def policy_document(ctx: Context) -> dict[str, object]:
    """The effective policy with sources, and the failure-class rung table (lessons never change it)."""
    effective = policy_in_force(ctx)
    rules = [UserRule(r.fail_class, r.match, r.on, r.action) for r in ctx.config.taxonomy.rules]
    return {"config": ctx.config.source, "policy": effective.rows(), "rungs": render_rung_table(rung_table(rules))}


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@policy_app.command("show", epilog="git failres policy show --json")
def show(json_out: bool = typer.Option(False, "--json", help="Print the policy and the rung table as JSON.")) -> None:
    """The effective policy, where each value came from (default, file, env), and the rung table."""
    document = policy_document(open_context())
    if json_out:
        emit_json(document)
        return
    from failres.cli.tables import Column, print_table

    print_table((Column("key"), Column("value"), Column("source"), Column("meaning", wraps=True)),
                [(row["key"], _shown(row["value"]),
                  row["source"] if row["source"] == "default" else f"{row['source']} ({row['from']})", row["meaning"])
                 for row in document["policy"]],  # type: ignore[union-attr]
                title="knowledge policy")
    console().print("")
    print_table((Column("class"), Column("rung", right=True), Column("action"), Column("source"),
                 Column("description", wraps=True)),
                [(row["failClass"], row["rung"], row["action"], row["source"], row["description"])
                 for row in document["rungs"]],  # type: ignore[union-attr]
                title="failure classes and their rungs")


@policy_app.command("validate", epilog="FAILRES_POLICY_MAX_LESSONS=100 git failres policy validate")
def validate(json_out: bool = typer.Option(False, "--json", help="Print the verdict as JSON.")) -> None:
    """Check the configuration and FAILRES_POLICY_* overrides; exit 2 naming the first bad key."""
    ctx = open_context()
    effective = policy_in_force(ctx)
    overrides = sorted(s.where for s in effective.sources.values() if s.kind == "env")
    if json_out:
        emit_json({"valid": True, "config": ctx.config.source, "overrides": overrides})
        return
    extra = f" with {', '.join(overrides)}" if overrides else ""
    console().print(f"policy valid: {ctx.config.source}{extra}", markup=False)
