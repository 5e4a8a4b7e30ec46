"""One seat dispatch: put the workspace back, run the seat, check for tamper, read the scope.

The order is the guarantee:

1. the workspace is put back to the task's tree, and the seat gets a fresh `.git`;
2. the seat runs under its supervisor; when `run_seat` returns, no process of it is left;
3. the tamper check compares the person's repository with what it was, and undoes
   any change *before* failres runs git again (a planted config or hook would
   otherwise run in failres's place);
4. only then is the workspace read: every changed path, from the files themselves,
   through failres's private index.

What the dispatch *means* (violation, constrained retry, a decision) is decided by
the pure scope and taxonomy functions; this module only gathers the facts.
"""

from __future__ import annotations

import logging
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

from failres.engine.quarantine import Failure
from failres.gitops.scope import ignore_pattern_matches, match_scope, matches_any
from failres.engine.run_context import RunContext
from failres.engine.seats import SeatRun, run_seat
from failres.containment.tamper import Guard
from failres.engine.taxonomy import FIXER_SCOPE_VIOLATION, SEAT_DENIED, SEAT_TAMPER, ScopeRequest, some_paths
from failres import beneath
from failres.gitops.workspace import Checked
from failres.gitops.workspace_files import fresh_dir_beside
from lessons.failpoints import failpoint

log = logging.getLogger("failres.dispatch")

# A snapshot keeps the failing state for a person; files past this size are left out.
SNAPSHOT_MAX_FILE_BYTES = 1024 * 1024


@dataclass
class Dispatched:
    """What one dispatch did, as the scope guard and the classifier see it."""

    run: SeatRun
    checked: Checked
    changed: tuple[str, ...]  # changed paths minus agent and tool artifacts
    rejected: tuple[str, ...]  # changed paths the task may not keep
    requests: tuple[ScopeRequest, ...]
    tamper: Failure | None = None
    denied: Failure | None = None
    capture: object = field(default=None, repr=False)  # () -> tree of the state the seat left

    def snapshot(self) -> str | None:
        """The tree of what the seat left, for the quarantine's snapshot; None when it cannot be taken.

        A snapshot helps a person look; failing to take one must never cost the quarantine.
        """
        if self.capture is None:
            return None
        try:
            return self.capture()
        except Exception:  # noqa: BLE001 - logged; the quarantine goes on without it
            log.exception("failres: the snapshot of a failing dispatch could not be taken")
            return None


