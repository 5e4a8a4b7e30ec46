"""lessons: a knowledge store kept in git, for any harness that runs coding agents.

It never imports `failres`: another harness could write and read lessons through it. Its
packages stand on each other without circles, bottom up:

- `redaction`: where a secret is recognised and cut, before any byte is written;
- `storage`: records as files in commits on one private ref, and everything that reads,
  guards, indexes, undoes or joins those commits;
- `bounds`: the knowledge policy and bounded stores (a record evicted to the archive and
  restored, never lost), and project facts with their timeline;
- `recall`: lessons, failure signatures, `lessons import`, and the reads prompts ask;
- `rulebook`: rules, their lineage and the validation ledger;
- `learning`: transcripts read (`learning.transcripts`), interventions found, rules proposed.

`errors` (the exception family), `jsontext` (JSON from outside, read safely), `terminal` (a
terminal's output as plain text: escapes removed), `frozen` (frozen dataclasses that cost
nothing to declare) and `failpoints` (the named step boundaries a test crashes at) serve them
all;
`moved` keeps the modules' names from before these packages importable.
"""

from lessons import moved

moved.install()

__all__ = ["bounds", "errors", "failpoints", "frozen", "jsontext", "learning", "recall", "redaction", "rulebook",
           "storage", "terminal"]
