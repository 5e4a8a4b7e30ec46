"""The preflight as a run takes it: the gate once at the integration head, or a verdict already on record.

A trial on a real project: a green task took 15.0 s against 6.8–8.7 s by hand, because
the preflight ran the whole suite again at the head for every task, though nothing it
judges had changed. What decides the gate's verdict at the head is the head's tree, the
gate's configuration (command, env, setup, cwd, keep, timeout ...; `[workspace]`), the
seat world's settings and whether one runs, and the environment the gate runs with (the
person's environment dirs, what the setup made). Those make the *preflight key*
(`preflight_key`, recorded as `preflightKey` on the `gate-result` with `preflight: true`).

A verdict on record for the same key, from any task of the plan (this run's or an
earlier one), is reused instead of run again, and journaled as a `gate-result` with
`preflight: true`, `reused` (the id of the event it repeats) and `durationMs: 0`:

- a green one always: exit 0 is green for every task;
- a red one only when it was judged without the task's scope: a red reached because what
  the gate missed lies in that task's files (`scoped: true`) would be `gate-unavailable`
  for a task with other files, so that task runs its own;
- an unavailable one never: it is cheap to see again, and the task's own files may be
  what the gate misses.

Tasks of a `--jobs` run at the same key wait for the first one's preflight (a lock per
key, `runtime.PreflightLocks`) rather than run the same suite side by side.

What stays outside the key: a gate whose verdict changes between two runs on the same
tree, configuration and environment (a flaky test, the network, the clock). Such a gate
is red or green by chance anyway; the fixer's prompt says which verdict it quotes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from failres.engine import state
from failres.engine.preflight import GREEN, RED, UNAVAILABLE, HeadRun, HeadVerdict, judge_at_head
from failres.engine.prompts import JudgeInvocation
from failres.engine.quarantine import Failure
from failres.engine.run_context import RunContext
from failres.engine.taxonomy import GATE_UNAVAILABLE, SEAT_TAMPER
from failres.journal import read_journal
from lessons.failpoints import failpoint

# Bounds on the look at the environment dirs: a node_modules can hold a hundred thousand files.
_MAX_ENTRIES = 100_000


def environment_fingerprint(top: Path, names: tuple[str, ...], kept: dict | None) -> str:
    """A digest of what the gate runs with besides the tree: every entry of the person's
    environment dirs by its stat data, and what the setup made in the kept paths (by path,
    mode, size and link: each workspace's setup writes its own files, so not by inode)."""
    entries: list[object] = []
    for name in names:
        root = top / name
        for directory, dirs, files in os.walk(root):
            # Bytecode caches change nothing a gate sees (Python checks them against their
            # source), and a gate without a world writes them on its first run.
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for entry in sorted((*dirs, *(f for f in files if not f.endswith(".pyc")))):
                if len(entries) >= _MAX_ENTRIES:
                    break
                path = Path(directory, entry)
                try:
                    info = path.lstat()
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):  # its entries say what it holds; its mtime moves with a cache
                    entries.append((os.path.relpath(path, top), info.st_mode))
                else:
                    entries.append((os.path.relpath(path, top), info.st_mode, info.st_size, info.st_mtime_ns))
    made = sorted((path, print_[0], print_[1], print_[5]) for path, print_ in (kept or {}).items())
    return state.key_of({"environment": entries, "kept": made})