def dispatch_seat(run: RunContext, seat: str, mode: str, attempt: int, *, gate_output: str,
                  rejected: tuple[str, ...]) -> Dispatched | Failure:
    """Run `seat` once in the task's workspace and gather what it did."""
    workspace = run.workspace
    binding = run.seat_binding(seat)
    constrained = bool(rejected)
    log = run.logs.next()
    root = run.dispatch_root
    try:
        dispatch_dir = fresh_dir_beside(root.parent, f"{root.name}/{run.logs.count}")
        prompt = run.render(mode, attempt, gate_output=gate_output, rejected=rejected)
        beneath.write_file(root.parent, f"{root.name}/{run.logs.count}/prompt.md", prompt.encode("utf-8"))
    except beneath.Planted as error:
        what = f"failres's dispatch directory beside the workspace was replaced: {error}: not followed"
        run.journal("seat-tamper", what=[what])
        return Failure(SEAT_TAMPER, what)
    prompt_file = dispatch_dir / "prompt.md"
    log.prompt(prompt)
    gate = run.config.gates.get(run.gate_name)
    problem = run.put_back(gate.keep if gate else ())
    if problem is not None:
        return problem
    run.step("seat", seat=seat, attempt=attempt)
    run.journal("seat-dispatched", seat=seat, binding=binding, mode=mode, attempt=attempt, constrained=constrained,
                log=f"{log.directory.parent.name}/{log.directory.name}")
    workspace.handed_over()
    guard = Guard(run.engine.top, run.engine.git_dir, store_ref=run.engine.store.ref, own=run.engine.own_moves)
    before = guard.capture()
    marker = os.urandom(16).hex()  # as random as uuid4's hex, without importing uuid (and platform) for it
    if run.lock is not None:
        # The marker is on record before the seat starts: if failres is killed at any
        # moment after, the next `run` or `status` finds every process that carries it.
        run.lock.record_seat(None, marker)

    def started(pid: int) -> None:
        if run.lock is not None:
            run.lock.record_seat(pid, marker)

    failpoint("dispatch")
    found = run_seat(config=run.config, seat=seat, binding_name=binding, cwd=workspace.path, prompt=prompt,
                     values=run.values(mode, attempt, prompt_file, dispatch_dir), marker=marker,
                     cancelled=run.cancelled, on_start=started, live=log.open_live(), world=run.world,
                     kept=gate.keep if gate else ())
    # Before anything else runs git: undo what the seat did outside its workspace, and
    # make sure the workspace is still the directory failres made before reading it.
    tamper = guard.undo(before, slug=run.slug, task=run.task.id)
    failpoint("dispatch-done")
    if run.lock is not None:
        run.lock.keep_held()  # a lock file swapped by the seat would let a second run in
        tamper.what += run.lock.take_problems()
        run.lock.record_seat(None)
    swapped = workspace.replaced()
    result = found.result
    # A seat ended by a Ctrl-C or a cancel did not run out of time, nor crash: the record says
    # which stop it was (a Ctrl-C reaches the seat's group too, and may end it before failres does).
    stopped = run.stop_reason()
    timed_out = result.timed_out and stopped is None
    log.seat(result.text, {"seat": seat, "binding": binding, "mode": mode, "attempt": attempt,
                           "constrained": constrained, "exitCode": result.exit_code, "timedOut": timed_out,
                           "stopped": stopped,
                           "durationMs": int(result.duration * 1000), "outputBytes": result.total_bytes,
                           "argv": list(result.argv)}, raw=result.raw_text)
    transcripts = log.keep_transcripts(found.transcripts, found.transcript_root)
    # A log name the seat planted (a link to the person's config) was refused: that is tamper too.
    tamper.what += log.take_problems()
    run.journal("seat-finished", seat=seat, binding=binding, exitCode=result.exit_code, timedOut=timed_out,
                **({"stopped": stopped} if stopped else {}), durationMs=int(result.duration * 1000), outputBytes=result.total_bytes,
                transcripts=[p.name for p in transcripts])
    what = [*(tamper.what if tamper else ()), *([f"{swapped}: not followed"] if swapped else ())]
    if what:
        run.journal("seat-tamper", what=what)
    if swapped:
        return Failure(SEAT_TAMPER, f"{seat} changed things outside its workspace: " + "; ".join(what),
                       seat=seat)
    failpoint("scope-check")
    checked = workspace.check()
    # Agent and tool leftovers, what the setup made (`keep`) and the included files are
    # never the seat's change: they are not committed and never a violation.
    unowned = (*run.config.scope.artifacts, *run.not_the_seats())
    odd = odd_failure(run, seat, checked, run.not_the_seats())
    if odd is not None:
        return odd
    changed = tuple(p for p in checked.paths if not any(ignore_pattern_matches(a, p) for a in unowned))
    refused = _refused(run, changed, checked)

    def capture() -> str:
        # The names on disk, not as shown: a name that is not UTF-8 is then left out of
        # the snapshot (it cannot be recorded) instead of failing the whole snapshot.
        on_disk = [checked.raw.get(path, path) for path in changed]
        return workspace.capture(on_disk, max_bytes=SNAPSHOT_MAX_FILE_BYTES, include=_snapshot_may_hold)

    dispatched = Dispatched(found, checked, changed, refused, found.requests, capture=capture)
    if tamper:
        dispatched.tamper = Failure(SEAT_TAMPER, f"{seat} changed things outside its workspace: "
                                    + "; ".join(tamper.what), snapshot=capture(), seat=seat)
    denied = _denied(found, changed)
    if denied is not None:
        dispatched.denied = Failure(SEAT_DENIED, f"{seat}'s agent was refused the calls it needed and changed "
                                    f"nothing: {denied}")
    return dispatched


