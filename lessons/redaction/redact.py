"""Secret redaction: nothing that looks like a credential reaches a record.

Every write path of the store calls `redact` (or `redact_value` for a whole record) first,
and signatures are computed from redacted text, so a secret that an agent echoed into a
failure message never lands in git, where it would live in every clone forever.

Each secret becomes `[REDACTED:<kind>]`. For secrets that sit in a context (a URL's
password, an assignment's value, an Authorization header) only the secret is replaced and
the context kept, so a lesson still says *which* credential was involved.

Why a self-contained pattern set rather than a scanning library: the pattern families here
follow the plugins of `detect-secrets` (keyword assignments, AWS, GitHub, GitLab, Slack,
Stripe, Twilio, SendGrid, npm, PyPI, JWT, private keys, basic-auth URLs, Azure storage,
high-entropy strings), a well-kept base, but it would bring pyyaml and requests into every
install of a small tool, and it is built to audit files in a repository (baselines,
per-file-type rules) rather than to clean one string before each write. Redaction here
runs on every write, must be deterministic and offline, and must never fail a write; a
few dozen compiled regular expressions do that with no dependency.

Decisions a reader may look for:

- Fail closed: where a pattern is unsure (a value after `password:` in prose), it redacts.
  Losing a word of a lesson is cheap; a leaked key is not.
- Values that cannot be secrets are kept: empty, `null`/`None`/`true`/`false`, masks
  (`****`), placeholders (`<token>`, `${DB_PASSWORD}`, `$TOKEN`, `%TOKEN%`,
  `{{ token }}`), a call or lookup in code (`os.getenv(`, `os.environ[`), and markers
  left by an earlier pass.
- A pure integer of at most six digits after a token/key/secret name is kept
  (`token=42`, `pass: 3` in test summaries): a generated credential is never that short,
  a count or limit often is. After password words (password, passwd, passphrase, pwd)
  even short numbers are redacted, because people do choose numeric passwords.
- `PWD`/`OLDPWD` in an environment dump are working directories, not passwords.
- High-entropy strings are redacted only as the value of a name that hints at a credential
  (`webhook_signature`, `session`, `cookie`, `salt`, ...): elsewhere they are commit ids,
  digests and UUIDs, which lessons need.
- Idempotent: `[REDACTED:...]` markers are never matched again, so redacting a record
  twice (a retry, a merge of two stores) changes nothing.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath

from lessons.redaction.known_secrets import known_values, replace_known
from lessons.redaction.secret_gates import candidates
from lessons.redaction.secret_shapes import (
    BOUNDED_VALUE,
    MARKER,
    VALUE_AFTER_SEPARATOR,
    SecretPattern,
    hints_at_credential,
    is_secret_name,
    kept_value,
    looks_generated,
    secret_span,
)

__all__ = ["Finding", "find_secrets", "is_secret_bearing_path", "is_secret_name", "redact", "redact_value",
           "redacted_head", "redacted_tail"]


@dataclass(frozen=True)
class Finding:
    """One secret in a text: its kind and the span `text[start:end]` that gets replaced."""

    kind: str
    start: int
    end: int


# Every pass that changes the text turns unmarked characters into markers, so the loop
# ends; two passes are the norm and the cap only bounds it.
_MAX_PASSES = 8


# ── public API ────────────────────────────────────────────────────────────────


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`; unchanged when there is none.

    Runs until nothing more is found: replacing one secret can change what its
    neighbour looks like (`AccountKey=<key>(` read as a function call before, as a
    value after), and a second `redact` of a record must change nothing.
    """
    known = known_values()
    if _CLEAN.get(text) is known:
        return text
    text = replace_known(text)
    clean, settled = _redact_short(text) if len(text) <= _CACHED_CHARS else _redact_passes(text)
    if settled and len(clean) <= _CLEAN_CHARS and not any(value in clean for value in known):
        if len(_CLEAN) >= _CLEAN_TEXTS:
            _CLEAN.clear()
        _CLEAN[clean] = known
    return clean


# What `redact` returned lately, with the known values it was redacted against: redacting
# it again changes nothing (every pass ran to a text with no secret left), so a text
# redacted on the way in and again on the way to bytes (a message, then its record) is
# judged once. A value remembered later makes a new set, and the entries no longer match.
_CLEAN: dict[str, frozenset[str]] = {}
_CLEAN_TEXTS = 8192
_CLEAN_CHARS = 65536  # a long log is redacted once anyway; kept, a few would hold megabytes


def forget_judged() -> None:
    """Forget every text judged so far, so the next `redact` does the work (a benchmark times it)."""
    _CLEAN.clear()
    _redact_short.cache_clear()


# Records repeat their short values (a slug, a class, a timestamp) thousands of times in a
# bulk import, and every field of every record is redacted: a short text is judged once.
_CACHED_CHARS = 512


