"""Nothing failres or lessons does removes a file under an `objects/` directory but the few
removals read here, each of something that is not the person's object: a forgery, a temporary
file, a task's own directory.

A clean-up once removed "fresh" loose blobs of a task from the person's database; another task
had committed the same bytes, and `git fsck` said `missing blob`. Every function that both
speaks of objects (a name or a string holding "objects") and removes a file is listed below
with why it may; a new one fails here until a reader has looked at it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

# module:function -> what it removes, and why that is never an object of the person's.
VETTED = {
    "failres.gitops.verify:set_aside_forged":
        "a loose file whose bytes were just read and do not hash to its name: a forgery, no object",
    "failres.gitops.verify:set_aside_broken_pack":
        "a pack `git verify-pack` refuses, new since a dispatch began: what a seat wrote",
    "failres.gitops.workspace:Workspace.remove":
        "the task's workspace and its state beside the private index, the task's own object directory among it",
    "failres.gitops.workspace:Workspace.reset_seat_git":
        "the seat's own `.git` in the workspace, whose objects are the seat's",
    "failres.gitops.workspace:Workspace.capture":
        "the scratch object directory a snapshot is hashed into before redaction",
    "failres.gitops.workspace_files:claim_workspace_path":
        "a leftover workspace of this repository (its alternates are compared, never removed)",
    "lessons.storage.packs:write_pack":
        "its own temporary files, before either became a pack",
}

_REMOVING_METHODS = {"unlink", "rmdir"}
_REMOVING_FUNCTIONS = {("os", "remove"), ("os", "unlink"), ("os", "rmdir"), ("os", "removedirs"),
                       ("shutil", "rmtree"), ("beneath", "remove_file"), (None, "remove_tree"),
                       (None, "rmtree")}


def _speaks_of_objects(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "objects" in sub.value:
            return True
        if isinstance(sub, ast.Name) and "objects" in sub.id.lower():
            return True
        if isinstance(sub, ast.Attribute) and "objects" in sub.attr.lower():
            return True
    return False


def _removes(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return (None, func.id) in _REMOVING_FUNCTIONS
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if owner is not None and (owner, func.attr) in _REMOVING_FUNCTIONS:
        return True
    return func.attr in _REMOVING_METHODS and owner not in ("os", "shutil")


def removals_under_objects(root: Path) -> dict[str, list[int]]:
    """module:function -> lines of each call that removes a file, in functions that speak of objects."""
    found: dict[str, list[int]] = {}
    for package in ("failres", "lessons"):
        for path in sorted((root / package).rglob("*.py")):
            module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")

            def visit(node: ast.AST, prefix: str) -> None:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.ClassDef):
                        visit(child, f"{prefix}{child.name}.")
                    elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        name = f"{prefix}{child.name}"
                        if _speaks_of_objects(child):
                            lines = [call.lineno for call in ast.walk(child)
                                     if isinstance(call, ast.Call) and _removes(call)]
                            if lines:
                                found[f"{module}:{name}"] = lines
                        visit(child, f"{name}.")
                    else:
                        visit(child, prefix)

            visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_every_removal_beside_objects_is_one_a_reader_vetted():
    found = removals_under_objects(ROOT)
    new = {name: lines for name, lines in found.items() if name not in VETTED}
    assert not new, (f"these remove files in code that speaks of objects: {new}; the person's objects/ only "
                     "grows (write a task's objects into its own directory), or add it to VETTED with why")


def test_the_scan_finds_a_removal_of_a_loose_object_built_from_objects(tmp_path: Path):
    """The clean-up of the incident, as it was written, is found (the scan is no test that cannot fail)."""
    module = tmp_path / "failres" / "gitops" / "cleanup.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "def drop_unnamed(git_dir, fresh):\n"
        "    for oid in fresh:\n"
        "        (git_dir / 'objects' / oid[:2] / oid[2:]).unlink()\n"
        "\n"
        "def verify(git_dir, oid):\n"
        "    loose = git_dir / 'objects' / oid[:2] / oid[2:]\n"
        "    os.unlink(loose)\n"
        "\n"
        "def harmless(path):\n"
        "    path.unlink()\n")
    (tmp_path / "lessons").mkdir()
    assert removals_under_objects(tmp_path) == {"failres.gitops.cleanup:drop_unnamed": [3],
                                                "failres.gitops.cleanup:verify": [7]}


def test_every_vetted_removal_is_still_there():
    """A vetted name that no longer removes anything is taken off the list, so the list stays true."""
    assert sorted(set(VETTED) - set(removals_under_objects(ROOT))) == []