def odd_failure(run: RunContext, seat: str, checked: Checked, keep: Sequence[str]) -> Failure | None:
    """A quarantine for what git cannot record that the seat left: a nested repository, a FIFO, a socket.

    None of it is read or added: a nested `.git` would have git run its filters and
    fsmonitor, and a FIFO hangs whoever opens it. The workspace is put back before
    anything runs there again.
    """
    found = {path: what for path, what in checked.odd.items()
             if not any(ignore_pattern_matches(k, path) or ignore_pattern_matches(k, path + "/") for k in keep)}
    if not found:
        return None
    what = [f"{path} is {kind}" for path, kind in sorted(found.items())]
    run.journal("seat-tamper", what=[f"{line}: not read" for line in what])
    return Failure(SEAT_TAMPER, f"{seat} left what git cannot record as files in its workspace: "
                   + "; ".join(what) + " (nothing there was read or committed)")


def _refused(run: RunContext, changed: Sequence[str], checked: Checked) -> tuple[str, ...]:
    """Changed paths the task may not keep: out of scope, protected, undecodable, or a link out of scope."""
    _, rejected = match_scope([p for p in changed if p not in checked.undecodable], run.allow,
                              run.config.scope.protected)
    refused = list(rejected)
    refused += [p for p in checked.undecodable if p in changed]
    for path, target in checked.symlinks.items():
        if path in refused or path not in changed:
            continue
        if link_problem(path, target, run.allow, run.config.scope.protected):
            refused.append(path)
    return tuple(sorted(dict.fromkeys(refused)))


def link_problem(path: str, target: str, allow: Sequence[str], protected: Sequence[str]) -> str | None:
    """Why a symlink at `path` pointing at `target` may not be committed, or None (pure).

    A link is content too: one inside the scope that points at a protected file, or out
    of the task's files, or out of the repository, would let a later reader (a gate, a
    build, a person) reach what the task was not allowed to change.
    """
    if os.path.isabs(target):
        return f"{path} points outside the repository ({target})"
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if resolved == ".." or resolved.startswith("../"):
        return f"{path} points outside the repository ({target})"
    if matches_any(resolved, protected):
        return f"{path} points at the protected path {resolved}"
    if not matches_any(resolved, allow):
        return f"{path} points outside the task's scope ({resolved})"
    return None


def _snapshot_may_hold(path: str) -> bool:
    from lessons.redaction.redact import is_secret_bearing_path

    return not is_secret_bearing_path(path)


def _denied(found: SeatRun, changed: Sequence[str]) -> str | None:
    """What the agent's own permissions refused, when that is why it changed nothing."""
    if found.result.timed_out:
        return None
    from failres.agents.claude_result import claude_result, is_seat_denied

    result = claude_result(found.result.text)
    return result.denial_message() if is_seat_denied(result, list(changed)) else None


def scope_failure(run: RunContext, found: Dispatched, seat: str, *, first: bool) -> Failure | None:
    """The failure a violation or a scope request means, or None for the first plain violation."""
    if found.requests:
        # A seat that asks for scope stops the retry ladder at once: a person decides.
        for request in found.requests:
            run.journal("scope-request", file=request.file, reason=request.reason)
        if found.rejected:
            run.journal("scope-violation", files=list(found.rejected), seat=seat)
        files = tuple(dict.fromkeys([*found.rejected, *(r.file for r in found.requests)]))
        lines = "; ".join(f"{r.file} — {r.reason}" if r.reason else r.file for r in found.requests)
        return Failure(FIXER_SCOPE_VIOLATION, f"{seat} asked for scope: SCOPE-REQUEST: {lines}",
                       rejected=files, requests=found.requests, snapshot=found.snapshot(), seat=seat)
    run.journal("scope-violation", files=list(found.rejected), seat=seat)
    if first:
        return None
    return Failure(FIXER_SCOPE_VIOLATION,
                   f"{seat} changed files outside the task's scope again: {some_paths(found.rejected)}",
                   rejected=found.rejected, snapshot=found.snapshot(), seat=seat)
