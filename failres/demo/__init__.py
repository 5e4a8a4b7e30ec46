"""`git failres demo`: the whole loop, for real, in a throw-away repository.

Every step below is a real run of failres as its own process on a real git
repository (real workspaces, a real gate, real `git merge` firing the installed
hooks); only the agents are scripted. What the demo prints about each step is
read back from the store and the journal, not assumed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.markup import escape as data  # what the demo reads back is data: never markup
from pathlib import Path

from failres.demo.project import FILES, HEALTH, PLAN, agent_script, config_text
from failres.errors import UsageError

DEMO_IDENTITY = {"GIT_AUTHOR_NAME": "failres demo", "GIT_AUTHOR_EMAIL": "demo@failres.invalid",
                 "GIT_COMMITTER_NAME": "failres demo", "GIT_COMMITTER_EMAIL": "demo@failres.invalid"}


@dataclass
class DemoResult:
    directory: Path
    repo: Path
    kept: bool
    seconds: float
    steps: list[str] = field(default_factory=list)


# What the demo needs beside the project (the scripted agents and the plan), kept in the
# repository's top but out of its history and of `git status` (git's own exclude file).
SUPPORT = ".failres-demo"


class Demo:
    def __init__(self, root: Path, say: Callable[[str], None]) -> None:
        self.root = root
        self.repo = root
        self.support = root / SUPPORT
        self.agents = self.support / "agents"
        # The agents' turn counts live beside the workspaces (`[worktrees] dir`), outside
        # the repository: a seat's write into the person's checkout is tamper.
        self.agent_state = root.parent / "workspaces" / f".{root.name}-demo-agents"
        self.plan = self.support / "plan.toml"
        self.say = say
        # The demo repository has its own identity: a fresh machine has none, and the
        # person's own must not sign a throw-away project.
        self.env = {**os.environ, **DEMO_IDENTITY, "FAILRES_DEMO": "1"}

    # ── plumbing ─────────────────────────────────────────────────────────

    def git(self, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=self.repo, env=self.env, capture_output=True, text=True)
        if proc.returncode != 0:
            msg = f"git {' '.join(args)} failed in the demo repository: {proc.stderr.strip()}"
            raise RuntimeError(msg)
        return proc.stdout

    def failres(self, *args: str, show: bool = True, expect: Sequence[int] = (0,)) -> subprocess.CompletedProcess:
        if show:
            self.say(f"   [dim]$ git failres {data(shlex.join(args))}[/dim]")
        proc = subprocess.run([sys.executable, "-m", "failres", *args], cwd=self.repo, env=self.env,
                              capture_output=True, text=True)
        if proc.returncode not in expect:
            msg = f"git failres {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}"
            raise RuntimeError(msg)
        return proc

    def failres_json(self, *args: str, show: bool = True, expect: Sequence[int] = (0,)):
        return json.loads(self.failres(*args, "--json", show=show, expect=expect).stdout)

    def run_task(self, task: str) -> dict:
        outcome = self.failres_json("run", f"{SUPPORT}/plan.toml", "--task", task, expect=(0, 1))[0]
        line = f"{task}: [bold]{outcome['state']}[/bold]"
        if outcome.get("failClass"):
            line += f" ({outcome['failClass']})"
        self.say(f"   → {line}")
        return outcome

    def events(self, task: str, kind: str) -> list[dict]:
        return [e for e in self.failres_json("journal", "demo", "--task", task, show=False) if e["type"] == kind]

    def lesson_of(self, task: str) -> dict:
        lessons = self.failres_json("lessons", "list", "--task", task, show=False)
        return lessons[0]

    def heading(self, n: int, text: str) -> None:
        self.say(f"\n[bold]{n}. {text}[/bold]")

    # ── the story ────────────────────────────────────────────────────────

    def setup(self) -> None:
        self.repo.mkdir(parents=True, exist_ok=True)
        for path, text in FILES.items():
            (self.repo / path).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / path).write_text(text)
        self.git("init", "-q", "-b", "main")
        # The configuration and the demo's own files stay out of the project's history, so
        # changing a binding later is a binding change and nothing else.
        with (self.repo / ".git" / "info" / "exclude").open("a") as exclude:
            exclude.write(f".failres.toml\n/{SUPPORT}/\n")
        self.git("add", ".")
        self.git("commit", "-q", "-m", "calc: a tiny package with four bugs")
        self.agents.mkdir(parents=True)
        self.agent_state.mkdir(parents=True, exist_ok=True)
        (self.agents / "agent.py").write_text(Path(__file__).with_name("agent.py").read_text())
        (self.agents / "health.py").write_text(HEALTH)
        (self.agents / "script.json").write_text(json.dumps(agent_script(), indent=2))
        self.plan.write_text(PLAN)
        self.failres("init", "--force", show=False)
        (self.repo / ".failres.toml").write_text(config_text(str(self.agents), state_dir=str(self.agent_state)))
        self.failres("hooks", "install", show=False)

    def red_gate_and_a_better_fixer(self) -> None:
        self.heading(1, "A red gate, a fixer that cannot fix it: quarantine and a lesson")
        self.run_task("t1")
        lesson = self.lesson_of("t1")
        self.say(f"   lesson {lesson['id'][:8]}: [italic]{data(lesson['signature'])}[/italic]")
        self.heading(2, "A better fixer binding, the same task again: the red gate is repaired")
        (self.repo / ".failres.toml").write_text(config_text(str(self.agents), fixer="fixer-v2",
                                                                  state_dir=str(self.agent_state)))
        self.say("   (seats.fixer = \"fixer-v2\" in .failres.toml)")
        self.run_task("t1")
        self.failres("land", "demo", "t1")
        stamped = self.lesson_of("t1")
        self.say(f"   landed; lesson {stamped['id'][:8]} resolved by {', '.join(stamped['resolved_by'])}")

    def scope_violation_and_a_decision(self) -> None:
        self.heading(3, "A seat edits a file outside its scope: undone, one constrained retry, a SCOPE-REQUEST")
        self.run_task("t2")
        violation = self.events("t2", "scope-violation")[0]
        self.say(f"   the scope guard rejected {data(', '.join(violation['files']))} and put the workspace back")
        decision = self.failres_json("decisions", "--open", show=False)[0]
        request = decision["requests"][0] if decision["requests"] else {"file": "?", "reason": ""}
        self.say(f"   decision {decision['id'][:8]} asks: may t2 touch {data(request['file'])}? ({data(request['reason'])})")
        self.heading(4, "A person answers the decision; the task runs again with its widened scope")
        self.failres("decide", decision["id"][:8], "--scope-files", "src/calc/util.py")
        self.run_task("t2")
        self.say("   [dim]$ git merge --no-ff failres/demo/t2[/dim]   (a plain merge; the hook stamps the lesson)")
        self.git("merge", "-q", "--no-ff", "-m", "Merge t2: the mean of nothing is 0", "failres/demo/t2")
        stamped = self.lesson_of("t2")
        self.say(f"   landed; lesson {stamped['id'][:8]} resolved by {', '.join(stamped['resolved_by'])}")

    def engine_down(self) -> None:
        self.heading(5, "The agent's engine is down: probe, wait, retry — no blind rerun")
        self.run_task("t3")
        probes = self.events("t3", "repair")
        self.say("   probes: " + ", ".join(f"{p['outcome']}" for p in probes))

    def hopeless_task(self) -> None:
        self.heading(6, "A hopeless task: two identical failures, then the stop-loss refuses a third run")
        self.run_task("t4")
        self.run_task("t4")
        before = len(self.events("t4", "seat-dispatched"))
        self.run_task("t4")
        after = len(self.events("t4", "seat-dispatched"))
        stop = self.events("t4", "stop-loss")[0]
        self.say(f"   stop-loss after {stop['count']} identical quarantines: {after - before} dispatches made")
        for advice in stop.get("advice", []):
            self.say(f"     - would change the outcome: {data(advice)}")

    def advisory_block(self) -> None:
        self.heading(7, "What the next fixer is told: resolved lessons, as advice")
        text = self.failres("prompt", "demo", "t4", "--mode", "fix").stdout
        start = text.find("## Past outcomes")
        block = text[start:].split("\n## ")[0].strip() if start >= 0 else "(no resolved lesson matched)"
        for line in block.splitlines():
            self.say(f"   │ {data(line)}")

    def summary(self) -> None:
        self.heading(8, "What happened, in plain git")
        report = self.failres_json("report", show=False)
        states = ", ".join(f"{r['count']} {r['name']}" for r in report["tasks"]["byState"] if r["count"])
        self.say(f"   tasks: {states}; quarantines: {report['quarantines']['total']}; "
                 f"dispatches saved by stop-loss: {report['stopLoss']['dispatchesNotMade']}")
        commits = self.git("rev-list", "--count", "refs/failres/store").strip()
        self.say(f"   the store holds {commits} commits on refs/failres/store")
        repo = shlex.quote(str(self.repo))
        self.say("\n[bold]Look for yourself:[/bold]")
        for command in (f"git -C {repo} log --oneline refs/failres/store | head -20",
                        f"git -C {repo} log -p refs/failres/store",
                        f"git -C {repo} log --oneline --graph main",
                        f"ls {shlex.quote(str(self.repo / '.git' / 'hooks'))}",
                        f"cd {repo} && {shell_command()} report && {shell_command()} lessons list"):
            self.say(f"   {data(command)}")


def shell_command() -> str:
    """How a person's shell runs this failres: `git failres` when the `git-failres` on PATH is
    this installation's, else the absolute path of this installation's own (a venv that is not
    activated, a pipx install whose bin directory is not on PATH yet)."""
    here = Path(sys.executable).parent / "git-failres"  # the venv's own bin, never resolved
    found = shutil.which("git-failres")
    if found is not None and (not here.is_file() or Path(found).resolve() == here.resolve()):
        return "git failres"
    if here.is_file():
        return shlex.quote(str(here))
    return f"{shlex.quote(sys.executable)} -m failres"


def run_demo(keep: Path | None = None, say: Callable[[str], None] = print) -> DemoResult:
    started = time.monotonic()
    if keep is not None:
        keep = keep.resolve()
        if keep.exists() and not keep.is_dir():
            msg = f"{keep} exists and is not a directory"
            raise UsageError(msg, hint="give --keep a new or empty directory")
        if keep.exists() and any(keep.iterdir()):
            msg = f"{keep} exists and is not empty"
            raise UsageError(msg, hint="give --keep a new or empty directory")
        keep.mkdir(parents=True, exist_ok=True)
        root = keep
    else:
        root = Path(tempfile.mkdtemp(prefix="failres-demo-"))
    demo = Demo(root, say)
    say(f"[bold]failres demo[/bold] — the whole loop, for real, in {demo.repo}")
    try:
        demo.setup()
        demo.red_gate_and_a_better_fixer()
        demo.scope_violation_and_a_decision()
        demo.engine_down()
        demo.hopeless_task()
        demo.advisory_block()
        demo.summary()
    except BaseException:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
        raise
    if keep is None:
        say(f"\n(a throw-away repository at {root}: `rm -rf {shlex.quote(str(root))}` when done; "
            "`--keep DIR` puts it where you like)")
    return DemoResult(root, demo.repo, keep is not None, time.monotonic() - started)
