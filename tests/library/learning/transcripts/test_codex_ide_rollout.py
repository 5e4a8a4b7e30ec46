"""A real rollout of Codex's VS Code extension on Windows, where every person turn arrives
wrapped in the editor's state: "# Context from my IDE setup:", the active file, its
selection, the open tabs, then "## My request for Codex:" and the person's words.

tests/data/transcripts/public/codex-vscode-windows-019ebeb4.jsonl is a public session,
github:doudouqie66/CommonTools@1bbc8e028f24:.codex/sessions/2026/06/13/
rollout-2026-06-13T09-59-30-019ebeb4-a3ff-7b22-8947-f764b95f1446.jsonl, lines 1, 125-165,
shortened: the tool calls, their outputs, reasoning and token counts left out, the session
header's instructions dropped and the agent's longer messages cut at 400 characters. Its
third turn pushes back ("不对不对吧，你先看一下官方文档": that's not right, look at the
official docs first); read with the editor's state as the person's words it was a
request, since a turn of that length is a prompt and its first sentence is the heading.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from lessons.learning.followups import directive
from lessons.learning.interventions import Trigger, extract_interventions
from lessons.learning.transcripts.codex import load_codex
from lessons.learning.transcripts.generic import sniff_format

ROLLOUT = Path(__file__).resolve().parents[3] / "data" / "transcripts" / "public" / "codex-vscode-windows-019ebeb4.jsonl"
PUSHBACK = "不对不对吧，你先看一下官方文档"


def test_the_windows_ide_rollout_reads_as_codex_with_the_ide_state_in_the_persons_turns() -> None:
    assert sniff_format(ROLLOUT) == "codex"
    t = load_codex(ROLLOUT)
    assert t.problems == ()
    said = [b.text for m in t.messages for b in m.blocks if b.source == "person"]
    assert len(said) == 3 and all(s.startswith("# Context from my IDE setup:") for s in said)
    assert json.loads(ROLLOUT.read_text(encoding="utf-8").splitlines()[0])["payload"]["cwd"].startswith("c:\\")


def test_only_the_words_after_my_request_for_codex_are_judged_so_the_pushback_is_a_correction() -> None:
    found = extract_interventions(load_codex(ROLLOUT))
    assert [(i.trigger, i.followup) for i in found] == [(Trigger.FOLLOWUP, "correction"), (Trigger.FOLLOWUP, "request")]
    assert directive(found[0].intervention) == unicodedata.normalize("NFKC", PUSHBACK)


def test_reflect_records_the_pushback_as_its_directive_and_not_the_editor_state(repo: Path, cli) -> None:
    out = cli(repo, "reflect", str(ROLLOUT), "--no-edits", "--json")
    assert out.code == 0 and "warning" not in out.err, out.err
    recorded = json.loads(out.out)
    assert [(d["trigger"], d["line"]) for d in recorded] == [("followup", 13)]
    assert recorded[0]["intervention"].endswith(PUSHBACK)
