"""The house stays as drawn: rooms that stand on each other without circles, modules a reader
can hold in their head, each importable on its own, each room saying what it holds, the
library's rooms naming their public modules, and `lessons` free of `failres`."""

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


def packages() -> dict[str, Path]:
    """Every package of the project, nested ones too: dotted name -> its folder."""
    return {name: path.parent for name, path in modules().items() if path.name == "__init__.py"}


def room_of(name: str) -> str:
    """The room a module lives in: the package right under `failres` or `lessons` (or the
    top-level module itself)."""
    return ".".join(name.split(".")[:2])


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for name, targets in graph.items():
        rooms.setdefault(room_of(name), set()).update(room_of(t) for t in targets if room_of(t) != room_of(name))
    for targets in list(rooms.values()):
        for target in targets:
            rooms.setdefault(target, set())
    return rooms


def test_the_rooms_stand_on_each_other_without_circles() -> None:
    """Not only modules: no room of `failres/` or `lessons/` imports one that imports it back,
    so each can be read standing on the ones below it."""
    assert circles(room_graph(import_graph())) == []


def test_the_rooms_are_the_ones_the_architecture_document_draws() -> None:
    document = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    folders = sorted(path.relative_to(ROOT).as_posix() for name, path in packages().items() if "." in name)
    assert [folder for folder in folders if f"`{folder}/`" not in document] == []


def test_every_room_says_what_it_holds() -> None:
    """A package's `__init__` opens with a docstring: the story of the room, read first."""
    silent = [name for name, path in packages().items()
              if not ast.get_docstring(ast.parse((path / "__init__.py").read_text(encoding="utf-8")))]
    assert silent == []


def public_modules(package: Path) -> list[str] | None:
    for node in ast.parse((package / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def bound_in(package: Path) -> set[str]:
    """The names a package's `__init__` binds itself (what it imports or defines)."""
    names: set[str] = set()
    for node in ast.parse((package / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def test_the_library_rooms_name_their_public_modules_and_are_entered_through_them() -> None:
    """Each package of `lessons` lists its public modules in `__all__`; a module outside the
    package (in `failres`, or another room of the library) imports only those. The rest are
    the package's own, free to change without anyone else noticing."""
    library = {name: path for name, path in packages().items() if name.startswith("lessons")}
    undeclared = sorted(name for name, path in library.items() if public_modules(path) is None)
    assert undeclared == []
    known = modules()
    wrong_names = {name: sorted(set(public_modules(path)) - {m.rpartition(".")[2] for m in known
                                                              if m.rpartition(".")[0] == name} - bound_in(path))
                   for name, path in library.items()}
    assert {name: found for name, found in wrong_names.items() if found} == {}
    reached_inside = set()
    for importer, targets in import_graph().items():
        for target in targets:
            package, _, module = target.rpartition(".")
            inside = importer == package or importer.startswith(package + ".")
            if package in library and target not in library and not inside:
                if module not in public_modules(library[package]):
                    reached_inside.add(f"{importer} -> {target}")
    assert sorted(reached_inside) == []


def test_the_tests_live_in_folders_named_for_the_rooms_they_check() -> None:
    """tests/<room>/ holds the tests of failres/<room>/, tests/library/<room>/ those of
    lessons/<room>/ (a folder named `lessons` under tests/ would stand for the package on the
    import path); tests/house/ checks the project as a whole, tests/data/ is their data."""
    tests = ROOT / "tests"
    folders = sorted(p.parent.relative_to(tests).as_posix() for p in tests.rglob("test_*.py") if p.parent != tests)
    rooms = {path.relative_to(ROOT).as_posix() for path in packages().values()}

    def room(folder: str) -> str:
        return "lessons" + folder[len("library"):] if folder.split("/")[0] == "library" else f"failres/{folder}"

    assert sorted({f for f in folders if f != "house" and room(f) not in rooms}) == []


def test_every_import_names_a_module_where_it_is_now() -> None:
    """The project's own code, tests and benchmarks import each module by its present name:
    an old name would still load (through `lessons.moved`, for other harnesses), and hide from
    every check above which room it reaches."""
    known = modules()
    rooms = packages()
    stale = set()
    files = [p for top in ("failres", "lessons", "tests", "bench") for p in (ROOT / top).rglob("*.py")]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
                if node.module in rooms:
                    names += [f"{node.module}.{alias.name}" for alias in node.names
                              if alias.name not in bound_in(rooms[node.module])]
            else:
                continue
            stale.update(f"{path.relative_to(ROOT)}: {name}" for name in names
                         if name.split(".")[0] in PACKAGES and name not in known)
    assert sorted(stale) == []


# The single modules each root keeps beside its packages, and why (docs/architecture.md says more).
SINGLE_MODULES = {
    "failres": {"__main__", "errors", "journal", "beneath", "inert", "initialise", "hookrun"},
    "lessons": {"errors", "failpoints", "frozen", "jsontext", "moved", "terminal"},
}


def test_the_roots_hold_packages_and_only_the_single_modules_the_map_explains() -> None:
    """A new module goes into the package whose story it belongs to; one at the top of
    `failres/` or `lessons/` is a room nobody drew."""
    loose = {root: sorted(p.stem for p in (ROOT / root).glob("*.py") if p.stem != "__init__") for root in PACKAGES}
    assert {root: [m for m in found if m not in SINGLE_MODULES[root]] for root, found in loose.items()} == \
        {root: [] for root in PACKAGES}
