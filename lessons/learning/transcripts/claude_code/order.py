"""The order of a Claude Code session's records: the conversation's, not the file's.

Claude Code links each record to the one before it in the conversation
(`parentUuid`), and can write a turn to the file before the prompt it answers. Read
in file order, the agent would seem to work before being asked, and the prompt would
seem a steer; so records are read after their parent, in file order otherwise.
"""

from __future__ import annotations

from lessons.learning.messages import JsonLine


def conversation_order(lines: list[JsonLine]) -> list[JsonLine]:
    """The lines in the order of the conversation: each record after its parent
    (`parentUuid`), file order otherwise. Claude Code can write a turn before the
    prompt it answers; read in file order, the agent would seem to work before being
    asked, and the prompt would seem a steer."""
    present = {line.value["uuid"] for line in lines
               if isinstance(line.value, dict) and isinstance(line.value.get("uuid"), str)}
    emitted: set[str] = set()
    waiting: dict[str, list[JsonLine]] = {}
    ordered: list[JsonLine] = []
    for line in lines:
        record = line.value if isinstance(line.value, dict) else {}
        parent = record.get("parentUuid")
        if isinstance(parent, str) and parent in present and parent not in emitted:
            waiting.setdefault(parent, []).append(line)
            continue
        stack = [line]
        while stack:
            current = stack.pop()
            ordered.append(current)
            uuid = current.value.get("uuid") if isinstance(current.value, dict) else None
            if isinstance(uuid, str) and uuid not in emitted:
                emitted.add(uuid)
                stack.extend(reversed(waiting.pop(uuid, [])))
    # A parent that never came (a cycle, a torn chain): file order, as recorded.
    leftover = sorted((line for group in waiting.values() for line in group), key=lambda line: line.number)
    return ordered + leftover
