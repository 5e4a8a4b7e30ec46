"""A rollout of Codex's VS Code extension on Windows, where every person turn arrives
wrapped in the editor's state: "# Context from my IDE setup:", the active file, its
selection, the open tabs, then "## My request for Codex:" and the person's words.

The rollout is built here in the shape of a public Windows session of Codex 0.140
(`originator: codex_vscode`, a `c:\\` cwd, three turns; the records and their order as
that session wrote them, the words written for the test but the pushback's, which is the
person's: "不对不对吧，你先看一下官方文档", that's not right, look at the official docs
first). Read with the editor's state as the person's words it was a request, since a turn
of that length is a prompt and its first sentence is the heading.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from lessons.learning.followups import directive
from lessons.learning.interventions import Trigger, extract_interventions
from lessons.learning.transcripts.codex import load_codex
from lessons.learning.transcripts.generic import sniff_format



PUSHBACK = "不对不对吧，你先看一下官方文档"
CWD = "c:\\Games\\Editor\\Projects\\Test_01"
IDE = ("# Context from my IDE setup:\n\n## Active file: Test_01/Script/GameState.lua\n\n"
       "## Active selection of the file:\nAddPlayers\n## Open tabs:\n"
       "- GameState.lua: Test_01/Script/GameState.lua\n- MainUI.lua: Test_01/Script/UI/MainUI.lua\n\n"
       "## My request for Codex:\n")
TURNS = (("看看我现在的写法有没有什么问题", "我先读一下这两个文件。", "有问题：MainUI 调用的函数在 GameState 里不存在。"),
         (PUSHBACK, "好，我先查编辑器自带的官方 API。", "你说得对，我前面说得太绝对了：官方模板里广播 RPC 是这样调用的。"),
         ("按官方的写法帮我把 MainUI 改好", "我按官方写法改 MainUI。", "改好了：按钮现在经由服务器广播。"))


def _record(n: int, kind: str, payload: dict) -> dict:
    return {"timestamp": f"2026-06-13T02:{n:02d}:00.000Z", "type": kind, "payload": payload}


def _rollout(folder: Path) -> Path:
    lines = [_record(0, "session_meta", {"id": "019ebeb4-0000-7000-8000-000000000001", "cwd": CWD,
                                         "originator": "codex_vscode", "cli_version": "0.140.0-alpha.2",
                                         "source": "vscode", "model_provider": "openai"})]
    for n, (words, working, answer) in enumerate(TURNS, start=1):
        turn = f"019ebed7-0000-7000-8000-00000000000{n}"
        said = IDE + words + "\n"
        lines += [
            _record(n, "event_msg", {"type": "task_started", "turn_id": turn}),
            _record(n, "turn_context", {"turn_id": turn, "cwd": CWD, "approval_policy": "never",
                                        "sandbox_policy": {"type": "danger-full-access"}, "model": "gpt-5.5"}),
            _record(n, "response_item", {"type": "message", "role": "user",
                                         "content": [{"type": "input_text", "text": said}]}),
            _record(n, "event_msg", {"type": "user_message", "message": said, "images": []}),
            _record(n, "event_msg", {"type": "agent_message", "message": working, "phase": "commentary"}),
            _record(n, "response_item", {"type": "message", "role": "assistant", "phase": "commentary",
                                         "content": [{"type": "output_text", "text": working}]}),
            _record(n, "event_msg", {"type": "agent_message", "message": answer, "phase": "final_answer"}),
            _record(n, "response_item", {"type": "message", "role": "assistant", "phase": "final_answer",
                                         "content": [{"type": "output_text", "text": answer}]}),
            _record(n, "event_msg", {"type": "task_complete", "turn_id": turn, "last_agent_message": answer}),
        ]
    path = folder / "rollout-2026-06-13T09-59-30-019ebeb4-0000-7000-8000-000000000001.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    return path


@pytest.fixture
def rollout(tmp_path: Path) -> Path:
    return _rollout(tmp_path)


def test_the_windows_ide_rollout_reads_as_codex_with_the_ide_state_in_the_persons_turns(rollout: Path) -> None:
    assert sniff_format(rollout) == "codex"
    t = load_codex(rollout)
    assert t.problems == ()
    said = [b.text for m in t.messages for b in m.blocks if b.source == "person"]
    assert len(said) == 3 and all(s.startswith("# Context from my IDE setup:") for s in said)
    assert json.loads(rollout.read_text(encoding="utf-8").splitlines()[0])["payload"]["cwd"].startswith("c:\\")


def test_only_the_words_after_my_request_for_codex_are_judged_so_the_pushback_is_a_correction(rollout: Path) -> None:
    found = extract_interventions(load_codex(rollout))
    assert [(i.trigger, i.followup) for i in found] == [(Trigger.FOLLOWUP, "correction"), (Trigger.FOLLOWUP, "request")]
    assert directive(found[0].intervention) == unicodedata.normalize("NFKC", PUSHBACK)


def test_reflect_records_the_pushback_as_its_directive_and_not_the_editor_state(repo: Path, cli, rollout: Path) -> None:
    out = cli(repo, "reflect", str(rollout), "--no-edits", "--json")
    assert out.code == 0 and "warning" not in out.err, out.err
    recorded = json.loads(out.out)
    assert [(d["trigger"], d["line"]) for d in recorded] == [("followup", 13)]
    assert recorded[0]["intervention"].endswith(PUSHBACK)