@functools.lru_cache(maxsize=16384)
def _redact_short(text: str) -> tuple[str, bool]:
    return _redact_passes(text)


def _redact_passes(text: str) -> tuple[str, bool]:
    """The text with its secrets replaced, and whether a last pass found nothing more."""
    for _ in range(_MAX_PASSES):
        redacted = _redact_once(text)
        if redacted == text:
            return text, True
        text = redacted
    return text, False


def _redact_once(text: str) -> str:
    findings = find_secrets(text)
    if not findings:
        return text
    pieces: list[str] = []
    last = 0
    for finding in findings:
        pieces.append(text[last:finding.start])
        pieces.append(f"[REDACTED:{finding.kind}]")
        last = finding.end
    pieces.append(text[last:])
    return "".join(pieces)


def redact_value(value: object) -> object:
    """A copy of a JSON value with every string redacted; keys kept.

    A string under a secret-sounding key (`{"password": "hunter2"}`) is replaced whole:
    on its own the value has no context that would give it away.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        unchanged = _unchanged_record(value)
        if unchanged is not None:
            return unchanged
        return {key: _redact_field(key, item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_value(item) for item in value)
    return value


def _unchanged_record(record: dict) -> dict | None:
    """A copy of a flat record when redaction provably changes none of it; None when that is not proved.

    A bulk import redacts a dozen fields of every record, one `redact` each, though nearly
    all records hold no secret at all. The gates of `secret_gates.candidates` are substring
    tests and lengths of runs of token characters, so whatever a field can match, its
    fields joined by newlines (a newline ends every run the gates and shapes measure) can
    match too: when the joined text has no candidate shape, no field has one, and each
    `redact` would return its field as it is. Known values, secret-sounding keys and nested
    values take the field-by-field way, which decides them.
    """
    if known_values():
        return None
    texts: list[str] = []
    for key, item in record.items():
        if type(key) is not str or _secret_key(key):
            return None
        kind = type(item)
        if kind is str:
            if item not in _CLEAN:  # judged already (a message redacted on its way in): unchanged
                texts.append(item)
        elif kind is list:
            if not all(type(part) is str for part in item):
                return None
            texts.extend(item)
        elif item is not None and kind not in (bool, int, float):
            return None
    if candidates("\n".join(texts)):
        return None
    return {key: list(item) if type(item) is list else item for key, item in record.items()}


def find_secrets(text: str) -> list[Finding]:
    """Every secret in `text`, in order, overlaps merged (the more specific kind wins)."""
    markers = [match.span() for match in MARKER.finditer(text)] if "[REDACTED:" in text else []
    spans: list[tuple[int, int, int, str]] = []
    # Only the shapes the text can hold are run (see `lessons.redaction.secret_gates`): the rest would find nothing.
    for rank, pattern in candidates(text):
        for kind, start, end in _matches(pattern, text, markers):
            for piece_start, piece_end in _outside_markers(start, end, markers):
                spans.append((piece_start, piece_end, rank, kind))
    return _merge(spans)


# ── matching ──────────────────────────────────────────────────────────────────


def _matches(
    pattern: SecretPattern, text: str, markers: list[tuple[int, int]]
) -> Iterator[tuple[str, int, int]]:
    position = 0
    while position <= len(text):
        match = pattern.regex.search(text, position)
        if match is None:
            return
        # A match that begins inside a marker reads our own output as context
        # (`[REDACTED:slack-token]:27` is not an assignment to `slack-token`).
        judged = None if _inside_marker(match.start(), markers) else _judge(pattern, match)
        if judged is None:
            # A rejected match may hide an accepted one inside it (`foo=password=x`).
            position = match.start() + 1
            continue
        kind, start, end = judged
        if end > start:
            yield kind, start, end
        position = max(end, match.end(), match.start() + 1)


def _judge(pattern: SecretPattern, match: re.Match[str]) -> tuple[str, int, int] | None:
    if pattern.decide_assignment is not None:
        name = match.group("key")
        if not (is_secret_name(name) or hints_at_credential(name)):
            if pattern.kind != "assignment" or name.startswith("-"):
                return None
            # An ordinary name: its value counts only when it looks machine-made, and
            # is read no further than a credential's length, so every name costs the same.
            bounded = BOUNDED_VALUE.match(match.string, match.end())
            if bounded is None or MARKER.search(bounded.group("v")) or not looks_generated(bounded.group("v")):
                return None
            return ("high-entropy", *bounded.span("v"))
        value = VALUE_AFTER_SEPARATOR.match(match.string, match.end())
        if value is None:
            return None
        start, end = secret_span(value)
        kind = pattern.decide_assignment(name, match.string[start:end])
        return None if kind is None else (kind, start, end)
    kind = pattern.kind if pattern.decide is None else pattern.decide(match)
    return None if kind is None else (kind, *secret_span(match))


def _inside_marker(position: int, markers: list[tuple[int, int]]) -> bool:
    index = bisect.bisect_right(markers, (position, math.inf)) - 1
    return index >= 0 and position < markers[index][1]


def _outside_markers(start: int, end: int, markers: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The parts of a span not covered by existing markers, so a marker is never re-redacted."""
    # Markers are sorted and disjoint: start from the last one that begins before the span.
    first = max(0, bisect.bisect_right(markers, (start, math.inf)) - 1)
    for marker_start, marker_end in markers[first:]:
        if marker_start >= end:
            break
        if marker_end <= start:
            continue
        if marker_start > start:
            yield start, marker_start
        start = max(start, marker_end)
    if end > start:
        yield start, end


