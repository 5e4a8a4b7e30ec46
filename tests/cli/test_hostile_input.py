"""Whatever a person or a tool feeds failres, the answer is done (0) or refused (2, one line,
nothing written): never an internal error (3), never a traceback.

Property-based: hypothesis generates configuration files, plans, decision answers and
import lines, half shaped like the real thing (the right keys with wrong, huge, empty,
control-character and NUL-laden values), half anything at all (bytes that are not
UTF-8, TOML or JSON nested thousands deep). Every case runs the real command in a
real repository, and the repository is checked afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import git
from failres.config.model import Config
from failres.config.schema import key_paths
from project import Project

# A few seconds each on a shared machine: every case is a real command in a real repository.
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# ── what is generated ───────────────────────────────────────────────────────

hostile_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from("\x00\x1b\x07\r\n\t\x9b\u202e[]{}/.-_~\\\"'*?:"), max_size=20),
    st.sampled_from(["", " ", "..", "/", "~", "{worktree}", "{nope}", "{", "}", "refs/heads/main", "-x", "@{",
                     "a" * 5000, "../../etc/passwd", "30s", "0s", "999999999999d", "nan", "true", "\u0000"]),
)
scalar = st.one_of(hostile_text, st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1), st.booleans(),
                   st.floats(allow_nan=True, allow_infinity=True), st.datetimes())
toml_value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(hostile_text, inner, max_size=4)),
                          max_leaves=12)

# Keys the reader knows, as (section, key) or (section, name, key) for named tables.
KNOWN = [path.split(".") for path in key_paths(Config)]


def _key_parts(parts: list[str]) -> list[str]:
    return [part.replace("[]", "").replace("*", "check") for part in parts]


@st.composite
def config_documents(draw) -> dict:
    """A document with some real keys (wrong or right values) and some made-up ones."""
    doc: dict = {}
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        parts = _key_parts(draw(st.sampled_from(KNOWN)))
        value = draw(toml_value)
        node = doc
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            node[parts[-1]] = value
    if draw(st.booleans()):
        doc[draw(hostile_text) or "x"] = draw(toml_value)
    return doc


def as_toml(doc: dict) -> bytes | None:
    try:
        return tomli_w.dumps(doc).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):
        return None  # not expressible in TOML: the raw strategy covers the rest


raw_bytes = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.integers(min_value=1, max_value=20000).map(lambda n: b"a = " + b"[" * n + b"]" * n + b"\n"),
)

task_table = st.fixed_dictionaries({}, optional={
    "id": st.one_of(st.just("t1"), hostile_text), "prompt": hostile_text, "title": hostile_text,
    "files": st.one_of(st.lists(hostile_text, max_size=3), hostile_text), "gate": hostile_text,
    "after": st.lists(hostile_text, max_size=2), "extra": toml_value,
})
plan_documents = st.fixed_dictionaries({}, optional={
    "slug": st.one_of(st.just("rr"), hostile_text), "tasks": st.lists(task_table, max_size=3), "other": toml_value})

json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
              hostile_text),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)),
    max_leaves=10)
deep_json = st.integers(min_value=60, max_value=50000).flatmap(
    lambda n: st.sampled_from(["[" * n + "]" * n, '{"a":' * n + "1" + "}" * n, "[" * n]))
answers = st.one_of(
    json_value.map(json.dumps),
    st.dictionaries(st.just("scopeFiles"), st.lists(hostile_text, max_size=3)).map(json.dumps),
    deep_json,
    st.text(max_size=60),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000, '"\\ud800"', '{"a": "\\udfff"}', ""]),
)

LESSON_KEYS = ["ts", "slug", "task", "failClass", "message", "id", "signature", "package", "snapshotBundle",
               "intHead", "resolved_by", "resolved_at", "unexpected"]
lesson_lines = st.one_of(
    st.dictionaries(st.sampled_from(LESSON_KEYS), st.one_of(json_value, st.just("2026-01-02T03:04:05Z")),
                    max_size=8).map(lambda d: json.dumps(d, ensure_ascii=False)),
    st.fixed_dictionaries({"ts": st.just("2026-01-02T03:04:05Z"), "slug": hostile_text, "task": hostile_text,
                           "failClass": hostile_text, "message": hostile_text}).map(json.dumps),
    deep_json,
    st.text(max_size=80),
)
import_files = st.one_of(
    st.lists(lesson_lines, min_size=1, max_size=4).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass")),
    st.binary(max_size=120),
)


# ── the repository and the checks ───────────────────────────────────────────


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """One initialised project with an open decision, reused by every generated case."""
    import os

    from conftest import IDENTITY
    from failres.decisions.records import decision_put, make_decision
    from lessons.storage.records import change_of
    from lessons.storage.store import Store

    saved = {key: os.environ.get(key) for key in IDENTITY}
    os.environ.update(IDENTITY)
    try:
        project = Project.create(tmp_path_factory.mktemp("hostile"))
        project.configure(implementer=[])
        decision = make_decision(slug="rr", task="t1", files=["docs/notes.md"], requests=[])
        Store(project.top).commit(change_of([decision_put(decision)]), "failres: a decision to answer")
        project.decision = decision["id"]  # type: ignore[attr-defined]
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return project


def state_of(top: Path) -> tuple[str, str]:
    """Every ref and the working tree's status: what "nothing written" is checked against."""
    return git(top, "for-each-ref"), git(top, "status", "--porcelain", "--ignored")


