"""Claude Code session files: the reader (`reader`), the table of what each record
type, attachment and built-in tool is (`records`), the order of the conversation
(`order`), the fields of one record the reader needs (`fields`), the wording of user
lines (`words`), and subagents' provenance from their own transcripts (`subagents`)."""

from lessons.learning.transcripts.claude_code.reader import FORMAT, load_claude_code

__all__ = ["FORMAT", "load_claude_code"]
