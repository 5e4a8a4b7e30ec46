"""Reading TOML documents into frozen dataclasses from declarations, strictly.

Each table of a document is a frozen dataclass whose fields say, through
`setting(...)`, how their key is read: the kind of value, the default, and the TOML
key when it is not a Python name. One reader walks those declarations, so a new
section is a new dataclass and one more field on its parent, never another
hand-written parser; the example configuration is checked against the same
declarations, so documentation and reader cannot drift apart.

Every problem is raised as `Invalid` with the key path it concerns; the caller adds
the file name and turns it into the one-line `ConfigError` a person sees.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Protocol

from lessons.frozen import record
from failres.errors import ConfigError

KeyPath = tuple[str | int, ...]

_SETTING = "failres.setting"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_POSITION = re.compile(r"\s*\((at line (\d+), column (\d+)|at end of document)\)$")


class Invalid(Exception):
    """One value in a document is wrong: `path` says where, the message what."""

    def __init__(self, path: KeyPath, problem: str, *, hint: str | None = None) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem
        self.hint = hint


class Kind(Protocol):
    """How one key's raw TOML value is checked and turned into its Python value."""

    expected: ClassVar[str]

    def read(self, raw: object, path: KeyPath) -> object: ...


@record
class Setting:
    """What a dataclass field declares about its TOML key."""

    kind: Kind
    key: str | None = None


