"""The mount plan of one world, and the bubblewrap command line it becomes (pure).

What a seat sees, in the order bubblewrap builds it (a later mount covers an earlier
one, so the order is the design):

1. the system: `/usr`, `/etc`, `/opt` and the other top-level directories a program
   needs, read-only (links such as `/bin -> usr/bin` kept as links); a fresh `/dev` and
   `/proc` (Claude Code's runtime needs the first, Codex's own nested sandbox both);
   private, empty `/tmp`, `/var/tmp` and `/run`;
2. a private, empty, writable home at the person's `$HOME` path: the agent's state goes
   into its dispatch directory, and nothing of the person's home is there unless named;
3. what the seat needs to run or was allowed to read, read-only at its own path: the
   program and its interpreter, the `PATH` directories, `[sandbox] read`, the person's
   agent login files. Parents before children, so no bind hides another;
4. the workspace, read-write, at the person's repository top (and at its own path);
5. the person's environment directories (`.venv/`, `node_modules/` ...) read-only at
   their usual place under the top: the workspace has none of its own; and where the
   person's configuration names a program (or a file for it) in an untracked directory
   of the checkout, that directory, read-only;
6. the objects the workspace borrows, read-only at `OBJECTS_INSIDE`, with an alternates
   file naming that path laid over the workspace's own: inside the world the
   repository's `.git/objects` *is* the workspace's, and an alternates file naming it
   would make git read its own objects as borrowed ("bad object HEAD");
7. the dispatch directory (the agent's home for this dispatch, its prompt), read-write;
8. secret files inside a bound directory, hidden behind an empty file;
9. the bridge's socket directory at `NET_INSIDE`, where the world's network goes
   (`network.py`): the world always has a network namespace of its own, and where its
   policy is not "off" the command starts under the forwarder (`launcher`).

Nothing else of the host is there: not the person's checkout or git dir, not other
workspaces (`--jobs N`), not `~/.cache/failres`, not other repositories.

And whoever runs failres, root included, the seat holds no privilege there: a user
namespace of its own with every capability dropped and `no_new_privs` set (bubblewrap
sets it), and its own IPC, UTS and cgroup namespaces (`isolation_words`). As root
without a user namespace bubblewrap keeps every capability inside: a seat remounted the
objects bind read-write, opened the host's root by handle and read `~/.ssh`; without its
own IPC namespace a seat read the host's owner-only System V shared memory.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import field

from lessons.frozen import record

OBJECTS_INSIDE = "/run/failres/objects"
ALTERNATES_INSIDE = ".git/objects/info/alternates"
NET_INSIDE = "/run/failres/net"
# Top-level directories of a Linux system a program may need, read-only. Not /home,
# /root, /srv, /mnt, /media, /var (other people's and other projects' files, sockets).
SYSTEM_DIRECTORIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix",
                      "/snap")
PRIVATE_SCRATCH = ("/tmp", "/var/tmp", "/run")
# Who a seat of root is inside: `nobody`. Since Linux 5.12 mapping uid 0 into a user
# namespace takes CAP_SETFCAP (file capabilities written there would hold on the host),
# so a seat that is uid 0 without capabilities cannot make a user namespace of its own:
# Codex's nested bubblewrap failed "setting up uid map: Operation not permitted". As
# `nobody` it can, and its files are still root's on the host (the map is 65534 -> 0).
NOBODY = 65534


@record
class SystemEntry:
    """A top-level system path as the host has it: a directory, or a link to `target`."""

    path: str
    target: str | None = None


@record
class WorldPlan:
    """Everything one world is made of, as host paths; `layout_argv` turns it into bwrap's words."""

    top: str                          # the person's repository top: where the workspace appears
    workspace: str                    # the task's workspace on the host
    home: str                         # the person's $HOME path: private and empty inside
    cwd: str                          # where the command starts, inside
    system: tuple[SystemEntry, ...] = ()
    readable: tuple[str, ...] = ()    # read-only at their own path
    writable: tuple[str, ...] = ()    # read-write at their own path (the dispatch directory)
    environment: tuple[str, ...] = () # names under `top` bound read-only from the person's checkout
    person_files: tuple[str, ...] = ()  # untracked dirs under `top` holding the program the person named
    objects: str = ""                 # the person's objects dir, "" for none
    alternates: str = ""              # a host file naming OBJECTS_INSIDE, laid over the workspace's
    masked: tuple[str, ...] = ()      # files hidden behind an empty file
    network: bool = False             # share the host's network: never in a failres world (`network.py`)
    setenv: tuple[tuple[str, str], ...] = field(default=())
    bridge: str = ""                  # the host directory of the bridge's sockets, "" for none
    launcher: tuple[str, ...] = ()    # the forwarder's words, run before `argv`
    uid: int = NOBODY                 # the caller's ids on the host (os.getuid(), os.getgid())
    gid: int = NOBODY


