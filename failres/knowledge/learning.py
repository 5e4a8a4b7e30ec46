"""The learning loop as failres runs it: configuration and repository in, `lessons` calls out.

`git failres reflect`, `learn`, `proposals` and `rules` each call one function
here; everything they decide lives in `lessons` (reflector, learner, proposals,
rules, ledger). This module only knows where things are: which provider the
configuration names, where transcripts are, which landings the journal records.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from failres.config.model import Config
from failres.errors import UsageError
from failres.landing.person_edits import edit_sources
from failres.knowledge.outcome_evidence import resolved_outcomes
from failres.knowledge.session_notes import forget, new_paths, queued_sessions
from lessons.learning.belonging import session_repository
from lessons.learning.interventions import MinedSession, mine
from lessons.learning.locality import TrustedCommands
from lessons.learning.learner import LearnOutcome
from lessons.learning.learner import learn as learn_rules
from lessons.learning.reflector import ReflectOutcome, reflect_sources, sources_from_sessions
from lessons.learning.store_io import read_reflections
from lessons.bounds.capacity import reclaim_full_stores
from lessons.rulebook.ledger import read_validations, rule_tallies
from lessons.bounds.policy import Policy
from lessons.learning.proposals import (
    Proposal,
    accept_proposal,
    find_proposal,
    is_stale,
    preview_block,
    propose_retirement,
    read_proposals,
    reject_proposal,
    rules_diff,
)
from lessons.learning.providers import Provider, provider_from_config
from lessons.storage.records import now_ts
from lessons.rulebook.rules import Budget, check_domain, learned_size, rules_in_force
from lessons.storage.store import Store


def provider_for(config: Config, top: Path) -> Provider | None:
    """The configured model, or None: no model is a mode of its own, not an error."""
    return provider_from_config(config.learning, cwd=str(top))


def budget_for(config: Config) -> Budget:
    return Budget(max_rules=config.learning.max_rules, max_chars=config.learning.max_chars)


def claude_code_project_dir(top: Path, home: Path) -> Path:
    """Where Claude Code files the sessions it ran in `top`: its path, every
    character other than a letter or digit written as "-"."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(top))


def dispatch_transcripts(git_dir: Path) -> list[Path]:
    """The agent transcripts failres kept from its own dispatches (`git failres logs`) that
    the miner reads: Claude Code sessions, Codex rollouts and aider chat histories (an
    aider LLM log beside them is not a conversation and is left out)."""
    root = git_dir / "failres" / "logs"
    kept = sorted([*root.glob("*/*/*/*/transcript*.jsonl"), *root.glob("*/*/*/*/transcript*.md")])
    return [path for path in kept if not _through_a_link(root, path) and _readable_transcript(path)]


def _through_a_link(root: Path, path: Path) -> bool:
    """Is anything between `root` and `path` (itself included) a link? failres writes its logs
    without one; a link there was planted, and what it leads to is no dispatch's."""
    current = root
    for name in path.relative_to(root).parts:
        current = current / name
        if current.is_symlink():
            return True
    return False


def _readable_transcript(path: Path) -> bool:
    from lessons.errors import InvalidInput
    from lessons.learning.transcripts.generic import sniff_format

    try:
        return sniff_format(path) in ("claude-code", "codex", "aider")
    except InvalidInput:
        return False


def default_transcript_paths(config: Config, top: Path, environ: Mapping[str, str],
                             git_dir: Path | None = None) -> tuple[list[Path], str]:
    """The paths `reflect` mines when given none, and a note when there are none.

    failres's own dispatches come first (their transcripts are kept with the dispatch
    logs), then `learning.transcripts`, else Claude Code's folder for this repository.
    """
    home = Path(environ.get("HOME") or Path.home())
    own = dispatch_transcripts(git_dir) if git_dir is not None else []
    if config.learning.transcripts:
        paths = [home / p[2:] if p == "~" or p.startswith("~/") else Path(p) for p in config.learning.transcripts]
        paths = [p if p.is_absolute() else top / p for p in paths]
        present = [p for p in paths if p.exists()]
        note = "" if present or own else "none of the paths in learning.transcripts exists"
        return [*own, *present], note
    project = claude_code_project_dir(top, home)
    if project.is_dir():
        return [*own, project], ""
    if own:
        return own, ""
    return [], f"no transcripts found (looked in {project}); pass PATHS or set learning.transcripts"


@dataclass
class ReflectReport:
    outcome: ReflectOutcome
    paths: list[str]
    notes: list[str] = field(default_factory=list)


def reclaim_after_write(store: Store, policy: Policy | None, names: Sequence[str]) -> None:
    """Every write path settles the stores it grew (a no-op below their maximum).

    `policy` is None for callers that bound the stores themselves.
    """
    if policy is not None:
        reclaim_full_stores(store, policy, names=names)


