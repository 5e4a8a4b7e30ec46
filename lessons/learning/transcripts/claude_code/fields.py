"""Fields of one Claude Code record that the reader needs besides its content: who says
it sent the line, the background run it started, a result's text."""

from __future__ import annotations


def not_by_a_person(record: dict) -> bool:
    """Whether a user line's own record says it was not typed by a person: its
    `origin.kind` names another (a task notification, a coordinating agent)."""
    origin = record.get("origin")
    return isinstance(origin, dict) and origin.get("kind") not in (None, "human")


def background_id(record: dict) -> str | None:
    """The id Claude Code gave a command it started in the background, from its own
    structured record of the result (`toolUseResult`), never from the text."""
    result = record.get("toolUseResult")
    value = result.get("backgroundTaskId") if isinstance(result, dict) else None
    return value if isinstance(value, str) and value else None


def result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content:
        if (
            isinstance(item, dict)
            and item.get("type") == "text"
            and isinstance(item.get("text"), str)
        ):
            parts.append(item["text"])
        elif isinstance(item, dict):
            parts.append(f"[{str(item.get('type'))[:40]}]")
    return "\n".join(parts)
