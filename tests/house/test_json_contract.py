"""The JSON contract: every `--json` shape is documented in docs/json.md, carries its
schemaVersion, and names its fields by one rule (records keep their stored names)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, run_failres
from failres.cli.help_cmds import description

DOC = (ROOT / "docs" / "json.md").read_text()
CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")


def sections() -> dict[str, str]:
    """Heading line -> the text under it, for every `###` heading of docs/json.md."""
    parts = re.split(r"^### (.*)$", DOC, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def section_for(path: tuple[str, ...], flags: tuple[str, ...] = ()) -> str:
    """The section whose heading names the command (`git failres lessons list|show --json`),
    the one naming the options used when there are several (`run PLAN --dry-run`)."""
    found = []
    for heading, text in sections().items():
        words = re.findall(r"[a-z][a-z-]*", heading)
        if f"git failres {path[0]}" in heading and all(word in words for word in path[1:]):
            found.append((sum(flag in heading for flag in flags), text))
    if not found:
        raise AssertionError(f"docs/json.md has no section for git failres {' '.join(path)}")
    return max(found, key=lambda f: f[0])[1]


def test_every_command_with_json_output_has_its_section() -> None:
    with_json = [c.path for c in description().walk() if not c.hidden and c.option("--json") is not None]
    assert len(with_json) > 30
    for path in with_json:
        section_for(path)


@pytest.fixture(scope="module")
def demo(kept_demo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo's repository, with a fact: every kind of record."""
    import shutil

    root = tmp_path_factory.mktemp("contract") / "demo"
    shutil.copytree(kept_demo, root, symlinks=True)
    assert run_failres(root, "facts", "set", "judge", "command", "pytest -q").returncode == 0
    return root


def lesson_id(demo: Path) -> str:
    return json.loads(run_failres(demo, "lessons", "list", "--json").stdout)[0]["id"]


# (the command's words, the keys under which records or free data sit: their insides are
# not failres's composed fields, so the casing rule does not reach them)
COMMANDS = [
    (("status",), ()),
    (("journal", "demo"), ("*",)),
    (("lessons", "list"), ("*",)),
    (("lessons", "show", "{lesson}"), ("*",)),
    (("lessons", "relevant", "--fail-class", "gate-not-green-after-fixer"), ("*",)),
    (("decisions",), ("answer",)),
    (("report",), ()),
    (("policy", "show"), ("value",)),
    (("policy", "validate"), ()),
    (("rules",), ("domains",)),
    (("facts", "list"), ("*",)),
    (("facts", "timeline", "judge", "command"), ("*",)),
    (("consolidate", "--dry-run", "--all"), ()),
    (("gc", "--dry-run"), ()),
    (("doctor",), ()),
    (("config", "show"), ("value",)),
    (("run", ".failres-demo/plan.toml", "--dry-run"), ()),
    (("version",), ()),
    (("label",), ()),
    (("proposals", "list"), ("*",)),
    (("prompt", "demo", "t1", "--mode", "fix"), ()),
]


def run_json(demo: Path, words: tuple[str, ...]) -> object:
    args = [w.replace("{lesson}", lesson_id(demo)) for w in words]
    proc = run_failres(demo, *args, "--json")
    assert proc.returncode == 0, (args, proc.stderr)
    return json.loads(proc.stdout)


def objects(document: object) -> list[dict]:
    return [document] if isinstance(document, dict) else [d for d in document if isinstance(d, dict)]  # type: ignore[union-attr]


def command_path(words: tuple[str, ...]) -> tuple[str, ...]:
    from failres.clidoc.model import find_command

    return find_command(description(), words)[0].path


@pytest.mark.parametrize(("words", "records"), COMMANDS, ids=[" ".join(c[0][:2]) for c in COMMANDS])
def test_every_printed_field_is_documented_and_versioned(demo: Path, words: tuple[str, ...],
                                                         records: tuple[str, ...]) -> None:
    document = run_json(demo, words)
    text = section_for(command_path(words), tuple(w for w in words if w.startswith("--")))
    for item in objects(document):
        assert item["schemaVersion"] == 1
        for key in item:
            if key == "schemaVersion":
                continue
            if "*" in records and key not in ("id", "ts", "slug", "task", "type"):
                continue  # a record's own fields: docs/store.md; the contract's are checked below
            assert f"`{key}`" in text, f"{' '.join(words)}: `{key}` is not in docs/json.md"


def composed_keys(value: object, skip: tuple[str, ...]) -> list[str]:
    """Every key failres composed, not descending into records or free data."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            found.append(key)
            if key not in skip:
                found += composed_keys(inner, skip)
    elif isinstance(value, list):
        for inner in value:
            found += composed_keys(inner, skip)
    return found


@pytest.mark.parametrize(("words", "records"), [c for c in COMMANDS if "*" not in c[1]],
                         ids=[" ".join(c[0][:2]) for c in COMMANDS if "*" not in c[1]])
def test_composed_fields_are_camel_case(demo: Path, words: tuple[str, ...], records: tuple[str, ...]) -> None:
    bad = sorted({k for k in composed_keys(run_json(demo, words), records) if not CAMEL.match(k)})
    assert bad == [], f"{' '.join(words)} prints {bad}"


def test_lessons_keep_their_interchange_names(demo: Path) -> None:
    [lesson, *_] = run_json(demo, ("lessons", "list"))  # type: ignore[misc]
    contract = {"id", "ts", "slug", "task", "failClass", "signature", "package", "message", "snapshotBundle",
                "intHead", "resolved_by", "resolved_at"}
    assert contract <= set(lesson)
    text = section_for(("lessons", "list"))
    assert all(f"`{field}`" in text for field in contract)


def test_an_unknown_id_is_exit_2_with_empty_stdout(demo: Path) -> None:
    for args in (["lessons", "show", "abcd1234"], ["decide", "abcd1234", "--answer-json", "{}"],
                 ["proposals", "show", "abcd1234"], ["journal", "nope"], ["status", "nope"]):
        proc = run_failres(demo, *args, "--json")
        assert proc.returncode == 2, args
        assert proc.stdout == "" and proc.stderr.startswith("error: "), args


def test_prompt_json_is_the_prompt_printed_exactly(demo: Path) -> None:
    printed = run_failres(demo, "prompt", "demo", "t1", "--mode", "fix")
    document = run_json(demo, ("prompt", "demo", "t1", "--mode", "fix"))
    assert printed.returncode == 0 and printed.stdout
    assert document == {"slug": "demo", "task": "t1", "mode": "fix", "prompt": printed.stdout, "schemaVersion": 1}
