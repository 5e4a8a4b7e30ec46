"""The house stays as drawn: rooms that stand on each other without circles, modules a reader
can hold in their head, each importable on its own, and `lessons` free of `failres`."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

PACKAGES = ("failres", "lessons")
# "A module a reader can hold in their head": about 400 lines; past this it is two modules.
MAX_LINES = 425


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imported_by(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports, at module level or inside functions; not those it
    names only for type checking (an `if TYPE_CHECKING:` block runs nothing)."""
    found: set[str] = set()

    class Imports(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                for child in node.orelse:
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)

    Imports().visit(ast.parse(path.read_text(encoding="utf-8")))
    edges = set()
    for target in found:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported_by(name, path, set(known)) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other round a circle (Tarjan's strong components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert circles(import_graph()) == []


def test_the_circle_check_finds_a_circle_when_there_is_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_the_lessons_library_never_imports_failres() -> None:
    graph = import_graph()
    reaching = {name: sorted(t for t in targets if t.startswith("failres"))
                for name, targets in graph.items() if name.startswith("lessons")}
    assert {name: found for name, found in reaching.items() if found} == {}


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_every_module_imports_on_its_own() -> None:
    """Each module is imported in turn with every project module forgotten first, so none
    works only because another happened to be imported before it."""
    names = sorted(name for name in modules() if not name.endswith("__main__"))
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        f"for name in {names!r}:\n"
        "    for loaded in [m for m in sys.modules if m.split('.')[0] in ('failres', 'lessons')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as error:\n"
        "        failed.append(f'{name}: {type(error).__name__}: {error}')\n"
        "print('\\n'.join(failed))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_rooms_are_the_ones_the_architecture_document_draws() -> None:
    rooms = sorted(p.name for p in (ROOT / "failres").iterdir() if (p / "__init__.py").is_file())
    document = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert [room for room in rooms if f"`failres/{room}/`" not in document] == []
