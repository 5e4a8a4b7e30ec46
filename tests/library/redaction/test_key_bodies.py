"""Key bodies without their BEGIN and END lines, and whole PEM blocks base64-encoded, never
reach git or failres's own files: a lone line of each common key kind, through redaction,
`lessons import`, a quarantine's snapshot ref and the dispatch's `seat.log`."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from conftest import git
from lessons.redaction.redact import find_secrets, redact
from project import Project

# First lines of private keys as `ssh-keygen` and `openssl` write them: the structure of
# each kind, then made-up characters (none is a key).
LONE_LINES = {
    "openssh": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQy5mT8",
    "rsa pkcs1": "MIIEpAIBAAKCAQEASfTdYVIKdRpE6WMmVqgy7Nu4DinX2EzrWn+PTwpyXaWiz0dQ",
    "pkcs8": "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCk7FcoOKpYqNp8O4fg5b5egNWaP+CZ2JL",
    "ec sec1": "MHcCAQEEIpr9+rRXeMLkI+mF549E3Y3feyvfpQtlKcvEhCkmtxShh/HKZ0Nqqg9w",
    "ec pkcs8": "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgj05x72QIBOBt+jOX",
    "ed25519 pkcs8": "MC4CAQAwBQYDK2VwBCIEI17rwevXROPMo6w9/YnSosutBFuWZOV1SJbnmfzLVlU5",
    "encrypted pkcs8": "MIIFLTBXBgkqhkiG9w0BBQ0wmHIKFHYpSRteixDhjWQriSbiRLYdRwnhA9zpj055",
    "dsa": "MIIBygIBAAKBgQH3zy7iSG/QoWvXq3Pz9WPZCvrmK245bRXQQ+kYZSoNfG4XARi6",
}
PEM = ("-----BEGIN EC PRIVATE KEY-----\nqB7Zr2Lk9Xw4Nf6Tj1Hs8Gd3Vc5Pm0Ya2Ue7Ri4Ko9Wb6Sn1Jt3Qx8Ml5Fz0Dh2\n"
       "-----END EC PRIVATE KEY-----\n")
WRAPPED = base64.b64encode(PEM.encode()).decode()  # as in a Kubernetes secret or a CI variable
WRAPPED_LINES = "\n".join(WRAPPED[i:i + 76] for i in range(0, len(WRAPPED), 76))  # as `base64` prints it
# Every full line: the last, short one encodes only the END line's label.
SECRETS = [*LONE_LINES.values(), WRAPPED, *(line for line in WRAPPED_LINES.splitlines() if len(line) == 76)]


@pytest.mark.parametrize("kind", sorted(LONE_LINES))
def test_a_lone_first_line_of_a_key_is_redacted(kind: str) -> None:
    line = LONE_LINES[kind]
    for text in (line, f"the step printed {line} and stopped", f"{{\"key\": \"{line}\"}}"):
        assert line not in redact(text), text
        assert [finding.kind for finding in find_secrets(text)] == ["private-key"]


def test_a_whole_pem_block_base64_encoded_is_redacted_on_one_line_and_wrapped() -> None:
    assert WRAPPED.startswith("LS0tLS1CRUdJTi")
    assert redact(f"tls.key: {WRAPPED}") == "tls.key: [REDACTED:private-key]"
    wrapped = redact(f"$ base64 key.pem\n{WRAPPED_LINES}\n$ next")
    assert wrapped == "$ base64 key.pem\n[REDACTED:private-key]\n$ next"


def test_a_base64_encoded_certificate_is_no_secret_and_is_kept() -> None:
    cert = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUFakeCertificateBodyForTests0wCgYIKoZIzj0EAwIw\n-----END CERTIFICATE-----\n"
    text = f"tls.crt: {base64.b64encode(cert.encode()).decode()}"
    assert redact(text) == text


def test_the_line_after_a_wrapped_key_is_not_taken_for_part_of_it() -> None:
    assert redact(f"{LONE_LINES['pkcs8']}\ncanary2: the next line") == "[REDACTED:private-key]\ncanary2: the next line"


def test_a_lesson_imported_whose_message_is_one_key_line_is_stored_redacted(repo: Path, tmp_path: Path, cli) -> None:
    source = tmp_path / "lessons.jsonl"
    source.write_text("".join(json.dumps({"ts": "2026-01-01T00:00:00Z", "slug": "s", "task": f"t{n}",
                                          "failClass": "unknown", "message": secret}) + "\n"
                              for n, secret in enumerate(SECRETS)))
    done = cli(repo, "lessons", "import", str(source))
    assert done.code == 0, done.err
    held = git(repo, "log", "-p", "--all")
    assert [secret[:24] for secret in SECRETS if secret in held] == []
    assert held.count("[REDACTED:private-key]") >= len(SECRETS)


def test_key_bodies_a_seat_leaves_are_absent_from_the_snapshot_ref_and_seat_log(tmp_path: Path, cli, seat_world) -> None:
    project = Project.create(tmp_path)
    leaked = "\n".join([f"key: {LONE_LINES['openssh']}", f"tls.key: {WRAPPED}", WRAPPED_LINES,
                        LONE_LINES["rsa pkcs1"], ""])
    project.configure(implementer=[{"write": {"src/calc.py": "# " + leaked.replace("\n", "\n# ") + "\nBROKEN = 1\n"},
                                    "print": leaked, "exit": 1}])
    done = cli(project.top, "run", str(project.plan()), "--quiet")
    assert done.code == 1, done.err
    assert git(project.top, "for-each-ref", "refs/failres/snapshots/")  # the quarantine kept its snapshot
    held = git(project.top, "log", "-p", "--all")
    assert [secret[:24] for secret in SECRETS if secret in held] == []
    logs = project.dispatch_logs()
    assert logs and (logs[0] / "seat.log").exists()
    written = "".join(path.read_text(errors="replace") for path in (project.top / ".git" / "failres").rglob("*")
                      if path.is_file() and path.suffix in ("", ".log", ".md", ".json", ".txt"))
    assert [secret[:24] for secret in SECRETS if secret in written] == []
    assert "[REDACTED:private-key]" in (logs[0] / "seat.log").read_text()
