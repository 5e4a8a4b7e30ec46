"""A run's seat world: the facts of this machine and this task gathered into a mount plan.

`layout` says what a world is made of; this module finds the paths on the host: where
the program a seat or gate runs really lives (through symlinks, a venv's base
interpreter, a script's `#!` line), the directories on `PATH` and the prefixes they
belong to (pyenv, nvm, pipx, `~/.local`, an npm prefix), the person's environment
directories, the objects the workspace borrows. It is the only place failres decides
how a command is wrapped, so seats, gates and setups are wrapped alike.

Inside a world `{worktree}` and `{repo}` are both the repository top: the workspace
stands there, so a gate that is told either judges the workspace, and a gate with
`cwd = "repo"` runs the gate script as the task's tree has it.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import Path

from lessons.frozen import record
from failres.config.model import Config
from failres.errors import ConfigError
from failres.sandbox.environment import environment_dirs
from failres.sandbox.layout import OBJECTS_INSIDE, SYSTEM_DIRECTORIES, SystemEntry, WorldPlan, layout_argv, within
from failres.sandbox.probe import Availability, machine_sandbox
from failres.sandbox.program_files import path_dirs, run_needs, venv_base
from failres.sandbox.world_network import TaskNetwork

log = logging.getLogger("failres.sandbox")

# Files under a bound toolchain directory that hold credentials: hidden even there.
_SECRET_FILES = (".cargo/credentials", ".cargo/credentials.toml", ".local/share/pipx/.pypirc")
# What an agent reads from the person's home by itself (besides its moved config dir).
_AGENT_HOME_FILES = {
    "aider": (".aider.conf.yml", ".aider.model.settings.yml", ".aider.model.metadata.json", ".env"),
    "claude": (".claude/.credentials.json", ".claude/settings.json", ".claude.json"),
    "codex": (".codex/auth.json", ".codex/config.toml"),
}


def world_wanted(config: Config, availability: Availability | None = None) -> bool:
    """Do seats run in a world under this configuration on this machine?

    ConfigError for `mode = "required"` where there is none: nothing may be dispatched.
    """
    mode = config.sandbox.mode
    if mode == "off":
        return False
    found = availability or machine_sandbox()
    if found.available:
        return True
    if mode == "required":
        msg = f'{config.source}: [sandbox] mode = "required", but this machine gives no seat world: {found.why}'
        raise ConfigError(msg, hint=found.fix or 'set [sandbox] mode = "auto" to run without one')
    return False


@record
class SeatWorld:
    """One task's world: the parts every seat and gate of the run shares."""

    bwrap: str
    config: Config
    top: Path
    workspace: Path
    objects: Path
    workspaces_root: Path
    git_dir: Path
    scratch: Path  # failres's own, beside the dispatches: never bound into a world
    home: Path
    environment: tuple[str, ...]
    # What `wrap` found once for the task (`_shared_readable`, `_masked`): not part of the world's identity.
    _memo: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def for_task(cls, config: Config, *, top: Path, workspace: Path, git_dir: Path, workspaces_root: Path,
                 dispatch_root: Path) -> SeatWorld | None:
        """The world this task's seats and gates run in, or None where they run without one."""
        if not world_wanted(config):
            return None
        scratch = dispatch_root / "world"
        scratch.mkdir(parents=True, exist_ok=True)
        (scratch / "alternates").write_text(OBJECTS_INSIDE + "\n", encoding="utf-8")
        home = Path(os.environ.get("HOME") or Path.home())
        return cls(bwrap=machine_sandbox().program, config=config, top=top, workspace=workspace,
                   objects=git_dir / "objects", workspaces_root=workspaces_root, git_dir=git_dir, scratch=scratch,
                   home=home, environment=environment_dirs(config, top))

    def close(self) -> None:
        """Stop what the task's commands needed while they ran (the network bridges)."""
        network = self._memo.pop("network", None)
        if network is not None:
            network.close()

    def inside_values(self, values: Mapping[str, str]) -> dict[str, str]:
        """Placeholder values as the world sees them: the workspace is at the repository top."""
        out = dict(values)
        if out.get("worktree"):
            out["worktree"] = str(self.top)
        if "repo" in out:
            out["repo"] = str(self.top)
        return out

    def inside_env(self, env: Mapping[str, str]) -> dict[str, str]:
        out = dict(env)
        for name in ("FAILRES_WORKTREE", "FAILRES_REPO"):
            if out.get(name):
                out[name] = str(self.top)
        return out

    def wrap(self, argv: Sequence[str], *, env: Mapping[str, str], network: str | Sequence[str] = "",
             role: str = "seat", who: str = "", read: Iterable[str] = (), write: Iterable[str] = (),
             kept: Sequence[str] = ()) -> list[str]:
        """`argv` as a command that runs it inside this world, started from the repository top.

        A program that cannot be started at all is left unwrapped, so the caller reports
        it as missing in exec's words rather than as bubblewrap's failure. `network` is the
        command's own setting, `role` seat|gate|setup and `who` its section (for warnings).
        The workspace's `kept` paths (`[gates.X] keep`) are read-only inside: only the
        setup, wrapped without them, writes there.

        What is bound comes from the person's configuration, `PATH` and the system alone:
        a file a seat could have written (anything in a workspace or a dispatch directory)
        is never read for what to bind, not its `#!` line, its links or a `pyvenv.cfg`. A
        seat's `#!/usr/bin/env -S sh /other/project/gradlew` once got that other project
        bound, and its notes reached the fixer's prompt.
        """
        program = self._host_program(argv[0], env) if argv else None
        if program is None:
            return list(argv)
        wanted = set(self.config.sandbox.read) | set(read)
        named = [program, *_absolute_paths(argv[1:])]
        readable = [*run_needs([p for p in named if not self._seat_writable(p)]),
                    *(_expand(p, self.home) for p in wanted)]
        net = self._memo.setdefault("network", TaskNetwork(self.config)).for_command(
            argv, own=network, role=role, who=who or "the command", env=env,
            read=[_expand(p, self.home) for p in read])
        readable += net.readable
        person_files = [os.path.dirname(p) for p in named
                        if within(p, str(self.top)) and not os.path.exists(self.workspace / os.path.relpath(p, self.top))]
        plan = WorldPlan(
            top=str(self.top), workspace=str(self.workspace), home=str(self.home), cwd=str(self.top),
            system=_system_entries(), readable=(*self._visible(readable), *self._shared_readable(env.get("PATH", ""))),
            writable=tuple(self._writable(write)),
            environment=self.environment, person_files=tuple(d for d in person_files if d != str(self.top)),
            objects=str(self.objects), alternates=str(self.scratch / "alternates"),
            masked=self._masked(), setenv=(*_tmpdir_setting(env), *net.setenv), bridge=net.bridge,
            launcher=net.launcher, uid=os.getuid(), gid=os.getgid())
        return _with_read_only(layout_argv(plan, self.bwrap, argv), self._kept_binds(kept),
                               len(plan.launcher) + len(argv))

    def _seat_writable(self, path: str) -> bool:
        """Could a seat have written `path`: is it in a workspace or a dispatch directory?"""
        return any(within(path, str(p)) for p in (self.workspace, self.workspaces_root, self.scratch.parent))

    def _kept_binds(self, keep: Sequence[str]) -> list[tuple[str, str]]:
        """(host, inside) for each kept path of the workspace, at the top and at the workspace's own path.

        A kept path that is a link, or lies below one, is not bound: bubblewrap would
        follow it and show its target, some other file of the person's, to the seat.
        """
        from failres.containment.kept import kept_roots

        binds = []
        for root in kept_roots(self.workspace, keep):
            if not _no_link_below(self.workspace, root):
                continue
            relative = os.path.relpath(root, self.workspace)
            binds += [(str(root), os.path.join(str(self.top), relative)), (str(root), str(root))]
        return binds

    def _shared_readable(self, path_value: str) -> tuple[str, ...]:
        """What every command of the task sees whatever it runs: the `PATH` directories, what
        the environment dirs point at, the resolver's file; found once per `PATH` value.

        The preflight, the seats and the gate of a task would otherwise walk the same
        links and stat the same directories each time; the task's world is short-lived,
        and a bind of a path that has gone since is skipped (`--ro-bind-try`).
        """
        key = ("readable", path_value)
        if key not in self._memo:
            self._memo[key] = tuple(self._visible([*path_dirs(path_value, self.home), *self._environment_needs(),
                                                   *_resolver_files()]))
        return self._memo[key]

    def _masked(self) -> tuple[str, ...]:
        """The credential files in the home's toolchain dirs, hidden behind an empty file."""
        if "masked" not in self._memo:
            self._memo["masked"] = tuple(str(self.home / name) for name in _SECRET_FILES if (self.home / name).exists())
        return self._memo["masked"]

    def agent_reads(self, program: str, links: Iterable[os.PathLike]) -> list[str]:
        """What of the person's home an agent reads: its login files (linked or in place)."""
        name = Path(program).name
        own = [str(self.home / f) for agent, files in _AGENT_HOME_FILES.items() if agent in name for f in files]
        return [*own, *(os.fspath(link) for link in links)]

    def _host_program(self, program: str, env: Mapping[str, str]) -> str | None:
        """Where the program inside the world is on the host: the workspace's, an environment dir's."""
        if os.sep not in program:
            return shutil.which(program, path=env.get("PATH", os.defpath))
        inside = Path(self.top, program)
        relative = os.path.relpath(inside, self.top)
        candidates = [Path(program)] if os.path.isabs(program) and not within(program, str(self.top)) else []
        if not relative.startswith(".."):
            candidates.append(self.workspace / relative)
            if any(within(relative, name) for name in self.environment) or not candidates[-1].exists():
                candidates.append(self.top / relative)
        for path in candidates:
            if path.exists() and os.access(path, os.X_OK) and not path.is_dir():
                return str(path)
        return None

    def _environment_needs(self) -> list[str]:
        """What the person's environment dirs point at outside the checkout: a venv's base interpreter."""
        needs: list[str] = []
        for name in self.environment:
            host = self.top / name
            if host.is_symlink():
                needs.append(os.path.realpath(host))
            needs += venv_base(Path(os.path.realpath(host)))
        return needs

    def _writable(self, paths: Iterable[str]) -> list[str]:
        """The paths a binding may write: existing, and none that holds the checkout, the home or a workspace.

        A writable bind of a directory above the repository top would lay the person's
        checkout, writable, over the workspace: such an entry is left out.
        """
        containers = [self.top, self.workspace, self.home, self.workspaces_root, self.git_dir]
        out = []
        for path in (_expand(p, self.home) for p in paths if p):
            path = os.path.normpath(path)
            if os.path.isabs(path) and os.path.exists(path) and not any(within(str(c), path) for c in containers):
                out.append(path)
        return out

    def _visible(self, paths: Iterable[str]) -> list[str]:
        """The paths that may be bound: existing, not already visible, not a way to the person's files."""
        hidden = [self.top, self.workspaces_root, self.git_dir, self.home / ".cache" / "failres" / "workspaces"]
        containers = [self.top, self.workspace, self.home, self.workspaces_root]
        out = []
        for path in paths:
            path = os.path.normpath(path)
            if not os.path.isabs(path) or not os.path.exists(path) or path == "/":
                continue
            # Under the system dirs it is there already (a link there too: its target, when
            # elsewhere, is a path of its own in `paths`).
            if any(within(path, d) for d in SYSTEM_DIRECTORIES):
                continue
            if any(within(path, str(h)) for h in hidden) or any(within(str(c), path) for c in containers):
                continue
            out.append(path)
        return out