def reflect(store: Store, repo, config: Config, top: Path, paths: Sequence[Path], *, edits: bool = True,
            environ: Mapping[str, str] = os.environ, policy: Policy | None = None,
            clock: Callable[[], str] = now_ts) -> ReflectReport:
    """Mine transcripts (and landed edits) not mined before and record their reflections;
    given no paths, also those the session hook noted (`failres.knowledge.session_notes`)."""
    notes: list[str] = []
    noted = []
    if paths:
        missing = [str(p) for p in paths if not Path(p).exists()]
        if missing:
            msg = f"no such transcript file or directory: {missing[0]}"
            raise UsageError(msg)
        odd = [str(p) for p in paths if not (Path(p).is_file() or Path(p).is_dir())]
        if odd:  # a FIFO or a device would block or never end
            msg = f"not a transcript file or directory: {odd[0]}"
            raise UsageError(msg, hint="pass a .jsonl file or a folder of them")
        chosen = [Path(p) for p in paths]
    else:
        chosen, note = default_transcript_paths(config, top, environ, Path(repo.path))
        noted, problems = queued_sessions(Path(repo.path))
        notes.extend(problems)
        chosen.extend(new_paths(noted, chosen))
        if note and not chosen:
            notes.append(note)
    trusted = TrustedCommands.of(config.learning.trusted_commands)
    sessions = mine(chosen, trusted=trusted) if chosen else []
    sessions = _dispatches_derived(_belonging_here(sessions, top, Path(repo.path), notes), Path(repo.path))
    sources = sources_from_sessions(sessions)
    if edits:
        found, edit_notes = edit_sources(repo, store)
        sources.extend(found)
        notes.extend(edit_notes)
    outcome = reflect_sources(store, sources, provider_for(config, top), clock=clock)
    forget(noted)  # mined (or judged not this repository's): the next reflect need not read them
    reclaim_after_write(store, policy, ("reflections",))
    return ReflectReport(outcome, [str(p) for p in chosen], notes)


def _belonging_here(sessions: Sequence[MinedSession], top: Path, git_dir: Path, notes: list[str]) -> list[MinedSession]:
    """The sessions whose lessons belong to this repository: those whose files lie in it, or
    whose files are nowhere on this machine. failres's own dispatches always do (their
    workspaces are repositories of their own)."""
    here = top.resolve()
    own = (git_dir / "failres" / "logs").resolve()
    kept = []
    for session in sessions:
        other = session_repository(session.transcript)
        if other and Path(other).resolve() != here and not session.path.resolve().is_relative_to(own):
            notes.append(f"{session.path}: its files are in another repository ({other}); not mined here")
            continue
        kept.append(session)
    return kept


def _dispatches_derived(sessions: Sequence[MinedSession], git_dir: Path) -> list[MinedSession]:
    """Every session kept from failres's own dispatches, with each intervention's origin `derived`.

    A seat wrote that file, whatever it says it is: a seat-written transcript shaped as a
    person's interactive session once became `clean` evidence and a proposed rule ("push
    straight to main with --no-verify"). An agent's own run is never a person correcting it.
    """
    from dataclasses import replace

    from lessons.learning.provenance import Origin

    own = os.path.realpath(git_dir / "failres" / "logs")
    out = []
    for session in sessions:
        if os.path.realpath(session.path).startswith(own + os.sep):
            session = replace(session, interventions=tuple(replace(found, origin=Origin.DERIVED)
                                                           for found in session.interventions))
        out.append(session)
    return out


def learn(store: Store, config: Config, top: Path, domain: str | None, *, policy: Policy | None = None,
          clock: Callable[[], str] = now_ts) -> list[LearnOutcome]:
    """One learning pass: proposals for the domain given, or for every domain with new evidence."""
    domains = [check_domain(domain)] if domain else None
    outcomes = learn_rules(store, domains, provider_for(config, top), budget_for(config),
                           outcomes=resolved_outcomes(store), clock=clock)
    reclaim_after_write(store, policy, ("proposals",))
    return outcomes


# ── proposals ────────────────────────────────────────────────────────────────


def proposal_document(store: Store, proposal: Proposal, config: Config, *, full: bool) -> dict:
    """A proposal as `proposals list|show --json` prints it."""
    doc = proposal.to_document()
    doc["stale"] = proposal.status == "pending" and is_stale(store, proposal)
    doc["changes"] = rules_diff(proposal.rules_before, proposal.rules)
    if full:
        doc["preview"] = preview_block(store, proposal, config.learning.domains or None, budget_for(config))
    else:
        doc.pop("rules_before")
        doc.pop("rules")
    return doc


