"""A harness written against the library's old module names keeps working after the regrouping."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

OLD_NAMES = """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    from lessons.store import Store
    from lessons import redact
    import lessons.learning.claude_code.reader as old_reader
import lessons.storage.store, lessons.redaction.redact, lessons.learning.transcripts.claude_code.reader as reader
assert Store is lessons.storage.store.Store
assert redact is lessons.redaction.redact
assert old_reader is reader
assert redact.redact_value("token=ghp_" + "a" * 36) != "token=ghp_" + "a" * 36
print(sorted({str(w.message) for w in caught if w.category is DeprecationWarning}))
"""


def test_an_old_module_name_is_the_module_at_its_new_place_with_a_warning() -> None:
    done = subprocess.run([sys.executable, "-c", OLD_NAMES], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(sorted({
        "lessons.store is now lessons.storage.store",
        "lessons.redact is now lessons.redaction.redact",
        "lessons.learning.claude_code is now lessons.learning.transcripts.claude_code",
        "lessons.learning.claude_code.reader is now lessons.learning.transcripts.claude_code.reader",
    }))


def test_the_new_names_load_without_a_warning() -> None:
    script = ("import warnings\nwarnings.simplefilter('error')\n"
              "import lessons.storage.store, lessons.recall.retrieval, lessons.learning.transcripts.generic\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
