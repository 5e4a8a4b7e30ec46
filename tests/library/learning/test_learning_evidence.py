"""What a person reviewing learning is shown: each proposal's evidence lines, each rule's tally in the
report, and only the sessions whose lessons belong to this repository; with a model, the reflector
decides about every follow-up."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lessons.rulebook.ledger import record_outcome
from lessons.storage.store import Store

DATA = Path(__file__).resolve().parents[2] / "data" / "transcripts"
AIDER = DATA / "aider" / ".aider.chat.history.md"
CORRECTION = "No, don't change the return value like that; add a constant instead."


def run_json(cli, repo: Path, *args: str):
    out = cli(repo, *args, "--json")
    assert out.code == 0, out.err
    return json.loads(out.out)


def claude_session(path: Path, cwd: str, file_path: str) -> Path:
    def rec(kind: str, content: object) -> dict:
        return {"type": kind, "isSidechain": False, "sessionId": path.stem, "cwd": cwd, "entrypoint": "cli",
                "message": {"role": kind, "content": content}}

    records = [rec("user", "tidy the notes"),
               rec("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": file_path}}]),
               rec("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "notes"}]),
               rec("assistant", [{"type": "text", "text": "Tidied."}]),
               rec("user", "no, keep the dates in the notes")]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_proposal_shows_the_session_line_and_origin_of_each_piece_of_evidence(repo: Path, cli) -> None:
    run_json(cli, repo, "reflect", str(AIDER), "--no-edits")
    (outcome,) = run_json(cli, repo, "learn")
    shown = run_json(cli, repo, "proposals", "show", outcome["proposal"]["id"])
    [line] = shown["evidence_lines"]
    assert (line["source_path"], line["origin"], line["trigger"], line["intervention"]) == (
        str(AIDER), "clean", "followup", CORRECTION)
    assert AIDER.read_text().splitlines()[line["line"] - 1] == f"#### {CORRECTION}  "
    text = cli(repo, "proposals", "show", outcome["proposal"]["id"]).out
    assert f"{AIDER}:{line['line']}  session {line['session_id']}  followup clean: {CORRECTION}" in text


def test_the_report_shows_how_often_each_learned_rule_rode_and_what_came_of_it(repo: Path, cli) -> None:
    run_json(cli, repo, "reflect", str(AIDER), "--no-edits")
    run_json(cli, repo, "proposals", "accept", run_json(cli, repo, "learn")[0]["proposal"]["id"])
    view = run_json(cli, repo, "rules")
    record_outcome(Store(repo), view["hash"], view["ruleIds"], "quarantined", slug="rel", task="t1")
    record_outcome(Store(repo), view["hash"], view["ruleIds"], "quarantined", slug="rel", task="t2")
    [row] = run_json(cli, repo, "report")["learnedRules"]
    assert (row["id"], row["active"], row["rode"], row["committed"], row["quarantined"]) == (
        view["ruleIds"][0], True, 2, 0, 2)
    text = cli(repo, "report").out
    assert f"{row['id']}  behavior  active  rode 2, committed 0, quarantined 2, regressions 0" in text
    assert "may not help: git failres rules retire ID" in text


def test_a_session_whose_files_are_in_another_repository_is_left_to_that_repository(
        repo: Path, tmp_path: Path, cli) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "notes.md").write_text("notes")
    home = str(tmp_path)
    theirs = claude_session(tmp_path / "t" / "theirs.jsonl", home, str(other / "notes.md"))
    ours = claude_session(tmp_path / "t" / "ours.jsonl", home, str(repo / "README.md"))
    out = cli(repo, "reflect", str(theirs), str(ours), "--no-edits", "--json")
    assert out.code == 0
    assert [d["session_id"] for d in json.loads(out.out)] == ["ours"]
    assert f"{theirs}: its files are in another repository ({other}); not mined here" in out.err


MODEL = r"""
import json, pathlib, re, sys
state = pathlib.Path(sys.argv[1])
prompt = sys.stdin.read()
n = len(list(state.glob("*.txt")))
(state / f"prompt-{n:03d}.txt").write_text(prompt)
words = re.search(r"BEGIN intervention kind=\w+ \w+>>>\n(.*?)\n<<<END", prompt, re.S).group(1)
if words in ("thanks", "ok 開始"):
    sys.stdout.write('{"skip": true}')
else:
    sys.stdout.write('{"skip": false, "reflexion": "Add a constant rather than changing a value in place.", '
                     '"error_type": "wrong-approach", "confidence": 0.7}')
"""


def test_with_a_model_every_follow_up_goes_to_the_reflector_which_decides(repo: Path, tmp_path: Path, cli) -> None:
    state = tmp_path / "model"
    state.mkdir()
    program = tmp_path / "model.py"
    program.write_text(MODEL)
    (repo / ".failres.toml").write_text(
        f'[learning]\nprovider = "command"\ncommand = {json.dumps([sys.executable, str(program), str(state)])}\n')
    recorded = run_json(cli, repo, "reflect", str(AIDER), "--no-edits")
    asked = [p.read_text() for p in sorted(state.glob("*.txt"))]
    assert len(asked) == 3  # the correction, "thanks" and "ok 開始": the model, not the classifier, decides
    assert any("ok 開始" in p for p in asked)
    assert [(d["intervention"], d["model_derived"], d["reflexion_text"]) for d in recorded] == [
        (CORRECTION, True, "Add a constant rather than changing a value in place.")]
