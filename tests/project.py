"""A small real project with a failing test, scripted agents and a plan, for loop tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import git
from failres.errors import ConfigError
from failres.journal import read_journal
from failres.initialise import init_repository
from lessons.storage.store import Store

FAKE_AGENT = Path(__file__).resolve().parent / "fake_agent.py"
BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
CHECK = (
    "import sys\nsys.path.insert(0, 'src')\nfrom calc import add\n"
    "if add(2, 3) != 5:\n    print('FAILED tests/check.py::test_add - assert', add(2, 3), '== 5')\n    sys.exit(1)\n"
    "print('1 passed')\n"
)


class Project:
    # "" leaves [sandbox] mode at its default (the seat world wherever the machine gives
    # one); the tests of the tamper check set "off": they are of the second wall alone.
    sandbox_mode = ""

    def __init__(self, top: Path, agents: Path) -> None:
        self.top = top
        self.agents = agents
        self.slug = "rr"

    @classmethod
    def create(cls, tmp_path: Path) -> Project:
        top = tmp_path / "project"
        (top / "src").mkdir(parents=True)
        (top / "tests").mkdir()
        (top / "docs").mkdir()
        git(top, "init", "-q", "-b", "main")
        (top / "src" / "calc.py").write_text(BROKEN)
        (top / "src" / "other.py").write_text("VALUE = 1\n")
        (top / "tests" / "check.py").write_text(CHECK)
        (top / "docs" / "notes.md").write_text("notes\n")
        git(top, "add", ".")
        git(top, "commit", "-q", "-m", "a project with a failing check")
        agents = tmp_path / "agents"
        agents.mkdir()
        return cls(top, agents)

    def agent(self, name: str, turns: list[dict]) -> list[str]:
        script = self.agents / f"{name}.json"
        script.write_text(json.dumps(turns))
        script.with_suffix(".count").unlink(missing_ok=True)
        return [sys.executable, str(FAKE_AGENT), str(script)]

    def calls(self, name: str) -> int:
        counter = self.agents / f"{name}.count"
        return int(counter.read_text()) if counter.exists() else 0

    def configure(self, *, implementer: list[dict], fixer: list[dict] | None = None, extra: str = "",
                  gate_cwd: str = "worktree", health: list[str] | None = None, timeout: str = "60s") -> None:
        lines = [
            "[gates.check]",
            f"command = {json.dumps([sys.executable, 'tests/check.py'])}",
            f'cwd = "{gate_cwd}"',
            'timeout = "60s"',
            "[bindings.impl]",
            f"command = {json.dumps(self.agent('impl', implementer))}",
            f'timeout = "{timeout}"',
            # The fake agent counts its turns beside its script: inside the seat world too.
            f"write = {json.dumps([str(self.agents)])}",
        ]
        if health is not None:
            lines.append(f"health = {json.dumps(health)}")
        if fixer is not None:
            lines += ["[bindings.fix]", f"command = {json.dumps(self.agent('fix', fixer))}", f'timeout = "{timeout}"',
                      f"write = {json.dumps([str(self.agents)])}"]
        lines += ["[seats]", 'implementer = "impl"']
        if fixer is not None:
            lines.append('fixer = "fix"')
        lines += ["[probe]", "attempts = 2", 'backoff = "10ms"']
        if self.sandbox_mode and "[sandbox]\n" in extra:
            extra = extra.replace("[sandbox]\n", f'[sandbox]\nmode = "{self.sandbox_mode}"\n', 1)
        elif self.sandbox_mode:
            lines += ["[sandbox]", f'mode = "{self.sandbox_mode}"']
        (self.top / ".failres.toml").write_text("\n".join(lines) + "\n" + extra)
        try:
            # The store, as `git failres init` creates it: no write ever creates one.
            init_repository(self.top, hooks=False)
        except ConfigError:
            pass  # a test of a configuration failres refuses: there is no store to make

    def plan(self, files: list[str] | None = None, task: str = "t1") -> Path:
        path = self.agents.parent / "plan.toml"
        path.write_text(
            f'slug = "{self.slug}"\n[[tasks]]\nid = "{task}"\ntitle = "Fix add"\n'
            f'prompt = "Make tests/check.py pass."\nfiles = {json.dumps(files or ["src/calc.py"])}\n'
        )
        return path

    def events(self, task: str = "t1") -> list[dict]:
        return read_journal(Store(self.top), self.slug).for_task(task)

    def types(self, task: str = "t1") -> list[str]:
        return [e["type"] for e in self.events(task)]

    def dispatch_logs(self, task: str = "t1") -> list[Path]:
        """The log directories of the task's latest run, in dispatch order."""
        from failres.engine.dispatch_logs import dispatches, task_runs

        runs = task_runs(self.top / ".git", self.slug, task)
        return [record.directory for record in dispatches(runs[-1])] if runs else []

    def prompt(self, number: int, task: str = "t1") -> str:
        """The exact prompt of the task's latest run's dispatch `number` (1 = the first)."""
        return (self.dispatch_logs(task)[number - 1] / "prompt.md").read_text()

    def workspace(self, task: str = "t1") -> Path:
        """Where the task's workspace is (whether or not it still exists)."""
        from failres.config.loading import load_config, worktrees_root
        from failres.gitops.location import locate_repo

        return worktrees_root(load_config(self.top), locate_repo(self.top)) / self.slug / task

    def everything_failres_wrote(self) -> bytes:
        """Every log, record and object failres keeps: its files under .git/failres and the whole history."""
        import subprocess

        found = b""
        for path in (self.top / ".git" / "failres").rglob("*"):
            if path.is_file() and not path.is_symlink():
                found += path.read_bytes()
        found += subprocess.run(["git", "log", "-p", "--all", "--binary"], cwd=self.top, capture_output=True).stdout
        return found

    def branch_file(self, path: str, task: str = "t1") -> str:
        return git(self.top, "show", f"failres/{self.slug}/{task}:{path}")