def check_outcome(result, before: tuple[str, str], top: Path, allowed: tuple[int, ...] = (0, 2)) -> None:
    assert result.code in allowed, (result.code, result.err)
    assert "Traceback" not in result.err and "unexpected error" not in result.err, result.err
    if result.code == 2:
        lines = result.err.splitlines()
        assert lines and lines[0].startswith("error: ") and len(lines) <= 2, result.err
        assert state_of(top) == before, "a refused command wrote something"


# ── the properties ──────────────────────────────────────────────────────────


@SETTINGS
@given(document=st.one_of(config_documents().map(as_toml), raw_bytes))
def test_any_configuration_file_is_read_or_refused_in_one_line(shared: Project, cli, document: bytes | None) -> None:
    assume(document is not None)
    config = shared.top / ".failres.toml"
    kept = config.read_bytes()
    config.write_bytes(document)
    try:
        before = state_of(shared.top)
        for args in (("status",), ("policy", "validate"), ("prompt", "rr", "t1", "--plan", str(shared.plan()))):
            check_outcome(cli(shared.top, *args), before, shared.top)
    finally:
        config.write_bytes(kept)


@SETTINGS
@given(document=st.one_of(plan_documents.map(as_toml), raw_bytes))
def test_any_plan_is_rendered_or_refused_in_one_line(shared: Project, cli, document: bytes | None) -> None:
    assume(document is not None)
    plan = shared.top.parent / "generated-plan.toml"
    plan.write_bytes(document)
    before = state_of(shared.top)
    for mode in ("implement", "fix"):
        check_outcome(cli(shared.top, "prompt", "rr", "t1", "--mode", mode, "--plan", str(plan)), before, shared.top)


@SETTINGS
@given(answer=answers)
def test_any_decision_answer_is_recorded_or_refused_in_one_line(shared: Project, cli, answer: str) -> None:
    before = state_of(shared.top)
    result = cli(shared.top, "decide", shared.decision, "--force", "--answer-json", answer)  # type: ignore[attr-defined]
    check_outcome(result, before, shared.top)
    if result.code == 0:
        listed = cli(shared.top, "decisions", "--json")
        assert listed.code == 0, listed.err
        json.loads(listed.out)  # what was recorded reads back as JSON


@SETTINGS
@given(paths=st.lists(hostile_text, min_size=1, max_size=3))
def test_any_scope_files_answer_is_recorded_or_refused_in_one_line(shared: Project, cli, paths: list[str]) -> None:
    if any(p.startswith("-") for p in paths):
        paths = ["./" + p if p.startswith("-") else p for p in paths]  # an option, not a path, to the parser
    before = state_of(shared.top)
    check_outcome(cli(shared.top, "decide", shared.decision, "--force", "--scope-files", *paths),  # type: ignore[attr-defined]
                  before, shared.top)


@SETTINGS
@given(content=import_files)
def test_any_import_file_is_imported_whole_or_refused_with_nothing_written(shared: Project, cli,
                                                                          content: bytes) -> None:
    source = shared.top.parent / "generated.jsonl"
    source.write_bytes(content)
    before = state_of(shared.top)
    result = cli(shared.top, "lessons", "import", str(source))
    check_outcome(result, before, shared.top)
    if result.code == 0:
        listed = cli(shared.top, "lessons", "list", "--json")
        assert listed.code == 0, listed.err


# ── the cases the properties were written for, pinned ───────────────────────


@pytest.mark.parametrize("answer", ["[" * 100000 + "]" * 100000, '{"a":' * 5000 + "1" + "}" * 5000,
                                    "NaN", "1e999", "9" * 5000, '"\\ud800"'])
def test_a_decision_answer_no_record_can_hold_is_refused_in_one_line(shared: Project, cli, answer: str) -> None:
    before = state_of(shared.top)
    result = cli(shared.top, "decide", shared.decision, "--force", "--answer-json", answer)  # type: ignore[attr-defined]
    check_outcome(result, before, shared.top, allowed=(2,))
    assert "--answer-json" in result.err


def test_an_import_line_nested_past_the_parser_s_stack_is_refused_by_file_and_line(shared: Project, cli) -> None:
    source = shared.top.parent / "deep.jsonl"
    good = json.dumps({"ts": "2026-01-02T03:04:05Z", "slug": "s", "task": "t", "failClass": "unknown",
                       "message": "m"})
    source.write_text(good + "\n" + "[" * 100000 + "]" * 100000 + "\n")
    before = state_of(shared.top)
    result = cli(shared.top, "lessons", "import", str(source))
    check_outcome(result, before, shared.top, allowed=(2,))
    assert f"{source}:2:" in result.err


def test_an_import_line_holding_a_line_separator_inside_a_string_is_one_line(shared: Project, cli) -> None:
    source = shared.top.parent / "separator.jsonl"
    source.write_text(json.dumps({"ts": "2026-01-02T03:04:05Z", "slug": "s", "task": "sep", "failClass": "unknown",
                                  "message": "before\u2028after\x1cend"}, ensure_ascii=False) + "\n")
    result = cli(shared.top, "lessons", "import", str(source))
    assert result.code == 0, result.err


@pytest.mark.parametrize("where", ["missing/dir/x.html", "."])
def test_a_report_that_cannot_be_written_where_asked_is_refused_in_one_line(shared: Project, cli,
                                                                           where: str, tmp_path: Path) -> None:
    target = tmp_path / where
    before = state_of(shared.top)
    result = cli(shared.top, "report", "--html", str(target))
    check_outcome(result, before, shared.top, allowed=(2,))
    assert "--html" in result.err
    assert not list(tmp_path.glob("**/*.tmp"))

