"""Lessons and how they are found again.

`lesson` is what one quarantine taught and later what resolved it, `signature` the string
the same failure gets every time, `importer` lessons another harness wrote (`lessons
import`), `retrieval` the reads prompts, hooks and people ask of the store.
"""

__all__ = ["importer", "lesson", "retrieval", "signature"]
