"""Transcript adapters: each harness's session files read into the one message model.

One module (or package) per format: `claude_code` (Claude Code's JSONL sessions), `codex`
(Codex CLI rollout files, with `codex_records`, the table of what each of its lines, items
and tools is), `aider` (aider's chat history), and `generic` (the format another
harness emits, see docs/transcript-format.md), whose `load_transcript` reads any of them.
Each format's reader is a `reading.FileReader`: the messages and problems of one file.
"""

__all__ = ["aider", "claude_code", "codex", "codex_records", "generic", "reading"]
