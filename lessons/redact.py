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
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One secret in a text: its kind and the span `text[start:end]` that gets replaced."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class _SecretPattern:
    kind: str
    regex: re.Pattern[str]
    # Decides, from the match, the kind to report or None to reject it (a placeholder
    # value, a name that is no credential's). The span replaced is the first group named
    # `v...` that took part in the match, else the whole match.
    decide: Callable[[re.Match[str]], str | None] | None = None
    # For `name = value` shapes the regex matches the name and separator only; the name
    # is judged first and the value read after it only for names worth it. Reading every
    # value first would make `a:a:a:...` quadratic (each rejected name re-reads the rest).
    decide_assignment: Callable[[str, str], str | None] | None = None


_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
_NOT_WORD_BEFORE = r"(?<![A-Za-z0-9_])"
_NOT_WORD_AFTER = r"(?![A-Za-z0-9_])"
_NOT_TOKEN_BEFORE = r"(?<![A-Za-z0-9_-])"
_NOT_TOKEN_AFTER = r"(?![A-Za-z0-9_-])"

# A value after a separator: quoted (also JSON-escaped quotes, as in a message that
# embeds JSON) or bare up to whitespace, a quote, `&` (query strings), `;` (connection
# strings) or `,` (inline maps).
_VALUE_AFTER_SEPARATOR = re.compile(
    r"(?:\"(?P<v>(?:[^\"\\\n]|\\.)*)\""
    r"|'(?P<v2>(?:[^'\\\n]|\\.)*)'"
    r"|\\\"(?P<v3>(?:(?!\\\")[^\n])*)\\\""
    r"|\\'(?P<v4>(?:(?!\\')[^\n])*)\\'"
    # A placeholder with spaces in it (`<your password>`, `{{ secrets.token }}`) is one value.
    r"|(?P<v5>(?:<[^<>\n]*>|\$?\{\{[^}\n]*\}\}|\$\{[^}\n]*\})(?=[\s'\"&;,]|$))"
    r"|(?P<v6>(?:\\[\"']|[^\s'\"&;,])++)"
    # An opening quote with no closing one (a message cut short): to the end of the line.
    r"|\"(?P<v7>[^\"\n]++)|'(?P<v8>[^'\n]++))"
)
# Possessive name runs: a name is read once, whatever its length, so a long run of
# identifier characters costs linear time, not quadratic.
_ASSIGNED_NAME = (
    r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z_][A-Za-z0-9_.-]*+)(?:\\?[\"'])?\]?"
    r"[ \t]*+(?::=|=>|={1,3}|:)[ \t]*+"
)
_FLAG_NAME = r"(?<![A-Za-z0-9_-])--?(?P<key>[A-Za-z][A-Za-z0-9_-]*+)(?:=|[ \t]++(?!-))"

_PLACEHOLDER = re.compile(
    r"(?:\[REDACTED:[a-z0-9-]+\])+|\**|[xX*#.]{3,}|<[^<>]*>|\$\{\{[^}]*\}\}|\$\{[^}]*\}"
    r"|\$\(?[A-Za-z_][A-Za-z0-9_]*\)?|%[A-Za-z_][A-Za-z0-9_]*%|\{\{[^}]*\}\}"
    r"|[A-Za-z_][\w.]*(?:\(\)?|\[)|(?i:null|none|nil|undefined|true|false|redacted|\[redacted\])"
)
_SHORT_INTEGER = re.compile(r"\d{1,6}")
_NAME_SEGMENTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SECRET_NAME_SUFFIXES = (
    "password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "accesskey",
    "secretkey", "privatekey", "authkey", "accountkey", "signingkey", "encryptionkey",
    "masterkey", "sessionkey", "clientkey", "appkey", "servicekey", "sshkey", "hmackey",
    "licensekey", "credential", "credentials", "secretkeybase",
)
_PASSWORD_NAME_SUFFIXES = ("password", "passwd", "passphrase", "pwd")
_WORKING_DIRECTORY_NAMES = frozenset({"PWD", "OLDPWD"})
_CREDENTIAL_HINTS = frozenset(
    {"key", "keys", "auth", "cred", "creds", "sig", "signature", "salt", "cookie", "session",
     "hmac", "private", "secrets", "tokens", "bearer"}
)
_HIGH_ENTROPY_VALUE = re.compile(r"[A-Za-z0-9+/=_.%-]{20,}")
_MIN_ENTROPY_BITS = 3.5
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
    for _ in range(_MAX_PASSES):
        redacted = _redact_once(text)
        if redacted == text:
            break
        text = redacted
    return text


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
        return {key: _redact_field(key, item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_value(item) for item in value)
    return value


def find_secrets(text: str) -> list[Finding]:
    """Every secret in `text`, in order, overlaps merged (the more specific kind wins)."""
    markers = [match.span() for match in _MARKER.finditer(text)]
    spans: list[tuple[int, int, int, str]] = []
    for rank, pattern in enumerate(_PATTERNS):
        for kind, start, end in _matches(pattern, text, markers):
            for piece_start, piece_end in _outside_markers(start, end, markers):
                spans.append((piece_start, piece_end, rank, kind))
    return _merge(spans)


def is_secret_name(name: str) -> bool:
    """Whether a variable, key, header or flag name says its value is a credential."""
    if name in _WORKING_DIRECTORY_NAMES:
        return False
    segments = [segment.lower() for segment in _NAME_SEGMENTS.findall(name)]
    if not segments:
        return False
    return "".join(segments).endswith(_SECRET_NAME_SUFFIXES) or segments[-1] == "pass"


# ── matching ──────────────────────────────────────────────────────────────────


def _matches(
    pattern: _SecretPattern, text: str, markers: list[tuple[int, int]]
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


def _judge(pattern: _SecretPattern, match: re.Match[str]) -> tuple[str, int, int] | None:
    if pattern.decide_assignment is not None:
        name = match.group("key")
        if not (is_secret_name(name) or _hints_at_credential(name)):
            return None
        value = _VALUE_AFTER_SEPARATOR.match(match.string, match.end())
        if value is None:
            return None
        start, end = _secret_span(value)
        kind = pattern.decide_assignment(name, match.string[start:end])
        return None if kind is None else (kind, start, end)
    kind = pattern.kind if pattern.decide is None else pattern.decide(match)
    return None if kind is None else (kind, *_secret_span(match))


def _inside_marker(position: int, markers: list[tuple[int, int]]) -> bool:
    index = bisect.bisect_right(markers, (position, math.inf)) - 1
    return index >= 0 and position < markers[index][1]


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    for name in match.re.groupindex:
        if name.startswith("v") and match.start(name) != -1:
            return match.span(name)
    return match.span()


def _secret_value(match: re.Match[str]) -> str:
    start, end = _secret_span(match)
    return match.string[start:end]


def _outside_markers(start: int, end: int, markers: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The parts of a span not covered by existing markers, so a marker is never re-redacted."""
    for marker_start, marker_end in markers:
        if marker_end <= start or marker_start >= end:
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


# ── decisions ─────────────────────────────────────────────────────────────────


def _is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.fullmatch(value.strip()) is not None


def _is_password_name(name: str) -> bool:
    segments = [segment.lower() for segment in _NAME_SEGMENTS.findall(name)]
    return "".join(segments).endswith(_PASSWORD_NAME_SUFFIXES)


def _kept_value(name: str, value: str) -> bool:
    if _is_placeholder(value):
        return True
    return _SHORT_INTEGER.fullmatch(value) is not None and not _is_password_name(name)


def _shannon_entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _looks_random(value: str) -> bool:
    return (
        _HIGH_ENTROPY_VALUE.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and _shannon_entropy(value) >= _MIN_ENTROPY_BITS
    )


def _hints_at_credential(name: str) -> bool:
    return any(segment.lower() in _CREDENTIAL_HINTS for segment in _NAME_SEGMENTS.findall(name))


def _decide_assignment(name: str, value: str) -> str | None:
    if is_secret_name(name):
        return None if _kept_value(name, value) else "assignment"
    if _looks_random(value) and not _MARKER.search(value):
        return "high-entropy"
    return None


def _decide_flag(name: str, value: str) -> str | None:
    if is_secret_name(name) and not _kept_value(name, value):
        return "assignment"
    return None


def _unless_placeholder(kind: str) -> Callable[[re.Match[str]], str | None]:
    def decide(match: re.Match[str]) -> str | None:
        return None if _is_placeholder(_secret_value(match)) else kind

    return decide


def _decide_openai(match: re.Match[str]) -> str | None:
    # `sk-` starts plenty of kebab-case names; a real key mixes cases and digits.
    body = match.group()[3:]
    mixed = any(c.isupper() for c in body) and any(c.islower() for c in body)
    return "openai-key" if mixed and any(c.isdigit() for c in body) else None


def _decide_authorization(match: re.Match[str]) -> str | None:
    value = _secret_value(match)
    if _is_placeholder(value):
        return None
    if match.group("bare") is not None and not any(c.isdigit() for c in value):
        return None  # "Authorization: required" is prose; a bare credential has digits
    return "authorization-header"


def _redact_field(key: object, value: object) -> object:
    if isinstance(key, str) and isinstance(value, str) and is_secret_name(key) and not _kept_value(key, value):
        return "[REDACTED:assignment]"
    return redact_value(value)


# ── the patterns, most specific first (on overlap the earlier kind is reported) ──

_PRIVATE_KEY_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_PATTERNS: tuple[_SecretPattern, ...] = (
    # A block whose END was cut off (a truncated log) is redacted to the end of the text.
    _SecretPattern("private-key", re.compile(
        rf"-----BEGIN {_PRIVATE_KEY_LABEL}(?:.*?-----END {_PRIVATE_KEY_LABEL}|.*\Z)", re.DOTALL)),
    _SecretPattern("aws-access-key", re.compile(
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])")),
    _SecretPattern("aws-secret", re.compile(
        r"(?<![A-Za-z0-9])(?i:aws)[A-Za-z0-9_.-]{0,30}?(?i:secret)[A-Za-z0-9_.-]{0,30}?"
        r"(?:\\?[\"'])?[ \t]*(?::=|=>|=|:)?[ \t]*(?:\\?[\"'])?(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])")),
    _SecretPattern("github-token", re.compile(
        rf"{_NOT_WORD_BEFORE}(?:gh[pousr]_[A-Za-z0-9]{{36,251}}|github_pat_[A-Za-z0-9_]{{22,255}}){_NOT_WORD_AFTER}")),
    _SecretPattern("gitlab-token", re.compile(rf"{_NOT_TOKEN_BEFORE}gl(?:pat|dt|rt|ptt|soat|ft)-[A-Za-z0-9_-]{{20,}}+")),
    _SecretPattern("slack-webhook", re.compile(
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/+-]{20,})")),
    _SecretPattern("slack-token", re.compile(
        rf"{_NOT_TOKEN_BEFORE}(?:xox[abposre]-[A-Za-z0-9-]{{10,}}+|xapp-\d-[A-Za-z0-9-]{{10,}}+)")),
    _SecretPattern("stripe-key", re.compile(
        rf"{_NOT_WORD_BEFORE}(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}|whsec_[A-Za-z0-9]{{24,}}){_NOT_WORD_AFTER}")),
    _SecretPattern("google-api-key", re.compile(rf"{_NOT_TOKEN_BEFORE}AIza[0-9A-Za-z_-]{{35}}{_NOT_TOKEN_AFTER}")),
    _SecretPattern("anthropic-key", re.compile(rf"{_NOT_TOKEN_BEFORE}sk-ant-[A-Za-z0-9_-]{{20,}}+")),
    _SecretPattern("openai-key", re.compile(rf"{_NOT_TOKEN_BEFORE}sk-(?!ant-)[A-Za-z0-9_-]{{20,}}+"), _decide_openai),
    _SecretPattern("huggingface-token", re.compile(rf"{_NOT_WORD_BEFORE}hf_[A-Za-z0-9]{{30,}}{_NOT_WORD_AFTER}")),
    _SecretPattern("npm-token", re.compile(rf"{_NOT_WORD_BEFORE}npm_[A-Za-z0-9]{{36}}{_NOT_WORD_AFTER}")),
    _SecretPattern("pypi-token", re.compile(rf"{_NOT_TOKEN_BEFORE}pypi-AgE[A-Za-z0-9_-]{{50,}}+")),
    _SecretPattern("twilio", re.compile(rf"{_NOT_WORD_BEFORE}(?:AC|SK)[0-9a-f]{{32}}{_NOT_WORD_AFTER}")),
    _SecretPattern("sendgrid", re.compile(
        rf"{_NOT_TOKEN_BEFORE}SG\.[A-Za-z0-9_-]{{16,32}}\.[A-Za-z0-9_-]{{16,64}}{_NOT_TOKEN_AFTER}")),
    _SecretPattern("jwt", re.compile(
        rf"{_NOT_TOKEN_BEFORE}eyJ[A-Za-z0-9_-]{{8,}}+\.[A-Za-z0-9_-]{{8,}}+\.[A-Za-z0-9_-]*+")),
    _SecretPattern("azure-storage-key", re.compile(
        r"(?i:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/=]{20,})|(?<=[?&;])sig=(?P<v2>[A-Za-z0-9%+/=]{20,})")),
    _SecretPattern("url-password", re.compile(
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://"
        r"(?P<user>[^\s:/@?#'\"\[\]]*+):(?P<v>[^\s/@?#'\"]++)@(?=[A-Za-z0-9\[])"), _unless_placeholder("url-password")),
    _SecretPattern("authorization-header", re.compile(
        r"(?i)(?<![A-Za-z0-9_-])(?:proxy-)?authorization(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?"
        r"(?:(?:bearer|basic|token|bot|apikey|key|sso-key)[ \t]+(?P<v>[^\s'\",;\\]+)"
        r"|(?:digest|aws4-hmac-sha256|hoba|mutual|negotiate|ntlm|hmac|oauth)[ \t]+(?P<v2>[^\r\n'\"]+)"
        r"|(?P<bare>(?P<v3>[^\s'\",;\\]{12,})))"), _decide_authorization),
    _SecretPattern("authorization-header", re.compile(
        r"(?i)(?<![A-Za-z0-9_-])(?:x-)?(?:api-key|auth-token|access-token|api-token|goog-api-key)"
        r"(?:\\?[\"'])?[ \t]*:[ \t]*(?:\\?[\"'])?(?P<v>[^\s'\",;\\]+)"), _unless_placeholder("authorization-header")),
    _SecretPattern("assignment", re.compile(_ASSIGNED_NAME), decide_assignment=_decide_assignment),
    _SecretPattern("assignment", re.compile(_FLAG_NAME), decide_assignment=_decide_flag),
)


# File names that hold credentials by convention. A snapshot of a failing workspace
# (which `sync` may carry to a shared remote) never keeps such a file, whatever its
# content looks like.
_SECRET_FILE_NAMES = re.compile(
    r"^(\.env(\..*)?|\.netrc|_netrc|\.npmrc|\.pypirc|\.git-credentials|\.pgpass|credentials(\.json)?"
    r"|id_(rsa|dsa|ecdsa|ed25519)(\.pub)?|.*\.(pem|key|p12|pfx|jks|keystore|kdbx|ovpn))$",
    re.IGNORECASE,
)


def is_secret_bearing_path(path: str) -> bool:
    """Whether a repository path names a file that holds secrets by convention (`.env.local`, `id_rsa`, `*.pem`)."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".pub"):
        return False  # a public key is not a secret
    return bool(_SECRET_FILE_NAMES.match(name))