class PreflightSteps(RunContext):
    """The preflight step of a task run (the gate itself runs through `RunSteps.run_gate`)."""

    head_scoped = False  # whether the last head verdict turned on the task's own files
    reuse_head_verdicts = True  # False: `run --dry-run --preflight`, whose point is what the gate says now
    preflight_key_now = ""
    carried_journal = None  # the run's first read of the journal, for the first task only (`TaskRun.run`)

    def preflight_key(self) -> str:
        """The digest of everything the gate's verdict at the head depends on (module docstring)."""
        from failres.engine.state import _settings
        from failres.sandbox.environment import environment_dirs

        kept = getattr(self, "_kept", None)
        environment = environment_fingerprint(self.engine.top, environment_dirs(self.config, self.engine.top), kept)
        return state.key_of({"intHead": self.int_head, "config": self.conditions.config_key,
                             "sandbox": _settings(self.config.sandbox), "world": self.world is not None,
                             "environment": environment})

    def lent_read_only(self) -> tuple[str, ...]:
        """The person's environment dirs the world shows its commands read-only (none without a world)."""
        from failres.sandbox.environment import environment_dirs

        return environment_dirs(self.config, self.engine.top) if self.world is not None else ()

    def recorded_head_verdict(self, key: str) -> dict | None:
        """A preflight of the plan with this key whose verdict holds for this task too, or None."""
        if not self.reuse_head_verdicts:
            return None
        # The first task of a run may judge from the journal the run read at its start: no
        # verdict was written since (its own is written after this); any other task reads again.
        journal = self.carried_journal or read_journal(self.engine.store, self.slug)
        for event in reversed(journal.events):
            if (event.get("type") != "gate-result" or not event.get("preflight")
                    or event.get("preflightKey") != key):
                continue
            verdict = event.get("verdict")
            if verdict == GREEN or (verdict == RED and (not event.get("scoped") or event.get("task") == self.task.id)):
                return event
        return None

    def head_verdict(self, judge: JudgeInvocation, result) -> HeadVerdict:
        from failres.engine.preflight import module_paths, pytest_table, unimportable_modules
        from failres.gitops.scope import match_scope

        exempted = []

        def in_scope(path: str) -> bool:
            inside = bool(match_scope([path], self.allow, self.config.scope.protected)[0])
            if inside:
                exempted.append(path)
            return inside

        src = self.workspace.path / "src"
        packages = tuple(sorted(p.name.removesuffix(".py") for p in src.iterdir())) if src.is_dir() else ()
        # Read from the person's checkout and the workspace as the head made it: no seat has run yet.
        candidates = {path for module in unimportable_modules(result.text) for path in module_paths(module)}
        generated = tuple(sorted(path for path in candidates if (self.engine.top / path).is_file()
                                 and not (self.workspace.path / path).exists()))
        gate = self.config.gates[self.gate_name]
        node_bin = self.engine.top / "node_modules" / ".bin"
        unseen = self.world is None and node_bin.is_dir() and not (self.workspace.path / "node_modules").exists()
        checkout_node_bin = frozenset(os.listdir(node_bin)) if unseen else frozenset()
        pyproject = self.workspace.path / "pyproject.toml"  # as the head has it: no seat has run yet
        verdict = judge_at_head(HeadRun(self.gate_name, tuple(judge.argv), result.exit_code, result.not_found,
                                        result.timed_out, result.text, str(self.workspace.path), packages,
                                        generated=generated, pythonpath=str(gate.env.get("PYTHONPATH", "")),
                                        checkout_node_bin=checkout_node_bin,
                                        pytest_table=pytest_table(pyproject.read_text(encoding="utf-8",
                                                                                      errors="replace")
                                                                  if pyproject.is_file() else ""),
                                        in_world=self.world is not None, read_only=self.lent_read_only(),
                                        instead=self.gate_init_writes(gate, result)),
                                self.allow, in_scope=in_scope)
        self.head_scoped = bool(exempted) and verdict.kind == RED
        return verdict

    def gate_init_writes(self, gate, result) -> str:
        """The lines of the gate `init` writes here instead of this one, asked only of a gate whose
        program was not found or whose interpreter lacks the module it runs (it starts interpreters)."""
        from failres.engine.preflight import no_runner_module

        if not (result.not_found or result.exit_code == 127 or no_runner_module(result.text)):
            return ""
        from failres.agents.gate_here import ProjectLook, gate_lines

        instead = ProjectLook.of(self.engine.top).gate_instead(gate.command, gate.env, in_world=self.world is not None)
        return gate_lines(gate.name, instead) if instead is not None else ""

    def run_preflight(self) -> Failure | None:
        """The gate once at the integration head, before the first dispatch, unless a verdict that
        holds for this task is on record for the same key (module docstring)."""
        gate = self.config.gates[self.gate_name]
        if not gate.preflight:
            return None
        key = self.preflight_key()
        self.preflight_key_now = key
        lock = self.engine.preflight_locks.of(key)
        while not lock.acquire(timeout=0.2):  # another task of this run is judging the same key
            self.check_stop()
        try:
            return self.judge_head_once(key)
        finally:
            lock.release()

    def judge_head_once(self, key: str) -> Failure | None:
        recorded = self.recorded_head_verdict(key)
        if recorded is not None:
            self.head_said = str(recorded.get("summary") or "")
            self.head_green = recorded.get("verdict") == GREEN
            self.journal("gate-result", gate=self.gate_name, passed=bool(recorded.get("passed")),
                         exitCode=recorded.get("exitCode"), timedOut=bool(recorded.get("timedOut")), durationMs=0,
                         mode="implement", attempt=0, unavailable=False, preflight=True,
                         verdict=recorded.get("verdict"), intHead=self.int_head, gateKey=recorded.get("gateKey"),
                         summary=self.head_said, preflightKey=key,
                         # The run that judged, not a reuse of it: one hop from any reuse to the gate's output.
                         reused=recorded.get("reused") or recorded.get("id"),
                         reusedFrom=recorded.get("reusedFrom") or recorded.get("task"))
            return None
        self.step("preflight")
        failpoint("preflight")
        outcome = self.run_gate("implement", 0, preflight=True)
        if outcome.tampered:
            return Failure(SEAT_TAMPER, outcome.tampered)
        if outcome.refused is not None:
            return outcome.refused
        if outcome.unavailable:
            return Failure(GATE_UNAVAILABLE, outcome.unavailable)
        self.head_said = outcome.summary
        self.head_green = outcome.passed
        return None

    def preflight_fields(self, verdict: HeadVerdict) -> dict[str, object]:
        """What a preflight's `gate-result` carries beside a gate run's own fields."""
        gate = self.config.gates[self.gate_name]
        return {"preflight": True, "verdict": verdict.kind, "intHead": self.int_head,
                "gateKey": state.key_of(list(gate.command)),
                "preflightKey": self.preflight_key_now or self.preflight_key(),
                **({"scoped": True} if self.head_scoped else {}),
                **({"cause": verdict.message} if verdict.kind == UNAVAILABLE else {})}