def _with_read_only(words: list[str], binds: Sequence[tuple[str, str]], argv_length: int) -> list[str]:
    """bwrap's `words` with read-only binds laid over the workspace's, just before it starts the command.

    `layout_argv` ends with `--chdir CWD -- ARGV...`; a bind added before those covers
    every mount made earlier, the read-write workspace included.
    """
    if not binds:
        return words
    start = len(words) - argv_length - 3
    extra = [word for host, inside in binds for word in ("--ro-bind", host, inside)]
    return [*words[:start], *extra, *words[start:]]


def _no_link_below(base: Path, path: Path) -> bool:
    """Is `path` reached from `base` without a link at any component, itself included?"""
    current = base
    for name in path.relative_to(base).parts:
        current = current / name
        if current.is_symlink() or not current.exists():
            return False
    return True


def _absolute_paths(words: Iterable[str]) -> list[str]:
    """Arguments that name an existing file by absolute path (a script, a metadata file)."""
    return [w for w in words if w.startswith("/") and "\0" not in w and os.path.isfile(w)]


def _expand(path: str, home: Path) -> str:
    if path == "~" or path.startswith("~/"):
        return str(home) + path[1:]
    return path


def _resolver_files() -> list[str]:
    """Where /etc/resolv.conf really is: often a link into /run, which is private inside."""
    real = os.path.realpath("/etc/resolv.conf")
    return [real] if real != "/etc/resolv.conf" else []


@functools.lru_cache(maxsize=1)
def _system_entries() -> tuple[SystemEntry, ...]:
    """The top-level system paths this machine has (asked once per process: they are the OS's own)."""
    entries = []
    for path in SYSTEM_DIRECTORIES:
        if os.path.islink(path):
            entries.append(SystemEntry(path, os.readlink(path)))
        elif os.path.isdir(path):
            entries.append(SystemEntry(path))
    return tuple(entries)


def _tmpdir_setting(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A TMPDIR outside /tmp is not there inside: the world's private /tmp is."""
    value = env.get("TMPDIR")
    if value and not within(value, "/tmp"):
        return (("TMPDIR", "/tmp"),)
    return ()
