"""The library's modules by the names they had before they were grouped into packages.

A harness written against an earlier version (`from lessons.store import Store`) keeps
working: importing an old name gives the module at its new place -- the very same module
object, so `isinstance` checks and patches agree -- with a DeprecationWarning naming the new
place. Nothing in this project uses the old names (tests/house/test_architecture.py checks).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings

MOVED = {
    "lessons.redact": "lessons.redaction.redact",
    "lessons.secret_shapes": "lessons.redaction.secret_shapes",
    "lessons.key_bodies": "lessons.redaction.key_bodies",
    "lessons.known_secrets": "lessons.redaction.known_secrets",
    "lessons.store": "lessons.storage.store",
    "lessons.trees": "lessons.storage.trees",
    "lessons.treediff": "lessons.storage.treediff",
    "lessons.bulk": "lessons.storage.bulk",
    "lessons.guard": "lessons.storage.guard",
    "lessons.records": "lessons.storage.records",
    "lessons.index": "lessons.storage.index",
    "lessons.index_db": "lessons.storage.index_db",
    "lessons.remote_copies": "lessons.storage.remote_copies",
    "lessons.history": "lessons.storage.history",
    "lessons.treemerge": "lessons.storage.treemerge",
    "lessons.settle": "lessons.storage.settle",
    "lessons.policy": "lessons.bounds.policy",
    "lessons.capacity": "lessons.bounds.capacity",
    "lessons.retention": "lessons.bounds.retention",
    "lessons.archive": "lessons.bounds.archive",
    "lessons.facts": "lessons.bounds.facts",
    "lessons.lesson": "lessons.recall.lesson",
    "lessons.signature": "lessons.recall.signature",
    "lessons.importer": "lessons.recall.importer",
    "lessons.retrieval": "lessons.recall.retrieval",
    "lessons.rules": "lessons.rulebook.rules",
    "lessons.rule_lineage": "lessons.rulebook.rule_lineage",
    "lessons.ledger": "lessons.rulebook.ledger",
    "lessons.providers": "lessons.learning.providers",
    "lessons.proposals": "lessons.learning.proposals",
    "lessons.learning.codex": "lessons.learning.transcripts.codex",
    "lessons.learning.aider": "lessons.learning.transcripts.aider",
    "lessons.learning.generic": "lessons.learning.transcripts.generic",
    "lessons.learning.claude_code": "lessons.learning.transcripts.claude_code",
    "lessons.learning.claude_code.fields": "lessons.learning.transcripts.claude_code.fields",
    "lessons.learning.claude_code.order": "lessons.learning.transcripts.claude_code.order",
    "lessons.learning.claude_code.reader": "lessons.learning.transcripts.claude_code.reader",
    "lessons.learning.claude_code.records": "lessons.learning.transcripts.claude_code.records",
    "lessons.learning.claude_code.subagents": "lessons.learning.transcripts.claude_code.subagents",
    "lessons.learning.claude_code.words": "lessons.learning.transcripts.claude_code.words",
}


class OldNames:
    """Finds an old name before the path finder could load its file a second time, under it.

    A finder and loader by protocol (`find_spec`, `create_module`, `exec_module`), not by
    `importlib.abc`'s classes: importing those costs every start of failres a few milliseconds.
    """

    lessons_old_names = True

    def find_spec(self, name, path=None, target=None):  # noqa: ANN001 - the finder protocol
        if name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):  # noqa: ANN001
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} is now {new}", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module) -> None:  # noqa: ANN001 - the module ran at its new place
        return None


def install() -> None:
    """Put the finder first on `sys.meta_path`, once, however often the library is imported."""
    if not any(getattr(finder, "lessons_old_names", False) for finder in sys.meta_path):
        sys.meta_path.insert(0, OldNames())
