"""A secret shape's expression, compiled when a text first gets past its gate, not on import.

Every process that writes to the store imports the shapes (`secret_shapes`), and compiling
all of them took about 5 ms of cpu, where most texts (a green task's, nearly every imported
lesson's) pass no shape's gate (`secret_gates`) and so run none of them.
"""

from __future__ import annotations

import re


class DeferredPattern:
    """`re.compile(source, flags)`, made at the first `search`. Two threads that search
    at once may each compile it; the patterns are equal, and either is kept."""

    __slots__ = ("source", "flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags, self._compiled = source, flags, None

    def search(self, text: str, position: int = 0) -> re.Match[str] | None:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.source, self.flags)
        return compiled.search(text, position)
