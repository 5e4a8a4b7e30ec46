"""What a text must hold before each secret shape can match it: the cheap proof that it cannot.

`lessons.redaction.redact` runs every shape of `lessons.redaction.secret_shapes` over every text written to
the store, and a bulk import writes hundreds of thousands of them; nearly all hold no
secret, and running three dozen expressions to learn that made redaction the whole cost
of an import. Each shape has a gate here: a condition every text it can match satisfies
(a literal the expression spells out, a run of base64 as long as it needs, a name that
can be a credential's), checked with substring tests on a few facts read once per text.
A shape whose gate fails is not run, which changes nothing: it would have found nothing.

A gate must never be narrower than its expression. Decisions a reader may look for:

- Case-insensitive shapes are gated on a folded lower case that also maps the four
  non-ASCII letters Python's `re.IGNORECASE` matches to ASCII ones (`İ`, `ı` to `i`,
  `ſ` to `s`, the Kelvin sign to `k`): `authorızation:` is matched by `(?i)authorization`.
- A name is a credential's by its letters alone (`pa_ss.word` is `password`), so names
  are looked for in that folded text with `_`, `.` and `-` removed, and the words looked
  for are those of the name tables themselves, so a word added there is looked for here.
- The gates are listed in the order of `PATTERNS` with the kind of each; a table out of
  step with the shapes is refused when this module is imported, not trusted.
"""

from __future__ import annotations

import re
from itertools import compress

from lessons.redaction.secret_shapes import _CREDENTIAL_HINTS, _SECRET_NAME_SUFFIXES, PATTERNS, SecretPattern

_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{20,}")
_VALUE_RUN = re.compile(r"[A-Za-z0-9+/_-]{20,}")  # what `BOUNDED_VALUE` reads after an ordinary name
_WORDS = {*_SECRET_NAME_SUFFIXES, "pass", *_CREDENTIAL_HINTS}
# A word that holds another (`apikey` holds `key`) is found by looking for the shorter one.
_NAME_WORDS = tuple(sorted(w for w in _WORDS if not any(o != w and o in w for o in _WORDS)))

# The kind of each gate below, in order: checked against `PATTERNS` when this module loads.
_KINDS = (
    "private-key", "private-key", "private-key", "private-key", "private-key", "private-key", "private-key",
    "aws-access-key", "aws-secret", "aws-secret", "github-token", "gitlab-token", "slack-webhook", "slack-token",
    "stripe-key", "google-api-key", "anthropic-key", "openai-key", "huggingface-token", "npm-token", "pypi-token",
    "twilio", "sendgrid", "jwt", "azure-storage-key", "url-password", "authorization-header",
    "authorization-header", "cli-password", "cli-password", "cli-password", "netrc-password", "assignment",
    "assignment",
)
if _KINDS != tuple(pattern.kind for pattern in PATTERNS):
    msg = "lessons.redaction.secret_gates is out of step with lessons.redaction.secret_shapes.PATTERNS"
    raise ImportError(msg)
_RANKED: tuple[tuple[int, SecretPattern], ...] = tuple(enumerate(PATTERNS))


def _folded(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


def _named(folded: str) -> bool:
    """Whether some word of the text can be a credential's name (see above)."""
    squeezed = folded.replace("_", "").replace(".", "").replace("-", "")
    return any(word in squeezed for word in _NAME_WORDS)


def _mixed_run(text: str) -> bool:
    """A run an ordinary name's value could be a generated credential in: upper and lower case and digits."""
    for run in _VALUE_RUN.findall(text):
        if not run.islower() and not run.isupper() and any(c.isdigit() for c in run):
            return True
    return False


def candidates(text: str) -> list[tuple[int, SecretPattern]]:
    """(rank, shape) of every shape that can match `text`, in the order of `PATTERNS`.

    Written out as plain tests rather than a table of functions: this runs for every
    text a store writes, and a call per shape cost more than the shapes it saved.
    """
    t = text
    f = _folded(t)
    b64 = max(map(len, _BASE64_RUN.findall(t)), default=0)
    named = None
    if "-" in t or ":" in t or "=" in t:
        named = _named(f)
    gates = (
        "-----BEGIN " in t,  # private-key: a whole block
        "-----END " in t,  # private-key: a block whose BEGIN was cut off
        b64 >= 60,  # private-key: two or more body lines
        "b3BlbnNzaC1rZXktdjE" in t,  # private-key: an OpenSSH body
        "LS0tLS1CRUdJTi" in t,  # private-key: a base64-encoded PEM block
        b64 >= 40,  # private-key: a DER key's first line
        b64 >= 64,  # private-key: one body line on its own
        b64 >= 20,  # aws-access-key
        "aws" in f and "secret" in f,  # aws-secret, labelled
        b64 >= 40,  # aws-secret, by shape
        "gh" in t or "github_pat_" in t,  # github-token
        "gl" in t,  # gitlab-token
        "https://hooks.slack.com/" in t,  # slack-webhook
        "xox" in t or "xapp-" in t,  # slack-token
        "_live_" in t or "_test_" in t or "whsec_" in t,  # stripe-key
        "AIza" in t,  # google-api-key
        "sk-ant-" in t,  # anthropic-key
        "sk-" in t,  # openai-key
        "hf_" in t,  # huggingface-token
        "npm_" in t,  # npm-token
        "pypi-AgE" in t,  # pypi-token
        b64 >= 34,  # twilio
        "SG." in t,  # sendgrid
        "eyJ" in t,  # jwt
        "sig=" in t or "accountkey=" in f or "sharedaccesskey=" in f,  # azure-storage-key
        "://" in t,  # url-password
        "authorization" in f,  # authorization-header
        "api-key" in f or "auth-token" in f or "access-token" in f or "api-token" in f,  # authorization-header
        "-u" in t,  # cli-password: -u, --user, --proxy-user, --http-user
        "-p" in t,  # cli-password: after mysql
        "-p" in t,  # cli-password: after sshpass
        "password" in t,  # netrc-password
        (":" in t or "=" in t) and (bool(named) or _mixed_run(t)),  # assignment
        "-" in t and bool(named),  # assignment: a flag
    )
    return list(compress(_RANKED, gates))