def setting(default: Any = dataclasses.MISSING, *, kind: Kind, key: str | None = None,
            factory: Callable[[], Any] | None = None) -> Any:
    """A dataclass field read from TOML as `kind`; no default and no factory means required."""
    metadata = {_SETTING: Setting(kind=kind, key=key)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _declared(cls: type) -> list[tuple[str, dataclasses.Field, Setting]]:
    """(TOML key, field, setting) for every field of `cls` that is read from TOML."""
    declared = []
    for field in dataclasses.fields(cls):
        declared_setting = field.metadata.get(_SETTING)
        if declared_setting is not None:
            declared.append((declared_setting.key or field.name, field, declared_setting))
    return declared


def declared_settings(cls: type) -> list[tuple[str, dataclasses.Field, Setting]]:
    """(TOML key, field, setting) for every key `cls` reads, in declaration order."""
    return _declared(cls)


def _is_required(field: dataclasses.Field) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


# ---- describing values and places for messages ----

def format_path(path: KeyPath) -> str:
    """A key path as a person writes it: `gates.gate0.command`, `taxonomy.rules[0].class`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        shown = part if _BARE_KEY.fullmatch(part) else '"' + part.replace('"', '\\"') + '"'
        text += f".{shown}" if text else shown
    return text


def _toml_type(raw: object) -> str:
    if isinstance(raw, bool):  # bool before int: True is an int to Python, not to TOML
        return "a boolean"
    names = {int: "an integer", float: "a float", str: "a string", list: "an array", dict: "a table"}
    for python_type, name in names.items():
        if isinstance(raw, python_type):
            return name
    return f"a {type(raw).__name__}"  # dates and times


def _described(raw: object) -> str:
    if isinstance(raw, str):
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        return f'{_toml_type(raw)} ("{shown}")'
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return f"{_toml_type(raw)} ({raw!r})"
    return _toml_type(raw)


def wrong_type(path: KeyPath, expected: str, raw: object) -> Invalid:
    """The error for a value of the wrong TOML type: what was expected, what was given."""
    return Invalid(path, f"expected {expected}, got {_described(raw)}")


def read_list(raw: object, path: KeyPath, expected: str) -> list:
    """`raw` when it is a TOML array; the wrong-type error otherwise."""
    if not isinstance(raw, list):
        raise wrong_type(path, expected, raw)
    return raw


def suggestion(wrong: str, known: list[str], noun: str) -> str | None:
    """A hint for a misspelt name: the nearest known one, else the list of known ones."""
    import difflib  # only for a name that was misspelt

    close = difflib.get_close_matches(wrong, known, n=1)
    if close:
        return f'did you mean "{close[0]}"?'
    if known:
        return f"known {noun}s: " + ", ".join(known)
    return None


# ---- tables within tables (read by calling back into the reader) ----

@record
class Section:
    """A table read into the frozen dataclass `cls`."""

    expected: ClassVar[str] = "a table"
    cls: type

    def read(self, raw: object, path: KeyPath) -> object:
        if not isinstance(raw, dict):
            raise wrong_type(path, self.expected, raw)
        return read_table(self.cls, raw, path)


@record
class NamedSections:
    """Tables `[parent.NAME]`, each read into `cls` (whose `name` field gets NAME), in file order."""

    expected: ClassVar[str] = "a table of named tables"
    cls: type
    noun: str
    name_pattern: str = r"[A-Za-z0-9_.-]+"
    name_meaning: str = 'use only letters, digits, "_", "." and "-"'

    def read(self, raw: object, path: KeyPath) -> Mapping[str, object]:
        if not isinstance(raw, dict):
            raise wrong_type(path, self.expected, raw)
        entries = {}
        for name, table in raw.items():
            if not re.fullmatch(self.name_pattern, name):
                raise Invalid((*path, name), f'"{name}" is not a valid {self.noun} name: {self.name_meaning}')
            if not isinstance(table, dict):
                raise wrong_type((*path, name), f"a table ([{format_path((*path, name))}])", table)
            entries[name] = read_table(self.cls, table, (*path, name), name=name)
        return MappingProxyType(entries)


@record
class SectionList:
    """An array of tables `[[parent.key]]`, each read into `cls`."""

    expected: ClassVar[str] = "an array of tables"
    cls: type
    min_items: int = 0

    def read(self, raw: object, path: KeyPath) -> tuple[object, ...]:
        items = read_list(raw, path, self.expected)
        if len(items) < self.min_items:
            raise Invalid(path, f"must have at least {self.min_items} [[{format_path(path)}]] table(s)")
        tables = []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise wrong_type((*path, index), "a table", item)
            tables.append(read_table(self.cls, item, (*path, index)))
        return tuple(tables)


_TABLE_KINDS = (Section, NamedSections, SectionList)


# ---- the reader ----

def read_table(cls: type, raw: Mapping[str, object], path: KeyPath, **derived: object) -> Any:
    """An instance of `cls` from the TOML table `raw`; `derived` fills fields not read from TOML."""
    declared = _declared(cls)
    known = [key for key, _, _ in declared]
    for key in raw:
        if key not in known:
            # At the top of a document made only of tables, a stray name is a section,
            # or a key that was meant to go inside one.
            if not path and all(isinstance(s.kind, _TABLE_KINDS) for _, _, s in declared):
                problem = "unknown section" if isinstance(raw[key], dict) else "a key outside any section"
                raise Invalid((key,), problem, hint=suggestion(key, known, "section"))
            raise Invalid((*path, key), "unknown key", hint=suggestion(key, known, "key"))
    values = dict(derived)
    for key, field, declared_setting in declared:
        if key in raw:
            values[field.name] = declared_setting.kind.read(raw[key], (*path, key))
        elif _is_required(field):
            raise Invalid((*path, key), "missing required key")
    return cls(**values)


def key_paths(cls: type) -> tuple[str, ...]:
    """Every key `cls` declares, dotted: `gates.*.command`, `taxonomy.rules[].class`."""
    paths = []
    for key, _, declared_setting in _declared(cls):
        kind = declared_setting.kind
        if isinstance(kind, Section):
            paths.extend(f"{key}.{inner}" for inner in key_paths(kind.cls))
        elif isinstance(kind, NamedSections):
            paths.extend(f"{key}.*.{inner}" for inner in key_paths(kind.cls))
        elif isinstance(kind, SectionList):
            paths.extend(f"{key}[].{inner}" for inner in key_paths(kind.cls))
        else:
            paths.append(key)
    return tuple(paths)


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """The TOML document in `text`; ConfigError naming `source`, line and column if malformed."""
    # Imported here: a repository without `.failres.toml` (its defaults) never compiles the parser's patterns.
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:  # arrays or inline tables nested past the parser's stack
        msg = f"{source}: malformed TOML: nested too deeply to read"
        raise ConfigError(msg) from None
    except tomllib.TOMLDecodeError as error:
        reason = str(error)
        position = _TOML_POSITION.search(reason)
        where = "at end of document"
        if position is not None:
            reason = reason[: position.start()]
            if position.group(2):
                where = f"line {position.group(2)}, column {position.group(3)}"
        msg = f"{source}: {where}: malformed TOML: {reason}"
        raise ConfigError(msg) from None


_MAX_TOML_BYTES = 8 * 1024 * 1024


def read_text_file(path: Path, source: str) -> str:
    """The UTF-8 text of a TOML file; ConfigError naming `source` when it cannot be read.

    Only a regular file is read: a FIFO or a device (a link to /dev/zero) would block or
    never end, and a file beyond a few megabytes is no configuration or plan.
    """
    import stat as stat_module

    try:
        info = path.stat()
        if not stat_module.S_ISREG(info.st_mode):
            raise ConfigError(f"{source}: cannot be read (not a regular file)")
        if info.st_size > _MAX_TOML_BYTES:
            raise ConfigError(f"{source}: cannot be read (larger than {_MAX_TOML_BYTES // (1024 * 1024)} MiB)")
        return path.read_bytes().decode("utf-8").removeprefix("\ufeff")  # an editor's byte-order mark
    except UnicodeDecodeError as error:
        msg = f"{source}: not UTF-8 text (byte {error.start})"
        raise ConfigError(msg) from None
    except OSError as error:
        msg = f"{source}: cannot be read ({error.strerror})"
        raise ConfigError(msg) from None


def config_error(source: str, invalid: Invalid) -> ConfigError:
    """The one-line error a person sees: file, dotted key, problem."""
    where = format_path(invalid.path)
    msg = f"{source}: {where}: {invalid.problem}" if where else f"{source}: {invalid.problem}"
    return ConfigError(msg, hint=invalid.hint)
