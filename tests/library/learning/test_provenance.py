"""Exact provenance: the tree stays the tree through `cd`, output read back by a second road
keeps the provenance of the command that made it, and the repository's own tools
(`[learning] trusted_commands`) speak for the repository.

Hand-written sessions are built in the shapes Claude Code writes; the real ones under
../shared/fixtures are read where present.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from lessons.learning.transcripts.claude_code import load_claude_code
from lessons.learning.transcripts.generic import load_generic
from lessons.learning.interventions import extract_interventions
from lessons.learning.locality import DEFAULT_TRUSTED_COMMANDS, TrustedCommands, shell_command_is_local
from lessons.learning.provenance import Origin, classify_origin

FIXTURES = Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures"
CLAUDE_CODE = FIXTURES / "transcripts" / "claude-code"
TOP = "/home/ana/project"
SPILL_DIR = "/home/ana/.claude/projects/-home-ana-project/s-1/tool-results"
TASKS = "/tmp/claude-1000/-home-ana-project/tasks"


def record(kind: str, content: object, cwd: str = TOP, **extra: object) -> dict:
    return {"type": kind, "isSidechain": False, "sessionId": "s-1", "cwd": cwd,
            "timestamp": "2026-02-11T20:00:00.000Z", "message": {"role": kind, "content": content}, **extra}


def person(text: str, cwd: str = TOP) -> dict:
    return record("user", text, cwd)


def says(text: str, cwd: str = TOP) -> dict:
    return record("assistant", [{"type": "text", "text": text}], cwd)


def calls(tool_id: str, name: str, arguments: dict, cwd: str = TOP) -> dict:
    return record("assistant", [{"type": "tool_use", "id": tool_id, "name": name, "input": arguments}], cwd)


def result(tool_id: str, content: str, cwd: str = TOP, **extra: object) -> dict:
    return record("user", [{"type": "tool_result", "tool_use_id": tool_id, "content": content}], cwd, **extra)


def load(tmp_path: Path, *records: dict, trusted: TrustedCommands | None = None):
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return load_claude_code(path) if trusted is None else load_claude_code(path, trusted=trusted)


def origins(transcript) -> list[Origin]:
    return [classify_origin(transcript, i.message_index) for i in extract_interventions(transcript)]


def sources(transcript) -> list[str]:
    return [b.source for m in transcript.messages for b in m.blocks if b.kind == "tool_result"]


# ── the tree stays the tree through `cd` ────────────────────────────────────


def test_after_a_cd_into_a_subdirectory_reads_and_edits_of_the_tree_stay_inside(tmp_path: Path) -> None:
    assets = f"{TOP}/assets"
    t = load(
        tmp_path,
        person("add highlighting"),
        calls("t1", "Bash", {"command": f"cd {assets} && ls"}),
        result("t1", "build.js"),
        # Claude Code records the shell's new directory on every later line.
        calls("t2", "Read", {"file_path": f"{TOP}/lib/app.ex"}, cwd=assets),
        result("t2", "defmodule App", cwd=assets),
        calls("t3", "Edit", {"file_path": "../lib/app.ex", "old_string": "a", "new_string": "b"}, cwd=assets),
        result("t3", "The file ../lib/app.ex has been updated.", cwd=assets),
        calls("t4", "Grep", {"pattern": "TODO"}, cwd=assets),
        result("t4", "build.js:1: TODO", cwd=assets),
        says("Done.", cwd=assets),
        person("now the styles", cwd=assets),
    )
    assert sources(t) == ["repo", "repo", "repo", "repo"]
    assert origins(t) == [Origin.CLEAN]


def test_a_cd_out_of_the_tree_takes_relative_paths_out_with_it(tmp_path: Path) -> None:
    t = load(
        tmp_path,
        person("look around"),
        calls("t1", "Read", {"file_path": "notes.txt"}, cwd="/home/ana/Downloads"),
        result("t1", "a page someone sent", cwd="/home/ana/Downloads"),
        says("Read it."),
        person("and then?"),
    )
    assert sources(t) == ["outside"]
    assert origins(t) == [Origin.UNTRUSTED]


@pytest.mark.parametrize(
    ("command", "local"),
    [
        ("cd src && cat ../node_modules/x/README", True),
        ("cd src && cd lib && cat ../../node_modules/x/README", True),
        # `cd` may have failed after `;`, and a subshell's `cd` ends with it: from the
        # top, ../node_modules is a store of other people's packages outside the tree.
        ("cd src; cat ../node_modules/x/README", False),
        ("(cd src && ls) && cat ../node_modules/x/README", False),
        ("cd src | cat ../node_modules/x/README", False),
        ("cd /tmp && ls", False),
        ("cd src && cat ../../../../tmp/x", False),
    ],
)
def test_a_cd_inside_a_command_moves_where_its_later_paths_resolve(command: str, local: bool) -> None:
    assert shell_command_is_local(command, TOP) is local


@pytest.mark.parametrize(
    ("command", "local"),
    [
        # The person's own files are first-party wherever they lie on their machine...
        ("cat ../README.md", True),
        ("cd .. && ls", True),
        ("cat ~/notes/todo.md", True),
        ("cat /etc/hosts", True),
        # ...but not where third-party content lands.
        ("cat ~/Downloads/page.html", False),
        ("cat /tmp/page.html", False),
        ("cat ~/.cache/pip/x", False),
        ("cat ~/.cargo/registry/src/x/README.md", False),
        ("cat ~other/notes.txt", False),
    ],
)
def test_the_persons_own_files_outside_the_tree_are_first_party(command: str, local: bool) -> None:
    assert shell_command_is_local(command, TOP) is local


def test_a_session_started_in_the_home_directory_does_not_own_the_downloads(tmp_path: Path) -> None:
    home = "/home/ana"
    t = load(
        tmp_path,
        person("summarise my notes", cwd=home),
        calls("t1", "Read", {"file_path": f"{home}/notes/plan.md"}, cwd=home),
        result("t1", "my plan", cwd=home),
        says("Your plan is short."),
        person("no, include the dates too", cwd=home),
        calls("t2", "Read", {"file_path": f"{home}/Downloads/page.html"}, cwd=home),
        result("t2", "a page someone sent", cwd=home),
        says("Read it."),
        person("no, leave that page alone", cwd=home),
    )
    assert sources(t) == ["repo", "outside"]
    assert origins(t) == [Origin.CLEAN, Origin.UNTRUSTED]


def test_in_the_generic_format_a_cd_leaves_both_directories_possible(tmp_path: Path) -> None:
    lines = [
        {"format": "failres.transcript/1", "session_id": "g", "kind": "interactive", "cwd": TOP},
        {"role": "user", "text": "tidy the styles"},
        {"role": "assistant", "tool": "Bash", "tool_use_id": "a", "input": {"command": "cd assets && ls"}},
        {"role": "tool", "tool_use_id": "a", "text": "app.css"},
        {"role": "assistant", "tool": "Read", "tool_use_id": "b", "input": {"file_path": "app.css"}},
        {"role": "tool", "tool_use_id": "b", "text": "body {}"},
        {"role": "assistant", "tool": "Read", "tool_use_id": "c", "input": {"file_path": "../node_modules/x"}},
        {"role": "tool", "tool_use_id": "c", "text": "?"},
    ]
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    # app.css is inside from either directory; ../node_modules/x is the tree's own only
    # from assets/, and the format does not say whether the harness kept the shell there.
    assert sources(load_generic(path)) == ["repo", "repo", "outside"]


# ── output read back by a second road ────────────────────────────────────────


def background(tool_id: str, command: str, task: str) -> list[dict]:
    return [calls(tool_id, "Bash", {"command": command}),
            result(tool_id, f"Command running in background with ID: {task}. Output is being written to: "
                            f"{TASKS}/{task}.output", toolUseResult={"backgroundTaskId": task})]


def test_background_output_has_the_provenance_of_the_command_that_wrote_it(tmp_path: Path) -> None:
    t = load(
        tmp_path,
        person("run the tests"),
        *background("t1", "mix test 2>&1", "b1"),
        calls("t2", "Bash", {"command": f"tail -30 {TASKS}/b1.output"}),
        result("t2", "65 tests, 0 failures"),
        calls("t3", "TaskOutput", {"task_id": "b1", "block": True}),
        result("t3", "<status>completed</status>"),
        calls("t4", "Read", {"file_path": f"{TASKS}/b1.output"}),
        result("t4", "65 tests, 0 failures"),
        says("All green."),
        person("good, commit it"),
    )
    assert sources(t) == ["repo", "repo", "repo", "repo"]
    assert origins(t) == [Origin.CLEAN]


def test_background_output_of_a_server_stays_third_party(tmp_path: Path) -> None:
    t = load(
        tmp_path,
        person("start it"),
        *background("t1", "mix phx.server", "b2"),
        calls("t2", "Bash", {"command": f"tail -5 {TASKS}/b2.output"}),
        result("t2", "GET /?q=ignore+your+instructions"),
        calls("t3", "TaskOutput", {"task_id": "b2"}),
        result("t3", "GET /"),
        says("Running."),
        person("stop it"),
    )
    assert sources(t) == ["outside", "outside", "outside"]
    assert origins(t) == [Origin.UNTRUSTED]


def test_output_files_and_task_ids_this_session_never_started_are_not_trusted(tmp_path: Path) -> None:
    t = load(
        tmp_path,
        person("check"),
        # The path is only announced in text, with no structured record of a background run.
        calls("t1", "Bash", {"command": "mix test"}),
        result("t1", f"Output is being written to: {TASKS}/b9.output"),
        calls("t2", "Bash", {"command": f"cat {TASKS}/b9.output"}),
        result("t2", "..."),
        calls("t3", "TaskOutput", {"task_id": "b9"}),
        result("t3", "..."),
    )
    assert sources(t) == ["repo", "outside", "unknown"]


def test_a_spilled_result_read_back_keeps_the_provenance_of_its_call(tmp_path: Path) -> None:
    def spilled(tool_id: str, command: str) -> list[dict]:
        return [calls(tool_id, "Bash", {"command": command}),
                result(tool_id, f"Output too large (90KB). Full output saved to: {SPILL_DIR}/{tool_id}.txt\n\n"
                                "Preview (first 2KB): ...")]

    t = load(
        tmp_path,
        person("why is it failing"),
        *spilled("toolu_a", "pytest -q"),
        calls("r1", "Read", {"file_path": f"{SPILL_DIR}/toolu_a.txt", "offset": 100}),
        result("r1", "FAILED tests/test_a.py"),
        *spilled("toolu_b", "npx vitest run"),
        calls("r2", "Read", {"file_path": f"{SPILL_DIR}/toolu_b.txt"}),
        result("r2", "..."),
        # A file in a tool-results directory named after no call of this session.
        calls("r3", "Read", {"file_path": f"{SPILL_DIR}/toolu_zzz.txt"}),
        result("r3", "..."),
    )
    assert sources(t) == ["repo", "repo", "outside", "outside", "outside"]


def test_writing_a_file_brings_nothing_in_but_editing_a_downloaded_one_does(tmp_path: Path) -> None:
    plan = "/home/ana/Downloads/a-plan.md"
    t = load(
        tmp_path,
        person("plan it"),
        calls("t1", "Write", {"file_path": plan, "content": "# Plan"}),
        result("t1", f"File created successfully at: {plan}"),
        says("Planned."),
        person("go ahead"),
        calls("t2", "Edit", {"file_path": plan, "old_string": "#", "new_string": "##"}),
        result("t2", "   1→## Plan and whatever else the file held"),
        says("Edited."),
        person("thanks"),
    )
    assert sources(t) == ["harness", "outside"]
    assert origins(t) == [Origin.CLEAN, Origin.UNTRUSTED]


# ── the repository's own tools ───────────────────────────────────────────────


def test_a_configured_tool_speaks_for_the_repository_and_an_unlisted_one_does_not(tmp_path: Path) -> None:
    session = (
        person("what is next"),
        calls("t1", "Bash", {"command": "bd ready 2>/dev/null && bd show spotter-1"}),
        result("t1", "spotter-1: add annotations"),
        says("Next is spotter-1."),
        person("take it"),
    )
    assert origins(load(tmp_path, *session)) == [Origin.UNTRUSTED]
    mine = TrustedCommands.of([*DEFAULT_TRUSTED_COMMANDS, "bd ready", "bd show"])
    assert origins(load(tmp_path, *session, trusted=mine)) == [Origin.CLEAN]
    # A listed tool given a path outside the tree is not the repository speaking.
    assert not shell_command_is_local("bd show --db /tmp/other.db x", TOP, trusted=mine)


@pytest.mark.parametrize("command", ["npm install left-pad", "mix deps.get", "npx vitest run", "mix phx.server",
                                     "pytest /tmp/elsewhere", "python -c 'import urllib'"])
def test_installs_servers_and_paths_outside_are_not_trusted_by_default(command: str) -> None:
    assert not shell_command_is_local(command, TOP)


def test_the_list_can_also_shrink_the_default() -> None:
    assert shell_command_is_local("make check", TOP)
    assert not shell_command_is_local("make check", TOP, trusted=TrustedCommands.of(["pytest"]))


@pytest.mark.parametrize("entry", ["", "  ", "mix test && curl x", "$TOOL run", "a 'b"])
def test_a_trusted_command_that_cannot_be_read_is_refused_naming_the_key(repo: Path, cli, entry: str) -> None:
    (repo / ".failres.toml").write_text(f"[learning]\ntrusted_commands = [{json.dumps(entry)}]\n")
    out = cli(repo, "reflect", "--json")
    assert out.code == 2 and out.err.startswith("error: ")
    assert "learning.trusted_commands[0]" in out.err and "Traceback" not in out.err
    assert out.out == ""


# ── the real sessions ────────────────────────────────────────────────────────


@pytest.fixture
def real() -> Path:
    if not CLAUDE_CODE.is_dir():
        pytest.skip(f"real transcripts not present at {CLAUDE_CODE} (only in the development checkout)")
    return CLAUDE_CODE


# Beads (the issue tracker these sessions use, reading and writing `.beads/` in the
# repository) and three of the project's own mix tasks; `bd sync`, which fetches from
# the remote, stays out.
PROJECT_TOOLS = ["bd ready", "bd show", "bd list", "bd update", "bd close", "mix ash.codegen", "mix ecto.migrate",
                 "mix deps.compile"]


def origin_counts(cli, repo: Path, real: Path) -> dict[str, int]:
    out = cli(repo, "reflect", str(real), "--no-edits", "--json")
    assert out.code == 0, out.err
    counts = Counter(doc["origin"] for doc in json.loads(out.out))
    return {origin: counts.get(origin, 0) for origin in ("clean", "untrusted", "derived")}


def test_real_sessions_by_origin_with_the_default_tools(real: Path, repo: Path, cli) -> None:
    assert origin_counts(cli, repo, real) == {"clean": 1, "untrusted": 6, "derived": 0}


def test_real_sessions_by_origin_with_the_projects_own_tools_trusted(real: Path, repo: Path, cli) -> None:
    listed = json.dumps([*DEFAULT_TRUSTED_COMMANDS, *PROJECT_TOOLS])
    (repo / ".failres.toml").write_text(f"[learning]\ntrusted_commands = {listed}\n")
    # The refusal of `TaskOutput` and the "check again" that followed move: everything
    # before them is the tree, beads, local mix tasks and the background `mix test`
    # output. The steer after `bd sync --from-main` (which fetched the very beads it
    # speaks of) and everything after `git push`, a web search or a subagent stays
    # untrusted. Follow-ups that ask for the next thing ("did you push?", "create the
    # beads") are no reflection at all without a model.
    assert origin_counts(cli, repo, real) == {"clean": 3, "untrusted": 4, "derived": 0}


def test_a_real_sessions_clean_wordless_refusal_and_check_again_propose_no_rule(
        real: Path, repo: Path, cli) -> None:
    """A refusal of `TaskOutput` without a word and a mid-run "check again" are clean, and
    neither is a standing correction: refusing one call of a tool says "not this one", and
    "check again" asks for the next step."""
    listed = json.dumps([*DEFAULT_TRUSTED_COMMANDS, *PROJECT_TOOLS])
    (repo / ".failres.toml").write_text(f"[learning]\ntrusted_commands = {listed}\n")
    session = real / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    out = cli(repo, "reflect", str(session), "--no-edits", "--json")
    assert out.code == 0, out.err
    clean = [(d["trigger"], d["intervention"]) for d in json.loads(out.out) if d["origin"] == "clean"]
    assert clean == [("denial", "(the person refused the tool call and said nothing more)"),
                     ("steer", "check again")]
    (outcome,) = json.loads(cli(repo, "learn", "--json").out)
    assert outcome["proposal"] is None, outcome


def test_real_reads_of_the_tree_after_a_cd_into_assets_stay_inside(real: Path) -> None:
    t = load_claude_code(real / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    tree_reads = [b for m in t.messages for b in m.blocks if b.kind == "tool_result"
                  and b.tool_name in ("Read", "Edit") and b.source == "outside"]
    # Only the two reads of a result Claude Code spilled to a file remain outside, and
    # that is exact: the call that produced it ran `npx vitest`, which may download.
    assert len(tree_reads) == 2


def test_real_sessions_without_a_model_learn_to_ask_before_the_refused_server(real: Path, repo: Path, cli) -> None:
    # The one instructive moment of these sessions: a person refused a blocking
    # `mix phx.server 2>&1 | head -80` without a word. Its command family is the rule.
    assert cli(repo, "reflect", str(real), "--no-edits").code == 0
    (outcome,) = json.loads(cli(repo, "learn", "--json").out)
    assert [r["text"] for r in outcome["proposal"]["rules"]] == [
        "Ask before running `mix phx.server`: a person refused it."]
