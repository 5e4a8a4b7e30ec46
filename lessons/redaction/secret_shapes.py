"""The shapes secrets take, and the decisions that tell them from look-alikes.

`lessons.redaction.redact` runs these over every text before it is written; this module is
the table it runs. Patterns go most specific first: where two overlap, the
earlier kind is the one reported. Each shape here was added for text that
really reached a record (see the canary corpus, tests/data/secret_canaries.txt,
where each has at least one line), and each is held back by the look-alikes
beside it (tests/data/innocent_lookalikes.txt) that must come through unchanged.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable

from lessons.frozen import record
from lessons.redaction.deferred_pattern import DeferredPattern
from lessons.redaction.key_bodies import after_ssh_key_type, der_body_is_private, inside_public_block, wrapped_pem_is_public


@record
class SecretPattern:
    kind: str
    regex: DeferredPattern
    # Decides, from the match, the kind to report or None to reject it (a placeholder
    # value, a name that is no credential's). The span replaced is the first group named
    # `v...` that took part in the match, else the whole match.
    decide: Callable[[re.Match[str]], str | None] | None = None
    # For `name = value` shapes the regex matches the name and separator only; the name
    # is judged first and the value read after it only for names worth it. Reading every
    # value first would make `a:a:a:...` quadratic (each rejected name re-reads the rest).
    decide_assignment: Callable[[str, str], str | None] | None = None


MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
_ONCE_NAMES = itertools.count()


def _once(body: str) -> str:
    """`body` matched once, as far as it reaches, and never given back (an atomic group).

    What keeps a long run linear: a run is read once, whatever its length, instead
    of being given back one character at a time when what follows fails to match.
    Spelled as a lookahead that captures, then a backreference to what it captured:
    a lookahead is never backtracked into, and both mean the same on every Python.
    Python's own possessive quantifiers (`x{4,}+`) and atomic groups are new in 3.11
    and matched differently before a later 3.11 release fixed them (Debian 12's
    python3 is one of those): redaction must not depend on the patch release.
    The group names start with `_`, never with `v` (see `secret_span`).
    """
    name = f"_once{next(_ONCE_NAMES)}"
    return f"(?=(?P<{name}>{body}))(?P={name})"


_NOT_WORD_BEFORE = r"(?<![A-Za-z0-9_])"
_NOT_WORD_AFTER = r"(?![A-Za-z0-9_])"
_NOT_TOKEN_BEFORE = r"(?<![A-Za-z0-9_-])"
_NOT_TOKEN_AFTER = r"(?![A-Za-z0-9_-])"

# A value after a separator: quoted (also JSON-escaped quotes, as in a message that
# embeds JSON) or bare up to whitespace, a quote, `&` (query strings), `;` (connection
# strings) or `,` (inline maps).
VALUE_AFTER_SEPARATOR = re.compile(
    r"(?:\"(?P<v>(?:[^\"\\\n]|\\.)*)\""
    r"|'(?P<v2>(?:[^'\\\n]|\\.)*)'"
    r"|\\\"(?P<v3>(?:(?!\\\")[^\n])*)\\\""
    r"|\\'(?P<v4>(?:(?!\\')[^\n])*)\\'"
    # A placeholder with spaces in it (`<your password>`, `{{ secrets.token }}`) is one value.
    r"|(?P<v5>(?:<[^<>\n]*>|\$?\{\{[^}\n]*\}\}|\$\{[^}\n]*\})(?=[\s'\"&;,]|$))"
    r"|(?P<v6>" + _once(r"(?:\\[\"']|[^\s'\"&;,])+") + ")"
    # An opening quote with no closing one (a message cut short): to the end of the line.
    r"|\"(?P<v7>" + _once(r"[^\"\n]+") + r")|'(?P<v8>" + _once(r"[^'\n]+") + "))"
)
# Name runs read once (`_once`): a name is read once, whatever its length, so a long
# run of identifier characters costs linear time, not quadratic.
_ASSIGNED_NAME = (
    r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z_]" + _once(r"[A-Za-z0-9_.-]*") + r")(?:\\?[\"'])?\]?"
    + _once(r"[ \t]*") + r"(?::=|=>|={1,3}|:)" + _once(r"[ \t]*")
)
_FLAG_NAME = (r"(?<![A-Za-z0-9_-])--?(?P<key>[A-Za-z]" + _once(r"[A-Za-z0-9_-]*") + r")(?:=|"
              + _once(r"[ \t]+") + r"(?!-))")

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


def is_secret_name(name: str) -> bool:
    """Whether a variable, key, header or flag name says its value is a credential."""
    if name in _WORKING_DIRECTORY_NAMES:
        return False
    segments = [segment.lower() for segment in _NAME_SEGMENTS.findall(name)]
    if not segments:
        return False
    return "".join(segments).endswith(_SECRET_NAME_SUFFIXES) or segments[-1] == "pass"


def secret_span(match: re.Match[str]) -> tuple[int, int]:
    """The span to replace: the first group named `v...` that took part in the match, else all of it."""
    for name in match.re.groupindex:
        if name.startswith("v") and match.start(name) != -1:
            return match.span(name)
    return match.span()


def _secret_value(match: re.Match[str]) -> str:
    start, end = secret_span(match)
    return match.string[start:end]


# ── decisions ─────────────────────────────────────────────────────────────────


def _is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.fullmatch(value.strip()) is not None


def _is_password_name(name: str) -> bool:
    segments = [segment.lower() for segment in _NAME_SEGMENTS.findall(name)]
    return "".join(segments).endswith(_PASSWORD_NAME_SUFFIXES)


def kept_value(name: str, value: str) -> bool:
    if _is_placeholder(value):
        return True
    return _SHORT_INTEGER.fullmatch(value) is not None and not _is_password_name(name)


def _shannon_entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


# A canonical UUID names a thing (a session, a message, a record); it is random by design
# and no secret. One that is a credential sits under a credential's name, which the
# name rules catch whatever the value looks like.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _looks_random(value: str) -> bool:
    if _UUID.fullmatch(value):
        return False
    return (
        _HIGH_ENTROPY_VALUE.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and _shannon_entropy(value) >= _MIN_ENTROPY_BITS
    )


def hints_at_credential(name: str) -> bool:
    return any(segment.lower() in _CREDENTIAL_HINTS for segment in _NAME_SEGMENTS.findall(name))


def _decide_assignment(name: str, value: str) -> str | None:
    if is_secret_name(name):
        return None if kept_value(name, value) else "assignment"
    if _looks_random(value) and not MARKER.search(value):
        return "high-entropy"
    return None


def _decide_flag(name: str, value: str) -> str | None:
    if is_secret_name(name) and not kept_value(name, value):
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


# ── shapes found without a name to go by ─────────────────────────────────────

_BASE64 = "A-Za-z0-9+/"
_AWS_CONTEXT = re.compile(r"(?i)(?<![a-z])aws(?![a-z])|(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}")
# A bare value after an ordinary name (`BLOB = "..."`), read only this far: the
# reading costs the same for every name, so a run of rejected names stays linear.
BOUNDED_VALUE = re.compile(r"(?:\\?[\"'])?(?P<v>[A-Za-z0-9+/_-]{20,64}={0,2})(?![A-Za-z0-9+/=_.%-])")


def _mixed(value: str) -> bool:
    return (any(c.isupper() for c in value) and any(c.islower() for c in value)
            and any(c.isdigit() for c in value))


def looks_generated(value: str) -> bool:
    """A machine-made credential rather than a word, a path or a digest.

    Upper and lower case and digits, close to the most entropy its length allows,
    and no run of six lowercase letters (words and paths have them; random text
    of this length almost never does). Hex digests have no upper case, so commit
    ids and hashes, which lessons need, are kept.
    """
    if not _mixed(value) or re.search(r"[a-z]{6}", value):
        return False
    return _shannon_entropy(value) >= 0.85 * math.log2(min(len(value), 64))


def _decide_aws_shape(match: re.Match[str]) -> str | None:
    """40 characters of base64, as an AWS secret access key is, without a label naming it.

    Only with a "/" or "+" in it (most real keys) or an AWS word or key id nearby:
    a 40-character alphanumeric run alone is as likely something else.
    """
    value = match.group()
    if not _mixed(value) or _shannon_entropy(value) < 4.0:
        return None
    if "/" in value or "+" in value:
        return "aws-secret"
    around = match.string[max(0, match.start() - 300):match.end() + 300]
    return "aws-secret" if _AWS_CONTEXT.search(around) else None


def _decide_key_body(match: re.Match[str]) -> str | None:
    """Lines of a key body with no BEGIN line before them in this text (a log cut short).

    Kept when they sit inside a public block (a certificate, a public key) whose BEGIN
    line is in the text: those bodies are no secret.
    """
    return None if inside_public_block(match.string, match.start()) else "private-key"


def _decide_der_body(match: re.Match[str]) -> str | None:
    return "private-key" if der_body_is_private(match.group()) else None


def _decide_wrapped_pem(match: re.Match[str]) -> str | None:
    return None if wrapped_pem_is_public(match.group()) else "private-key"


def _decide_lone_body_line(match: re.Match[str]) -> str | None:
    """One run of base64 exactly as wide as a key's body lines (64 for PEM, 70 for OpenSSH,
    76 as `base64` wraps): the middle of a key, unless it reads like something else (no mix
    of cases and digits, little entropy: a hex digest, a word) or a public key is what it is."""
    value = match.group()
    if not _mixed(value) or _shannon_entropy(value) < 4.5 or after_ssh_key_type(match.string, match.start()):
        return None
    return _decide_key_body(match)


_MYSQL = re.compile(r"(?i)(?<![A-Za-z0-9_-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow"
                    r"|mariadb|mariadb-dump)(?![A-Za-z0-9_-])")
_SSHPASS = re.compile(r"(?<![A-Za-z0-9_-])sshpass(?![A-Za-z0-9_-])")
_COMMAND_REACH = 400  # how far back on the line the command may be


def _after_command(command: re.Pattern[str]) -> Callable[[re.Match[str]], str | None]:
    def decide(match: re.Match[str]) -> str | None:
        text = match.string
        line_start = max(text.rfind("\n", 0, match.start()) + 1, match.start() - _COMMAND_REACH)
        if not command.search(text, line_start, match.start()) or _is_placeholder(_secret_value(match)):
            return None
        return "cli-password"

    return decide


def _decide_cli_user(match: re.Match[str]) -> str | None:
    """`-u user:password` (curl, wget and friends); `-u 1000:1000` is a uid and gid."""
    value = _secret_value(match)
    if _is_placeholder(value) or (value.isdigit() and match.group("user").isdigit()):
        return None
    return "cli-password"


# ── the patterns, most specific first (on overlap the earlier kind is reported) ──

_PRIVATE_KEY_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"


# Where a base64 run begins: not inside one, and not at the `n` of an escaped line break
# (`\\nMII...` in JSON text starts its run after the escape).
_RUN_START = rf"(?:(?<![{_BASE64}=\\])|(?<=\\n))"


def _base64_lines() -> str:
    """The rest of a base64 run and the whole lines of base64 that continue it (wrapped
    output), read once; a next line that only starts like base64 (`canary: ...`) is not one."""
    return _once(rf"[{_BASE64}]*={{0,2}}(?:(?:\r?\n|\\n)[{_BASE64}]+={{0,2}}(?=[\s\"'\\,;]|\Z))*")


def _gap() -> str:
    """Blanks between two words of a netrc entry, read once."""
    return _once(r"[ \t]+")


def _word() -> str:
    """One word of a netrc entry, read once."""
    return _once(r"\S+")


PATTERNS: tuple[SecretPattern, ...] = (
    # A block whose END was cut off (a truncated log) is redacted to the end of the text.
    SecretPattern("private-key", DeferredPattern(
        rf"-----BEGIN {_PRIVATE_KEY_LABEL}(?:.*?-----END {_PRIVATE_KEY_LABEL}|.*\Z)", re.DOTALL)),
    # ... and one whose BEGIN was cut off: the body lines before an END line. A match may
    # start only where no base64 run (or line of one) precedes, so each run is tried once.
    SecretPattern("private-key", DeferredPattern(
        rf"(?<![{_BASE64}=\\])(?<![{_BASE64}=]\n)(?<![{_BASE64}=]\\n)(?<![{_BASE64}=]\r\n)"
        + _once(rf"[{_BASE64}=]{{4,}}(?:(?:\r?\n|\\n)[{_BASE64}=]{{4,}})*")
        + rf"(?:\r?\n|\\n)-----END {_PRIVATE_KEY_LABEL}")),
    # ... and a run of body lines with neither (the middle of a key): two or more full
    # PEM or OpenSSH lines (60-76 characters), unless a public block's BEGIN frames them.
    SecretPattern("private-key", DeferredPattern(
        rf"(?<![{_BASE64}=\\])(?<![{_BASE64}=]\n)(?<![{_BASE64}=]\\n)(?<![{_BASE64}=]\r\n)"
        + _once(rf"[{_BASE64}]{{60,76}}(?:(?:\r?\n|\\n)[{_BASE64}]{{60,76}})+")
        + rf"(?:(?:\r?\n|\\n)[{_BASE64}]{{0,75}}={{0,2}})?(?![{_BASE64}=])"), _decide_key_body),
    # Lone key bodies: an OpenSSH key (its body always starts "openssh-key-v1"), a whole
    # PEM block base64-encoded (it starts "-----BEGIN"), a DER key's first line (`MII...`),
    # and one full-width line of a body on a line of its own.
    SecretPattern("private-key", DeferredPattern(_RUN_START + "b3BlbnNzaC1rZXktdjE" + _base64_lines())),
    SecretPattern("private-key", DeferredPattern(_RUN_START + "LS0tLS1CRUdJTi" + _base64_lines()), _decide_wrapped_pem),
    SecretPattern("private-key", DeferredPattern(_RUN_START + rf"M(?=[{_BASE64}]{{39}})" + _base64_lines()),
                  _decide_der_body),
    SecretPattern("private-key", DeferredPattern(
        _RUN_START + rf"[{_BASE64}]{{64}}(?:[{_BASE64}]{{6}}|[{_BASE64}]{{12}})?={{0,2}}(?![{_BASE64}=])"),
        _decide_lone_body_line),
    SecretPattern("aws-access-key", DeferredPattern(
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])")),
    SecretPattern("aws-secret", DeferredPattern(
        r"(?<![A-Za-z0-9])(?i:aws)[A-Za-z0-9_.-]{0,30}?(?i:secret)[A-Za-z0-9_.-]{0,30}?"
        r"(?:\\?[\"'])?[ \t]*(?::=|=>|=|:)?[ \t]*(?:\\?[\"'])?(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])")),
    SecretPattern("aws-secret", DeferredPattern(rf"(?<![{_BASE64}=])[{_BASE64}]{{40}}(?![{_BASE64}=])"),
                  _decide_aws_shape),
    SecretPattern("github-token", DeferredPattern(
        rf"{_NOT_WORD_BEFORE}(?:gh[pousr]_[A-Za-z0-9]{{36,251}}|github_pat_[A-Za-z0-9_]{{22,255}}){_NOT_WORD_AFTER}")),
    SecretPattern("gitlab-token", DeferredPattern(rf"{_NOT_TOKEN_BEFORE}gl(?:pat|dt|rt|ptt|soat|ft)-" + _once("[A-Za-z0-9_-]{20,}"))),
    SecretPattern("slack-webhook", DeferredPattern(
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/+-]{20,})")),
    SecretPattern("slack-token", DeferredPattern(
        rf"{_NOT_TOKEN_BEFORE}(?:xox[abposre]-" + _once("[A-Za-z0-9-]{10,}") + r"|xapp-\d-"
        + _once("[A-Za-z0-9-]{10,}") + ")")),
    SecretPattern("stripe-key", DeferredPattern(
        rf"{_NOT_WORD_BEFORE}(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}|whsec_[A-Za-z0-9]{{24,}}){_NOT_WORD_AFTER}")),
    SecretPattern("google-api-key", DeferredPattern(rf"{_NOT_TOKEN_BEFORE}AIza[0-9A-Za-z_-]{{35}}{_NOT_TOKEN_AFTER}")),
    SecretPattern("anthropic-key", DeferredPattern(rf"{_NOT_TOKEN_BEFORE}sk-ant-" + _once("[A-Za-z0-9_-]{20,}"))),
    SecretPattern("openai-key", DeferredPattern(rf"{_NOT_TOKEN_BEFORE}sk-(?!ant-)" + _once("[A-Za-z0-9_-]{20,}")),
                  _decide_openai),
    SecretPattern("huggingface-token", DeferredPattern(rf"{_NOT_WORD_BEFORE}hf_[A-Za-z0-9]{{30,}}{_NOT_WORD_AFTER}")),
    SecretPattern("npm-token", DeferredPattern(rf"{_NOT_WORD_BEFORE}npm_[A-Za-z0-9]{{36}}{_NOT_WORD_AFTER}")),
    SecretPattern("pypi-token", DeferredPattern(rf"{_NOT_TOKEN_BEFORE}pypi-AgE" + _once("[A-Za-z0-9_-]{50,}"))),
    SecretPattern("twilio", DeferredPattern(rf"{_NOT_WORD_BEFORE}(?:AC|SK)[0-9a-f]{{32}}{_NOT_WORD_AFTER}")),
    SecretPattern("sendgrid", DeferredPattern(
        rf"{_NOT_TOKEN_BEFORE}SG\.[A-Za-z0-9_-]{{16,32}}\.[A-Za-z0-9_-]{{16,64}}{_NOT_TOKEN_AFTER}")),
    SecretPattern("jwt", DeferredPattern(
        rf"{_NOT_TOKEN_BEFORE}eyJ" + _once("[A-Za-z0-9_-]{8,}") + r"\." + _once("[A-Za-z0-9_-]{8,}") + r"\."
        + _once("[A-Za-z0-9_-]*"))),
    SecretPattern("azure-storage-key", DeferredPattern(
        r"(?i:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/=]{20,})|(?<=[?&;])sig=(?P<v2>[A-Za-z0-9%+/=]{20,})")),
    SecretPattern("url-password", DeferredPattern(
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://"
        r"(?P<user>" + _once(r"[^\s:/@?#'\"\[\]]*") + r"):(?P<v>" + _once(r"[^\s/@?#'\"]+")
        + r")@(?=[A-Za-z0-9\[])"), _unless_placeholder("url-password")),
    SecretPattern("authorization-header", DeferredPattern(
        r"(?i)(?<![A-Za-z0-9_-])(?:proxy-)?authorization(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?"
        r"(?:(?:bearer|basic|token|bot|apikey|key|sso-key)[ \t]+(?P<v>[^\s'\",;\\]+)"
        r"|(?:digest|aws4-hmac-sha256|hoba|mutual|negotiate|ntlm|hmac|oauth)[ \t]+(?P<v2>[^\r\n'\"]+)"
        r"|(?P<bare>(?P<v3>[^\s'\",;\\]{12,})))"), _decide_authorization),
    SecretPattern("authorization-header", DeferredPattern(
        r"(?i)(?<![A-Za-z0-9_-])(?:x-)?(?:api-key|auth-token|access-token|api-token|goog-api-key)"
        r"(?:\\?[\"'])?[ \t]*:[ \t]*(?:\\?[\"'])?(?P<v>[^\s'\",;\\]+)"), _unless_placeholder("authorization-header")),
    # Credentials on a command line: `curl -u user:password`, `mysql -pPASSWORD`, `sshpass -p PASSWORD`.
    SecretPattern("cli-password", DeferredPattern(
        r"(?<![A-Za-z0-9_-])(?:-u|--user|--proxy-user|--http-user)(?:" + _once(r"[ \t]+") + r"|=)?"
        r"(?P<user>" + _once(r"[^\s:'\"@/]+") + r"):(?P<v>" + _once(r"[^\s'\"]+") + ")"), _decide_cli_user),
    # `-p` is a password only after these commands on the same line (elsewhere: a port, `mkdir -p`);
    # the command is looked for behind each `-p`, so a line of many commands costs no more.
    SecretPattern("cli-password", DeferredPattern(r"(?<=[ \t])-p(?P<v>[^\s'\"-]" + _once(r"[^\s'\"]*") + ")"),
                  _after_command(_MYSQL)),
    SecretPattern("cli-password", DeferredPattern(r"(?<=[ \t])-p" + _once(r"[ \t]+") + r"(?P<v>[^\s'\"-]"
                                             + _once(r"[^\s'\"]*") + ")"),
                  _after_command(_SSHPASS)),
    # A netrc entry: `machine host login me password s3cr3t`, or a `password s3cr3t` line of its own.
    SecretPattern("netrc-password", DeferredPattern(
        r"(?m)(?:^[ \t]*password" + _gap() + r"(?P<v>" + _word() + r")[ \t]*$"
        r"|(?<![A-Za-z0-9_-])(?:machine" + _gap() + _word() + _gap() + r"(?:login" + _gap() + _word() + _gap()
        + r")?|login" + _gap() + _word() + _gap() + r")password" + _gap() + r"(?P<v2>" + _word() + "))"),
        _unless_placeholder("netrc-password")),
    SecretPattern("assignment", DeferredPattern(_ASSIGNED_NAME), decide_assignment=_decide_assignment),
    SecretPattern("assignment", DeferredPattern(_FLAG_NAME), decide_assignment=_decide_flag),
)
