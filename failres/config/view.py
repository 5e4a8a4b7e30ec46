"""`git failres config show`: every setting in force, and where its value came from.

A person debugging "why did it do that?" needs the values the engine actually used,
not the file (which omits defaults) nor the example (which shows only defaults).
`settings_in_force` walks the same declarations the reader uses, so a key added to a
section appears here without being listed twice. Pure: the file's raw table and the
environment are passed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lessons.frozen import record
from failres.config.model import CONFIG_FILE, Config
from failres.config.loading import SANDBOX_MODE_VARIABLE, effective_policy_of
from failres.config.kinds import Duration
from failres.config.schema import NamedSections, Section, SectionList, declared_settings, format_path
from failres.config.durations import format_duration


@record
class SettingInForce:
    """One key: its value as TOML would spell it, and whether it came from the file, the
    environment or the default."""

    key: str
    value: Any
    source: str  # "default", "file" or "env"
    origin: str = ""  # the file, or the environment variable; "" for a default

    def document(self) -> dict[str, object]:
        return {"key": self.key, "value": self.value, "source": self.source, "from": self.origin}


def _redacted(row: SettingInForce) -> SettingInForce:
    # A binding's env table may hold a token; what is printed goes to terminals, logs and
    # bug reports, so it is redacted like every record.
    from dataclasses import replace

    from lessons.redaction.redact import redact_value

    return replace(row, value=redact_value({row.key.rsplit(".", 1)[-1]: row.value})[row.key.rsplit(".", 1)[-1]])


def _toml_value(value: Any, kind: object, raw: object, from_file: bool) -> Any:
    """The value as a person would write it: durations in the file's own spelling."""
    if isinstance(kind, Duration):
        return raw if from_file and isinstance(raw, str) else format_duration(float(value))
    if isinstance(value, Mapping):
        return {str(k): _toml_value(v, None, None, False) for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset)):
        return [_toml_value(v, None, None, False) for v in value]
    return value


def _walk(instance: object, raw: Mapping[str, Any] | None, path: tuple, file: str) -> list[SettingInForce]:
    rows: list[SettingInForce] = []
    for key, field, declared in declared_settings(type(instance)):
        kind = declared.kind
        value = getattr(instance, field.name)
        raw_value = raw.get(key) if isinstance(raw, Mapping) else None
        here = (*path, key)
        if isinstance(kind, Section):
            rows += _walk(value, raw_value if isinstance(raw_value, Mapping) else None, here, file)
        elif isinstance(kind, NamedSections):
            if not value:
                rows.append(SettingInForce(format_path(here), {}, "default"))
            for name, entry in value.items():
                entry_raw = raw_value.get(name) if isinstance(raw_value, Mapping) else None
                rows += _walk(entry, entry_raw, (*here, name), file)
        elif isinstance(kind, SectionList):
            if not value:
                rows.append(SettingInForce(format_path(here), [], "default"))
            for index, entry in enumerate(value):
                entry_raw = raw_value[index] if isinstance(raw_value, list) and index < len(raw_value) else None
                rows += _walk(entry, entry_raw, (*here, index), file)
        else:
            from_file = isinstance(raw, Mapping) and key in raw
            rows.append(SettingInForce(format_path(here), _toml_value(value, kind, raw_value, from_file),
                                       "file" if from_file else "default", file if from_file else ""))
    return rows


def settings_in_force(config: Config, raw: Mapping[str, Any], environ: Mapping[str, str]) -> list[SettingInForce]:
    """Every key of `config` in file order of sections, the knowledge policy with its overrides."""
    rows = [row for row in _walk(config, raw, (), config.source) if not row.key.startswith("policy.")]
    if environ.get(SANDBOX_MODE_VARIABLE):  # `config` holds the mode the variable made (see `load_config`)
        rows = [SettingInForce(row.key, row.value, "env", SANDBOX_MODE_VARIABLE) if row.key == "sandbox.mode" else row
                for row in rows]
    policy = effective_policy_of(config, environ)
    for row in policy.rows():
        source, origin = str(row["source"]), str(row["from"] or "")
        rows.append(SettingInForce(f"policy.{row['key']}", row["value"], source,
                                   config.source if source == "file" else origin))
    order = [key for key, _, _ in declared_settings(Config)]
    return [_redacted(row) for row in sorted(rows, key=lambda r: order.index(r.key.split(".")[0].split("[")[0]))]


@record
class ConfigInForce:
    path: Path
    exists: bool
    settings: list[SettingInForce]

    def document(self) -> dict[str, object]:
        return {"config": str(self.path), "exists": self.exists,
                "settings": [setting.document() for setting in self.settings]}


def config_in_force(top: Path, config: Config, environ: Mapping[str, str]) -> ConfigInForce:
    """The edge: reads the file's raw table (the loaded `config` says what it means)."""
    from failres.config.schema import parse_toml, read_text_file

    path = top / CONFIG_FILE
    raw = parse_toml(read_text_file(path, str(path)), str(path)) if path.is_file() else {}
    return ConfigInForce(path, path.is_file(), settings_in_force(config, raw, environ))