def _merge(spans: list[tuple[int, int, int, str]]) -> list[Finding]:
    findings: list[Finding] = []
    current: list | None = None  # [start, end, rank, kind]
    for start, end, rank, kind in sorted(spans):
        if current is not None and start < current[1]:
            current[1] = max(current[1], end)
            if rank < current[2]:
                current[2], current[3] = rank, kind
            continue
        if current is not None:
            findings.append(Finding(current[3], current[0], current[1]))
        current = [start, end, rank, kind]
    if current is not None:
        findings.append(Finding(current[3], current[0], current[1]))
    return findings


# Records repeat the same few keys: each key's name is judged once.
_secret_key = functools.lru_cache(maxsize=4096)(is_secret_name)


def _redact_field(key: object, value: object) -> object:
    if isinstance(key, str) and isinstance(value, str) and _secret_key(key) and not kept_value(key, value):
        return "[REDACTED:assignment]"
    return redact_value(value)


# ── clipping after redaction ──────────────────────────────────────────────────
# A clip cuts text blindly: clipped first, a token keeps whatever part of it falls
# inside the window, and that part no longer has the shape redaction looks for
# (`ghp_R4nd0mT0k3nV4lu3` is too short to be a GitHub token). So every clip of text
# bound for a record redacts the whole text first, then cuts.


def redacted_tail(text: str, limit: int) -> str:
    """The last `limit` characters of `text`, redacted before the cut."""
    clean = redact(text)
    return clean if len(clean) <= limit else clean[-limit:]


def redacted_head(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, redacted before the cut."""
    clean = redact(text)
    return clean if len(clean) <= limit else clean[:limit]


# A "word" longer than this is data (a minified line, a progress bar), not what is left
# of a credential; dropping it would hide a whole line of output for nothing.
_MAX_CUT_WORD = 4096
_LAST_WORD = re.compile(rf"\S{{1,{_MAX_CUT_WORD}}}\Z")
_FIRST_WORD = re.compile(rf"\A\S{{1,{_MAX_CUT_WORD}}}(?!\S)")


def without_cut_word(text: str, *, cut_at: str) -> str:
    """`text` without the word a cut went through, for text that arrives already cut
    (a process's output kept as head and tail): the rest of a token can hold a secret
    too short to be recognised. `cut_at` is "end" (a head) or "start" (a tail)."""
    if cut_at == "end":
        found = _LAST_WORD.search(text)
        # Only a whole trailing word: a longer run ends here too but starts before the window.
        if found is None or (found.start() > 0 and not text[found.start() - 1].isspace()):
            return text
        return text[:found.start()]
    return _FIRST_WORD.sub("", text, count=1)


# ── files that hold secrets by their nature ───────────────────────────────────

_SECRET_FILE_NAMES = frozenset({
    ".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".dockercfg", ".htpasswd", ".pgpass",
    ".my.cnf", "credentials", "credentials.json", "service-account.json", "secrets.json", "secrets.yaml",
    "secrets.yml", "terraform.tfstate", ".vault-token",
})
_SECRET_FILE_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".tfvars", ".ovpn",
                         ".gpg", ".asc", ".age")
_SSH_KEY = re.compile(r"id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:[._-].*)?")


def is_secret_bearing_path(path: str | PurePath) -> bool:
    """Whether a file at `path` holds credentials by its nature (`.env*`, `*.pem`, `id_rsa`,
    `.netrc`, `.npmrc`, ...), whatever is in it: such files never leave the machine in a
    snapshot. A public half (`id_rsa.pub`) is not one."""
    name = PurePath(path).name
    lower = name.lower()
    if lower.endswith(".pub"):
        return False
    if lower.startswith(".env") or lower in _SECRET_FILE_NAMES or lower.endswith(_SECRET_FILE_SUFFIXES):
        return True
    if _SSH_KEY.fullmatch(lower):
        return True
    parts = [part.lower() for part in PurePath(path).parts]
    return len(parts) >= 2 and parts[-2] in (".aws", ".docker", ".kube", ".gnupg", ".ssh") and lower != "known_hosts"
