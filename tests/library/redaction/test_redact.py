"""Secret redaction: every canary is removed, every look-alike survives byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.redaction.redact import Finding, find_secrets, is_secret_name, redact, redact_value

DATA = Path(__file__).parents[2] / "data"


def unescape_data_line(text: str) -> str:
    """`\\n` in the data files stands for a line break; nothing else is escaped."""
    return text.replace("\\n", "\n")


def _data_lines(name: str) -> list[str]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def load_secret_canaries() -> list[tuple[str, str, str]]:
    """(kind, text containing the secret, the secret) for every canary in the data file."""
    rows = []
    for line in _data_lines("secret_canaries.txt"):
        kind, text, secret = line.split("\t")
        rows.append((kind, unescape_data_line(text), unescape_data_line(secret)))
    return rows


def load_innocent_lookalikes() -> list[str]:
    return [unescape_data_line(line) for line in _data_lines("innocent_lookalikes.txt")]


CANARIES = load_secret_canaries()
LOOKALIKES = load_innocent_lookalikes()


def _canary_id(row: tuple[str, str, str]) -> str:
    return f"{row[0]}:{row[1][:40]}"


# ── the corpus ────────────────────────────────────────────────────────────────


def test_canary_corpus_holds_at_least_thirty_distinct_secrets_of_every_required_kind():
    required = {
        "aws-access-key", "aws-secret", "github-token", "gitlab-token", "slack-token",
        "slack-webhook", "stripe-key", "google-api-key", "openai-key", "anthropic-key",
        "huggingface-token", "npm-token", "pypi-token", "twilio", "sendgrid", "jwt",
        "private-key", "url-password", "assignment", "authorization-header",
        "azure-storage-key", "high-entropy",
    }
    assert len({secret for _, _, secret in CANARIES}) >= 30
    assert required <= {kind for kind, _, _ in CANARIES}


def test_lookalike_corpus_holds_at_least_twenty_five_lines():
    assert len(set(LOOKALIKES)) >= 25


@pytest.mark.parametrize("row", CANARIES, ids=_canary_id)
def test_canary_secret_does_not_survive_redaction(row):
    kind, text, secret = row
    redacted = redact(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted


@pytest.mark.parametrize("row", CANARIES, ids=_canary_id)
def test_canary_is_reported_with_its_kind_over_the_whole_secret(row):
    kind, text, secret = row
    start = text.index(secret)
    covering = [f for f in find_secrets(text) if f.start <= start and f.end >= start + len(secret)]
    assert [f.kind for f in covering] == [kind]


@pytest.mark.parametrize("text", LOOKALIKES, ids=lambda text: text[:40])
def test_innocent_lookalike_survives_byte_for_byte(text):
    assert redact(text) == text
    assert find_secrets(text) == []


def test_every_canary_is_removed_when_all_share_one_text():
    text = "\n".join(text for _, text, _ in CANARIES)
    redacted = redact(text)
    assert [secret for _, _, secret in CANARIES if secret in redacted] == []


def test_a_record_holding_every_canary_serialises_without_any_secret():
    record = {"message": [text for _, text, _ in CANARIES], "task": "t1", "attempt": 2}
    written = json.dumps(redact_value(record), sort_keys=True, indent=2)
    assert [secret for _, _, secret in CANARIES if secret in written] == []


# ── what is kept around a secret ──────────────────────────────────────────────


def test_url_password_keeps_scheme_user_and_host():
    text = "could not connect to postgres://app:Hx7pQ2vL9mZ@db.internal:5432/app"
    assert redact(text) == "could not connect to postgres://app:[REDACTED:url-password]@db.internal:5432/app"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=Hx7pQ2vL9mZ next", "password=[REDACTED:assignment] next"),
        ("passwd: Hx7pQ2vL9mZ", "passwd: [REDACTED:assignment]"),
        ('{"client_secret": "Hx7 pQ2vL9mZ", "a": 1}', '{"client_secret": "[REDACTED:assignment]", "a": 1}'),
        ("API_TOKEN=Hx7pQ2vL9mZ make", "API_TOKEN=[REDACTED:assignment] make"),
        ("run --password Hx7pQ2vL9mZ --verbose", "run --password [REDACTED:assignment] --verbose"),
        ("run --token=Hx7pQ2vL9mZ", "run --token=[REDACTED:assignment]"),
        ("Server=db;Pwd=Hx7pQ2vL9mZ;Encrypt=yes", "Server=db;Pwd=[REDACTED:assignment];Encrypt=yes"),
        ("cfg['api_key'] = 'Hx7pQ2vL9mZ'", "cfg['api_key'] = '[REDACTED:assignment]'"),
    ],
)
def test_assignment_keeps_the_name_and_redacts_only_the_value(text, expected):
    assert redact(text) == expected


def test_authorization_header_keeps_its_scheme():
    text = "Authorization: Bearer Hx7pQ2vL9mZ.aa-bb"
    assert redact(text) == "Authorization: Bearer [REDACTED:authorization-header]"


def test_private_key_block_is_replaced_whole_and_the_text_after_it_kept():
    text = "before\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIAbc\n-----END EC PRIVATE KEY-----\nafter"
    assert redact(text) == "before\n[REDACTED:private-key]\nafter"


def test_private_key_whose_end_was_cut_off_is_redacted_to_the_end_of_the_text():
    text = "log: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5v\nmore lines"
    assert redact(text) == "log: [REDACTED:private-key]"


def test_private_key_inside_a_json_string_with_escaped_line_breaks_is_redacted():
    text = '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkq\\n-----END PRIVATE KEY-----\\n", "n": 1}'
    assert redact(text) == '{"private_key": "[REDACTED:private-key]", "n": 1}'


def test_short_integer_after_a_token_name_is_a_count_and_kept():
    assert redact("token=42 secret: 7") == "token=42 secret: 7"


def test_short_integer_after_a_password_name_is_redacted():
    assert redact("password=1234") == "password=[REDACTED:assignment]"


@pytest.mark.parametrize(
    "text",
    ['password=""', "password: null", "token=None", "password=********", "password: <your password>",
     "token: ${GITHUB_TOKEN}", "token=$GITHUB_TOKEN", "password=%DB_PASSWORD%", "token: {{ secrets.token }}",
     "password = os.getenv(", "api_key = os.environ["],
)
def test_placeholder_value_is_kept(text):
    assert redact(text) == text


def test_working_directory_in_an_environment_dump_is_not_a_password():
    assert redact("PWD=/home/alice/src OLDPWD=/home/alice") == "PWD=/home/alice/src OLDPWD=/home/alice"


def test_specific_kind_wins_over_the_assignment_it_sits_in():
    token = "ghp_" + "Ab3d" * 9
    assert redact(f"GITHUB_TOKEN={token}") == "GITHUB_TOKEN=[REDACTED:github-token]"


def test_a_machine_made_value_is_redacted_in_any_assignment():
    value = "Zk8qW3vN7pL2xR9tY4mB6cJ1"
    assert redact(f"cookie_value={value}") == "cookie_value=[REDACTED:high-entropy]"
    assert redact(f"build_id={value}") == "build_id=[REDACTED:high-entropy]"
    assert redact(f'APP_BLOB = "{value}"') == 'APP_BLOB = "[REDACTED:high-entropy]"'


@pytest.mark.parametrize("text", [
    "build_id=3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a",  # a digest: hex has no upper case
    "run_id=1b4e28ba-2fa1-11d2-883f-0016d3cca427",  # a UUID
    "module=failres.engine.QuarantineStep2",  # a dotted name
    "path=src/components/HeaderTitle2/View.tsx",  # a path: words in it
    "image = iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "version=v2024.11.30-rc1",
])
def test_values_an_assignment_commonly_holds_are_not_taken_for_machine_made_secrets(text):
    assert redact(text) == text


def test_openai_shaped_prefix_on_a_kebab_case_name_is_kept():
    assert redact("sk-this-is-a-very-long-kebab-case-name") == "sk-this-is-a-very-long-kebab-case-name"


# ── markers and idempotence ───────────────────────────────────────────────────


def test_existing_markers_are_never_redacted_again():
    text = "password=[REDACTED:assignment] Authorization: Bearer [REDACTED:authorization-header]"
    assert redact(text) == text


def test_secret_glued_to_an_existing_marker_is_still_redacted():
    assert redact("password=[REDACTED:assignment]Hx7pQ2vL9mZ") == (
        "password=[REDACTED:assignment][REDACTED:assignment]"
    )


@pytest.mark.parametrize("row", CANARIES, ids=_canary_id)
def test_redacting_a_canary_twice_changes_nothing_more(row):
    once = redact(row[1])
    assert redact(once) == once


# ── find_secrets ──────────────────────────────────────────────────────────────


def test_find_secrets_returns_ordered_spans_of_the_secret_values_only():
    text = "password=aB3dE5fG7h and https://u:Qw9Er7Ty5@h.example.com/"
    assert find_secrets(text) == [
        Finding("assignment", 9, 19),
        Finding("url-password", text.index("Qw9"), text.index("@h.")),
    ]


def test_find_secrets_on_text_without_secrets_is_empty():
    assert find_secrets("3 failed, 2 passed in 1.2s") == []


# ── redact_value ──────────────────────────────────────────────────────────────


def test_redact_value_redacts_strings_inside_dicts_lists_and_tuples_and_keeps_keys():
    token = "ghp_" + "Ab3d" * 9
    value = {"ghp_key_name": [f"use {token}", ("postgres://u:Qw9Er7Ty5@h/db",)], "n": 3}
    assert redact_value(value) == {
        "ghp_key_name": ["use [REDACTED:github-token]", ("postgres://u:[REDACTED:url-password]@h/db",)],
        "n": 3,
    }


def test_redact_value_replaces_a_whole_string_under_a_secret_key():
    value = {"env": {"DB_PASSWORD": "hunter2", "HOME": "/home/alice"}}
    assert redact_value(value) == {"env": {"DB_PASSWORD": "[REDACTED:assignment]", "HOME": "/home/alice"}}


def test_redact_value_keeps_numbers_booleans_and_null():
    value = {"password": 1234, "ok": True, "ratio": 0.5, "none": None}
    assert redact_value(value) == value


def test_redact_value_twice_changes_nothing_more():
    value = {"password": "hunter2", "log": [text for _, text, _ in CANARIES]}
    once = redact_value(value)
    assert redact_value(once) == once


# ── names ─────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "name",
    ["password", "DB_PASSWORD", "passwd", "pwd", "db_pass", "token", "GH_TOKEN", "_authToken", "secret",
     "client_secret", "clientSecret", "api_key", "apikey", "APIKey", "x-api-key", "access_key",
     "aws_secret_access_key", "AccountKey", "private_key", "SECRET_KEY_BASE", "credentials"],
)
def test_credential_name_is_recognised(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["token_count", "max_tokens", "tokenizer", "token_type", "password_hash", "secret_name", "passed",
     "bypass", "key", "PWD", "OLDPWD", "aws_access_key_id", "user", "secrets"],
)
def test_ordinary_name_is_not_a_credential_name(name):
    assert not is_secret_name(name)


# ── properties ────────────────────────────────────────────────────────────────

_FRAGMENTS = st.sampled_from(
    [secret for _, _, secret in CANARIES]
    + [text for _, text, _ in CANARIES[::5]]
    + LOOKALIKES[::4]
    + ["password", "token", "=", ":", " ", "\n", '"', "'", "\\", "@", "://", "-----BEGIN RSA PRIVATE KEY-----",
       "[REDACTED:assignment]", "Authorization: Bearer ", "--token ", "(", "[", "AccountKey=", "${X}"]
)
_MIXED_TEXT = st.lists(_FRAGMENTS | st.text(max_size=12), max_size=12).map("".join)
# Lowercase words, digits and punctuation without `=`, `:`, `-`, `_`, `/`, `@`: no secret
# shape and no assignment can be spelled from these.
_SAFE_TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 .,;!?()'\"\n")


@settings(deadline=None)
@given(st.text())
def test_redact_never_raises_and_returns_text(text):
    assert isinstance(redact(text), str)


@settings(deadline=None, max_examples=300)
@given(st.text() | _MIXED_TEXT)
def test_redact_is_idempotent(text):
    once = redact(text)
    assert redact(once) == once


@settings(deadline=None)
@given(_SAFE_TEXT)
def test_text_without_secret_shapes_is_left_unchanged(text):
    assert redact(text) == text


_SELF_EVIDENT_KINDS = frozenset(
    {"aws-access-key", "github-token", "gitlab-token", "slack-token", "stripe-key", "google-api-key",
     "openai-key", "anthropic-key", "huggingface-token", "npm-token", "pypi-token", "twilio", "sendgrid", "jwt"}
)
_SELF_EVIDENT_SECRETS = [secret for kind, _, secret in CANARIES if kind in _SELF_EVIDENT_KINDS]


@settings(deadline=None)
@given(st.text(max_size=30), st.sampled_from(_SELF_EVIDENT_SECRETS), st.text(max_size=30))
def test_a_secret_recognisable_by_its_shape_is_removed_whatever_surrounds_it(before, secret, after):
    assert secret not in redact(f"{before} {secret} {after}")