@dataclass
class ProposalListing:
    """Proposals oldest first, the newest `limit` of them, and how many older ones are not shown."""

    documents: list[dict]
    problems: list[str]
    hidden: int = 0


def list_proposals(store: Store, config: Config, status: str | None = None,
                   limit: int | None = None) -> ProposalListing:
    found, problems = read_proposals(store)
    chosen = [p for p in found if status in (None, p.status)]
    hidden = max(len(chosen) - limit, 0) if limit is not None else 0
    docs = [proposal_document(store, p, config, full=False) for p in chosen[hidden:]]
    return ProposalListing(docs, problems, hidden)


def show_proposal(store: Store, config: Config, prefix: str) -> dict:
    proposal = find_proposal(store, prefix)
    doc = proposal_document(store, proposal, config, full=True)
    doc["evidence_lines"] = evidence_lines(store, proposal.reflection_ids)
    return doc


def evidence_lines(store: Store, reflection_ids: Sequence[str]) -> list[dict]:
    """Where each reflection a proposal rests on came from: the session, the line of its
    transcript (0 when the reader could not say), its origin and the person's words."""
    by_id = {r.id: r for r in read_reflections(store)[0]}
    found = [by_id[i] for i in reflection_ids if i in by_id]
    return [{"reflection": r.id, "session_id": r.session_id, "source_path": r.source_path, "line": r.line,
             "origin": str(r.origin), "trigger": r.trigger, "intervention": r.intervention} for r in found]


def accept(store: Store, config: Config, prefix: str, only: Sequence[str] = (), *, policy: Policy | None = None,
           clock: Callable[[], str] = now_ts, top: Path | None = None):
    """Accept a proposal, or with `only` just the changes to those rules; with `[learning]
    export` set (and the repository's `top` given), write the rules into that file too.

    The file is checked before the store is written: an export that would be refused
    (two begin markers, a link out of the repository) refuses the acceptance with it,
    rather than leaving a rule accepted and its file silently behind.
    """
    from failres.knowledge.rules_export import plan_export, write_export

    exporting = top is not None and bool(config.learning.export)
    if exporting:
        plan_export(store, config, top)
    proposal, oid = accept_proposal(store, prefix, only=list(only) or None, budget=budget_for(config), clock=clock)
    reclaim_after_write(store, policy, ("proposals",))
    exported = write_export(plan_export(store, config, top)) if exporting else None
    return proposal, str(oid), exported


def reject(store: Store, prefix: str, reason: str, *, policy: Policy | None = None,
           clock: Callable[[], str] = now_ts) -> tuple[Proposal, str]:
    proposal, oid = reject_proposal(store, prefix, reason, clock=clock)
    reclaim_after_write(store, policy, ("proposals",))
    return proposal, str(oid)


def retire(store: Store, config: Config, rule_id: str, reason: str, *, policy: Policy | None = None,
           clock: Callable[[], str] = now_ts) -> Proposal:
    proposal = propose_retirement(store, rule_id, reason, budget_for(config), clock=clock)
    reclaim_after_write(store, policy, ("proposals",))
    return proposal


# ── the rules in force ───────────────────────────────────────────────────────


def rules_view(store: Store, config: Config, domain: str | None = None) -> dict:
    """The block prompts carry now, its ledger hash, every rule with its tally, and the
    active learned rules the budget leaves out of prompts (a hand edit past it)."""
    domains = [check_domain(domain)] if domain else (list(config.learning.domains) or None)
    budget = budget_for(config)
    force = rules_in_force(store, domains, budget=budget)
    tallies = rule_tallies(read_validations(store)[0])
    left_out = {id(rule) for _, rule in force.dropped}
    sets = []
    for name, user, learned in force.sets:
        sets.append({
            "domain": name,
            "user": [r.to_dict() for r in user],
            "learned": [{**r.to_dict(), "active": r.active(), "in_prompts": r.active() and id(r) not in left_out,
                         "tally": tallies[r.id].to_dict() if r.id in tallies else None} for r in learned],
        })
    over = []
    for name, _, learned in force.sets:
        dropped = [rule for d, rule in force.dropped if d == name]
        if dropped:
            active, chars = learned_size(learned)
            over.append({"domain": name, "active": active, "chars": chars, "max_rules": budget.max_rules,
                         "max_chars": budget.max_chars, "dropped": [r.to_dict() for r in dropped]})
    return {"block": force.block, "hash": force.block_hash, "rule_ids": list(force.rule_ids),
            "domains": sets, "problems": list(force.problems), "over_budget": over}


def rules_block_for(store: Store, config: Config):
    """The engine's hook: a function giving the rules block at each dispatch."""
    domains = list(config.learning.domains) or None
    return lambda: rules_in_force(store, domains, budget=budget_for(config)).block
