"""What runs on the host on a task's behalf sits in `failres/hostside/`, and reaches the file system
through one door: `hostside/files.py`, whose readers refuse a link at every component below a
trusted root. No other module of the room opens, lists, stats, links or resolves a path itself,
so none can be led by a link a seat planted in a workspace or a dispatch directory."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

ROOM = ROOT / "failres" / "hostside"
DOOR = "files.py"
# Path and os calls that open, list, stat, link, resolve or write what a name leads to.
PATH_METHODS = frozenset({"open", "read_text", "read_bytes", "write_text", "write_bytes", "glob", "rglob", "iterdir",
                          "is_file", "is_dir", "exists", "is_symlink", "stat", "lstat", "readlink", "resolve",
                          "mkdir", "symlink_to", "unlink", "touch", "samefile", "chmod", "rmdir", "walk"})
MODULE_CALLS = {"os": "*", "shutil": "*", "glob": "*", "io": {"open"}, "pathlib": "*", "tempfile": "*"}
MODULES_NOT_IMPORTED = frozenset({"failres.beneath", "shutil", "glob", "tempfile", "io"})


def file_system_reaches(source: str) -> list[str]:
    """Each call in `source` that reaches the file system other than through the door (pure)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("open", "exec", "eval", "__import__"):
                found.append(f"line {node.lineno}: {func.id}()")
            elif isinstance(func, ast.Attribute):
                owner = func.value
                if isinstance(owner, ast.Name) and owner.id in MODULE_CALLS:
                    allowed = MODULE_CALLS[owner.id]
                    if allowed == "*" and owner.id == "os" and func.attr in ("fspath", "fsdecode", "fsencode"):
                        continue
                    if owner.id == "os" and isinstance(owner, ast.Name) and func.attr == "path":
                        continue
                    if allowed == "*" or func.attr in allowed:
                        found.append(f"line {node.lineno}: {owner.id}.{func.attr}()")
                elif (isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name)
                      and owner.value.id == "os" and owner.attr == "path"
                      and func.attr not in ("join", "normpath", "dirname", "basename", "isabs", "relpath", "sep")):
                    found.append(f"line {node.lineno}: os.path.{func.attr}()")
                elif func.attr in PATH_METHODS:
                    found.append(f"line {node.lineno}: .{func.attr}()")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name in MODULES_NOT_IMPORTED]
        elif isinstance(node, ast.ImportFrom):
            name = node.module or ""
            if name in MODULES_NOT_IMPORTED or (name == "failres" and any(a.name == "beneath" for a in node.names)):
                found.append(f"line {node.lineno}: from {name} import ...")
    return found


def test_nothing_in_the_host_side_room_reaches_a_file_but_through_its_one_door():
    reaching = {path.name: file_system_reaches(path.read_text(encoding="utf-8"))
                for path in sorted(ROOM.glob("*.py")) if path.name != DOOR}
    assert {name: found for name, found in reaching.items() if found} == {}


def test_the_check_finds_a_module_that_opens_a_path_itself():
    planted = ("import os\nfrom pathlib import Path\nfrom failres import beneath\n"
               "def f(p):\n    Path(p).read_text()\n    os.open(p, 0)\n    open(p)\n    os.path.realpath(p)\n"
               "    for c in Path(p).glob('*'): pass\n")
    assert file_system_reaches(planted) == [
        "line 3: from failres import ...", "line 5: .read_text()", "line 6: os.open()", "line 7: open()",
        "line 8: os.path.realpath()", "line 9: .glob()"]
    assert file_system_reaches("import os\ndef f(p):\n    return os.path.join(p, 'x'), os.fspath(p)\n") == []


def test_the_door_reads_beneath_a_root_with_the_readers_that_refuse_links():
    """The door's workspace and dispatch readers stand on `beneath`, whose every step is `O_NOFOLLOW`."""
    door = (ROOM / DOOR).read_text(encoding="utf-8")
    assert "from failres import beneath" in door
    for reader in ("read_beneath", "files_beneath", "executable_beneath", "link_beneath", "is_link_beneath"):
        body = door.split(f"def {reader}(", 1)[1].split("\ndef ", 1)[0]
        assert "beneath." in body, reader
        assert "follow_symlinks=True" not in body and "realpath" not in body, reader


def test_the_room_is_where_the_engine_reaches_the_host_side_from(tmp_path: Path):
    """The engine's seat and probe steps call the room; none of its shell parts stayed behind elsewhere."""
    engine = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "failres").rglob("*.py")
                       if ROOM not in p.parents)
    for name in ("def carry_back_logins", "def prepare_agent_homes", "def find_transcripts", "def probe_binding"):
        assert name not in engine, name
