"""What the repository itself offers on <TAB>: plan slugs, task ids, and record ids.

`git failres status <TAB>` offers the slugs failres has run, `land demo <TAB>` that plan's
tasks, `run plan.toml --task <TAB>` the tasks the plan file names, `decide <TAB>` the
decisions still waiting for a person, `proposals accept <TAB>` the pending proposals.

Read with a few plain `git` commands and no configuration loading, so that a <TAB> stays
quick. A hint, never an authority: whatever cannot be read (no repository, a damaged
store, a plan file that does not parse) offers nothing, and nothing is ever written.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_STORE_REF = "refs/failres/store"
BRANCHES = "refs/heads/failres/"
SNAPSHOTS = "refs/failres/snapshots/"

# Which records a command's ID argument names, and which of them it can act on
# (None: every one). A record's status is the last `status` its amendments set.
_RECORDS: dict[tuple[str, str], tuple[str, frozenset[str] | None]] = {
    ("decide", "decision_id"): ("decisions", frozenset({"open", "proposed"})),
    ("decisions propose", "decision_id"): ("decisions", frozenset({"open", "proposed"})),
    ("lessons show", "lesson_id"): ("lessons", None),
    ("proposals show", "proposal_id"): ("proposals", None),
    ("proposals accept", "proposal_id"): ("proposals", frozenset({"pending"})),
    ("proposals reject", "proposal_id"): ("proposals", frozenset({"pending"})),
}


@dataclass(frozen=True)
class Words:
    """What a command line says so far, for the value under the cursor."""

    command: str  # "land", "proposals accept": the words after the program name
    param: str  # the Python name of the argument or option being completed
    positionals: tuple[str, ...]  # the command's positional values already typed
    options: Mapping[str, str]  # option flag -> the value typed for it


def offered(words: Words, cwd: Path | None = None) -> list[str]:
    """The values the repository at `cwd` has for `words.param`, sorted; [] when it has none."""
    if words.param == "slug":
        return sorted(_Repo(cwd).slugs())
    if words.param == "task":
        if words.command == "run":
            return _plan_tasks(words.positionals[0], cwd) if words.positionals else []
        slug = words.options.get("--slug") or (words.positionals[0] if words.positionals else "")
        return sorted(_Repo(cwd).tasks(slug)) if slug else []
    record = _RECORDS.get((words.command, words.param))
    if record is not None:
        collection, acting_on = record
        return sorted(_Repo(cwd).record_ids(collection, acting_on))
    return []


def _plan_tasks(plan: str, cwd: Path | None) -> list[str]:
    path = Path(plan).expanduser()
    if cwd is not None and not path.is_absolute():
        path = cwd / path
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    tasks = raw.get("tasks")
    if not isinstance(tasks, list):
        return []
    return [t["id"] for t in tasks if isinstance(t, dict) and isinstance(t.get("id"), str)]


class _Repo:
    """The few git reads completion needs, in the repository around `cwd`."""

    def __init__(self, cwd: Path | None) -> None:
        self.cwd = cwd

    def git(self, *args: str, stdin: bytes | None = None) -> bytes | None:
        try:
            proc = subprocess.run(["git", *args], cwd=self.cwd, input=stdin, capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout if proc.returncode == 0 else None

    def store_ref(self) -> str:
        """`[store] ref` from the repository's `.failres.toml`, read leniently."""
        top = self.git("rev-parse", "--show-toplevel")
        if not top:
            return DEFAULT_STORE_REF
        try:
            raw = tomllib.loads((Path(top.decode("utf-8", "replace").strip()) / ".failres.toml").read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return DEFAULT_STORE_REF
        store = raw.get("store")
        ref = store.get("ref") if isinstance(store, dict) else None
        return ref if isinstance(ref, str) and ref.startswith("refs/failres/") else DEFAULT_STORE_REF

    def task_refs(self) -> list[tuple[str, str]]:
        """(slug, task) of every task branch and snapshot."""
        out = self.git("for-each-ref", "--format=%(refname)", BRANCHES, SNAPSHOTS)
        pairs = []
        for line in _lines(out):
            for prefix in (BRANCHES, SNAPSHOTS):
                if line.startswith(prefix):
                    parts = line[len(prefix):].split("/")
                    if len(parts) >= 2:
                        pairs.append((parts[0], parts[1]))
        return pairs

    def slugs(self) -> set[str]:
        journaled = _lines(self.git("ls-tree", "--name-only", f"{self.store_ref()}:journal"))
        return {slug for slug, _ in self.task_refs()} | set(journaled)

    def tasks(self, slug: str) -> set[str]:
        return {task for owner, task in self.task_refs() if owner == slug}

    def record_ids(self, collection: str, acting_on: frozenset[str] | None) -> set[str]:
        ref = self.store_ref()
        paths = _lines(self.git("ls-tree", "-r", "--name-only", ref, "--", f"{collection}/"))
        ids = {_record_id(p) for p in paths if p.endswith(".json") and "+" not in Path(p).name}
        if acting_on is None:
            return ids
        status = self._statuses(ref, paths)
        return {record for record in ids if status.get(record) in acting_on}

    def _statuses(self, ref: str, paths: Sequence[str]) -> dict[str, str]:
        """Each record's status: its own, then each amendment's in (ts, id) order."""
        docs = self._read_json(ref, [p for p in paths if p.endswith(".json")])
        status: dict[str, str] = {}
        amendments = []
        for path, doc in docs:
            if "+" in Path(path).name:
                amendments.append(doc)
            elif isinstance(doc.get("status"), str):
                status[_record_id(path)] = doc["status"]
        amendments.sort(key=lambda a: (str(a.get("ts", "")), str(a.get("id", ""))))
        for amendment in amendments:
            sets = amendment.get("set")
            target = amendment.get("target")
            if isinstance(sets, dict) and isinstance(sets.get("status"), str) and target in status:
                status[str(target)] = sets["status"]
        return status

    def _read_json(self, ref: str, paths: Sequence[str]) -> list[tuple[str, dict]]:
        """The JSON objects at `paths` in `ref`'s tree, read with one `git cat-file --batch`."""
        if not paths:
            return []
        out = self.git("cat-file", "--batch", stdin="".join(f"{ref}:{p}\n" for p in paths).encode())
        if out is None:
            return []
        docs, at = [], 0
        for path in paths:
            end = out.find(b"\n", at)
            header = out[at:end].split()
            if end < 0 or len(header) != 3 or header[1] != b"blob":
                at = end + 1
                continue
            size = int(header[2])
            body = out[end + 1:end + 1 + size]
            at = end + 1 + size + 1
            try:
                doc = json.loads(body)
            except (ValueError, RecursionError):
                continue
            if isinstance(doc, dict):
                docs.append((path, doc))
        return docs


def _record_id(path: str) -> str:
    return Path(path).name.removesuffix(".json").split("+")[0]


def _lines(out: bytes | None) -> list[str]:
    return [line for line in (out or b"").decode("utf-8", "replace").splitlines() if line]
