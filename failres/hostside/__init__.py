"""What failres runs and reads on the host on a task's behalf, outside any seat world.

A seat is untrusted, and some of failres's own work for a task happens after it, on the
host, with the person's rights: the engine-down probe, the person's login linked into a
dispatch's agent home and a refreshed one carried back, the agent transcripts collected
from a dispatch. Each of these once took its orders from what a seat had left: a probe ran
a seat-written `node_modules/.bin` program; a seat's JSON was copied over the person's
`~/.claude/.credentials.json` (another account's token in the person's login); a directory
link planted in a dispatch led transcript collection into the person's sessions of another
project. So this room's inputs are the person's configuration and failres's own state
only, and nothing here opens a path under a workspace or a dispatch directory except
through `files`, whose readers refuse a link at every component
(`tests/house/test_hostside.py` holds that).

- `files` — the room's one door to the file system;
- `logins` — the person's login and settings in a dispatch's agent home, and a refreshed
  login accepted back only for the same account;
- `transcripts` — a dispatch's agent transcripts, found without following a link;
- `probe` — is the engine behind a binding reachable, asked in the task's world where
  there is one.
"""
