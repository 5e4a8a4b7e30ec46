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
from dataclasses import dataclass, field
from pathlib import Path

from failres.config.model import Config
from failres.errors import ConfigError
from failres.sandbox.environment import environment_dirs
from failres.sandbox.layout import OBJECTS_INSIDE, SYSTEM_DIRECTORIES, SystemEntry, WorldPlan, layout_argv, within
from failres.sandbox.probe import Availability, machine_sandbox
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
_SHEBANG_LIMIT = 256


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


@dataclass(frozen=True)
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
             role: str = "seat", who: str = "", read: Iterable[str] = (), write: Iterable[str] = ()) -> list[str]:
        """`argv` as a command that runs it inside this world, started from the repository top.

        A program that cannot be started at all is left unwrapped, so the caller reports
        it as missing in exec's words rather than as bubblewrap's failure. `network` is the
        command's own setting, `role` seat|gate|setup and `who` its section (for warnings).
        """
        program = self._host_program(argv[0], env) if argv else None
        if program is None:
            return list(argv)
        wanted = set(self.config.sandbox.read) | set(read)
        named = [program, *_absolute_paths(argv[1:])]
        readable = [*_run_needs(named), *(_expand(p, self.home) for p in wanted)]
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
        return layout_argv(plan, self.bwrap, argv)

    def _shared_readable(self, path_value: str) -> tuple[str, ...]:
        """What every command of the task sees whatever it runs: the `PATH` directories, what
        the environment dirs point at, the resolver's file; found once per `PATH` value.

        The preflight, the seats and the gate of a task would otherwise walk the same
        links and stat the same directories each time; the task's world is short-lived,
        and a bind of a path that has gone since is skipped (`--ro-bind-try`).
        """
        key = ("readable", path_value)
        if key not in self._memo:
            self._memo[key] = tuple(self._visible([*_path_dirs(path_value, self.home), *self._environment_needs(),
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
            needs += _venv_base(Path(os.path.realpath(host)))
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




def _absolute_paths(words: Iterable[str]) -> list[str]:
    """Arguments that name an existing file by absolute path (a script, a metadata file)."""
    return [w for w in words if w.startswith("/") and "\0" not in w and os.path.isfile(w)]


def _run_needs(programs: Iterable[str]) -> list[str]:
    """Each program's file and directory, every hop of its links, its venv and base interpreter, its `#!`."""
    needs: list[str] = []
    seen: set[str] = set()
    todo = list(programs)
    while todo:
        path = todo.pop()
        if path in seen or len(seen) > 64:
            continue
        seen.add(path)
        needs.append(path)
        for hop in _link_hops(path):
            needs += [hop, os.path.dirname(hop)]
            needs += _prefix_of(hop)
            needs += _venv_base(Path(hop).parent.parent)
        real = os.path.realpath(path)
        needs += [real, *_prefix_of(real)]
        interpreter = _shebang(real)
        if interpreter:
            todo.append(interpreter)
    return needs


def _link_hops(path: str) -> list[str]:
    hops = [path]
    current = path
    for _ in range(16):
        if not os.path.islink(current):
            break
        target = os.readlink(current)
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
        hops.append(current)
    return hops


def _prefix_of(path: str) -> list[str]:
    """The install prefix of a program in a `bin/`: `~/.nvm/versions/node/v20`, a venv, `/opt/x`."""
    directory = os.path.dirname(path)
    if os.path.basename(directory) in ("bin", "shims", "scripts"):
        return [os.path.dirname(directory)]
    return [directory]


def _venv_base(venv: Path) -> list[str]:
    """A venv's own dir and the interpreter it was made from (`home =` in pyvenv.cfg)."""
    config = venv / "pyvenv.cfg"
    if not config.is_file():
        return []
    needs = [str(venv)]
    for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            needs += [value.strip(), os.path.dirname(value.strip())]
    return needs


def _shebang(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SHEBANG_LIMIT)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env" and len(words) > 1:
        return shutil.which(words[-1]) if not words[-1].startswith("-") else None
    return words[0] if words[0].startswith("/") else None


def _path_dirs(path_value: str, home: Path) -> list[str]:
    """The directories on PATH, with the prefix of each under the home (`~/.local`, `~/.pyenv`)."""
    out = []
    for entry in path_value.split(os.pathsep):
        if not entry.startswith("/"):
            continue
        out.append(entry)
        parent = os.path.dirname(os.path.normpath(entry))
        if os.path.basename(os.path.normpath(entry)) in ("bin", "shims") and parent not in (str(home), "/"):
            out.append(parent)
        out.append(os.path.realpath(entry))
    return out


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