def layout_argv(plan: WorldPlan, bwrap: str, argv: Sequence[str]) -> list[str]:
    """The bubblewrap command that runs `argv` inside the world `plan` describes."""
    words = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", *isolation_words(plan.uid, plan.gid)]
    if not plan.network:
        words.append("--unshare-net")
    for entry in plan.system:
        if entry.target is not None:
            words += ["--symlink", entry.target, entry.path]
        else:
            words += ["--ro-bind", entry.path, entry.path]
    words += ["--dev", "/dev", "--proc", "/proc"]
    for scratch in PRIVATE_SCRATCH:
        words += ["--tmpfs", scratch]
    if plan.home and plan.home != "/" and not _within_any(plan.home, [e.path for e in plan.system]):
        words += ["--tmpfs", plan.home]
    for path in ordered(plan.readable):
        words += ["--ro-bind-try", path, path]
    words += ["--bind", plan.workspace, plan.top]
    if plan.workspace != plan.top:
        words += ["--bind", plan.workspace, plan.workspace]
    for name in plan.environment:
        inside = posixpath.join(plan.top, name)
        words += ["--ro-bind-try", inside, inside]
    for path in ordered(plan.person_files):
        words += ["--ro-bind-try", path, path]
    if plan.objects and plan.alternates:
        words += ["--ro-bind", plan.objects, OBJECTS_INSIDE,
                  "--ro-bind-try", plan.alternates, posixpath.join(plan.top, ALTERNATES_INSIDE)]
    for path in sorted(dict.fromkeys(plan.writable), key=lambda p: (p.count("/"), p)):
        words += ["--bind", path, path]
    for path in plan.masked:
        words += ["--ro-bind-try", "/dev/null", path]
    for name, value in plan.setenv:
        words += ["--setenv", name, value]
    words += network_words(plan)
    words += ["--chdir", plan.cwd, "--", *plan.launcher, *argv]
    return words


def network_words(plan: WorldPlan) -> list[str]:
    """The bridge's socket directory, read-only inside (a unix socket connects all the same)."""
    return ["--ro-bind", plan.bridge, NET_INSIDE] if plan.bridge else []


def isolation_words(uid: int, gid: int) -> list[str]:
    """The namespaces and the dropped privilege every world has, for a caller of these host ids.

    The seat's user namespace maps exactly the caller's ids (to themselves, or root's to
    `NOBODY`): what it writes is the caller's on the host, and every other uid's files are
    open to it only as far as their mode bits say. `--cap-drop ALL` matters under root
    only (bubblewrap drops them for anyone else anyway), and is given always so the world
    is the same whoever starts it. The probe starts its trial world with these words.
    """
    inside_uid, inside_gid = (NOBODY, NOBODY) if uid == 0 else (uid, gid)
    return ["--unshare-user", "--uid", str(inside_uid), "--gid", str(inside_gid), "--cap-drop", "ALL",
            "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]


def ordered(paths: Sequence[str]) -> list[str]:
    """Distinct paths, parents before children, none below another (a bound parent shows it already).

    Binding a path again below a read-only bind would make bubblewrap create a mount
    point in a read-only tree, which it cannot.
    """
    out: list[str] = []
    for path in sorted(dict.fromkeys(posixpath.normpath(p) for p in paths), key=lambda p: (p.count("/"), p)):
        if not any(within(path, parent) for parent in out):
            out.append(path)
    return out


def within(path: str, parent: str) -> bool:
    """Is `path` `parent` or below it (plain path arithmetic, both absolute)?"""
    path, parent = posixpath.normpath(path), posixpath.normpath(parent)
    return parent == "/" or path == parent or path.startswith(parent + "/")


def _within_any(path: str, parents: Sequence[str]) -> bool:
    return any(within(path, parent) for parent in parents)
