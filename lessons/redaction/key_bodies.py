"""What a key's body encodes: private keys told from public ones without their BEGIN line.

`lessons.redaction.secret_shapes` finds runs of base64 that may be key material; this module
decides from the bytes. A body line of a key whose BEGIN and END lines are both gone
(a lone line in a log, a message that is one line of a key) is told apart by what it
encodes, not by its look: a DER private key starts SEQUENCE { INTEGER 0..3 } (PKCS#1
RSA and DSA, SEC1 EC, PKCS#8, PKCS#12) or SEQUENCE { SEQUENCE { OID of a
password-based cipher } } (an encrypted PKCS#8 key); certificates and public keys
start otherwise and are kept, as are bodies inside a public block whose BEGIN line is
in the text. A whole PEM block base64-encoded (a Kubernetes secret, a CI variable) is
kept only when it decodes to public blocks alone: what cannot be read is a secret.
"""

from __future__ import annotations

import base64
import binascii
import re

_PBE_OIDS = (bytes.fromhex("2a864886f70d0105"), bytes.fromhex("2a864886f70d010c01"))
_LINE_BREAKS = re.compile(r"\\n|\s")  # real ones, and the escaped `\n` of JSON text
_PEM_BEGIN = re.compile(rb"-----BEGIN [A-Z0-9 ]+-----")
_SSH_PUBLIC_KEY_TYPE = re.compile(r"(?:ssh|ecdsa|sk)-[a-z0-9@.-]+[ \t]+\Z")


def _der_header(data: bytes, at: int) -> tuple[int, int] | None:
    """(tag, offset of the contents) of the DER element at `at`; None when it is cut or malformed."""
    if at + 2 > len(data):
        return None
    tag, first = data[at], data[at + 1]
    if first < 0x80:
        return tag, at + 2
    width = first & 0x7F
    if not 1 <= width <= 3 or at + 2 + width > len(data):
        return None
    return tag, at + 2 + width


def b64_decoded(text: str, chars: int | None = None) -> bytes | None:
    """The bytes a base64 run (wrapped in real or escaped line breaks) encodes, from its first
    `chars` characters (None: all); None when it is no base64."""
    body = _LINE_BREAKS.sub("", text)[:chars].rstrip("=")
    body = body[: len(body) - len(body) % 4]
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return None


def is_der_private_key(data: bytes) -> bool:
    """Whether DER bytes start as a private key does (see above), from its first few dozen bytes."""
    outer = _der_header(data, 0)
    if outer is None or outer[0] != 0x30:
        return False
    inner = _der_header(data, outer[1])
    if inner is None:
        return False
    tag, contents = inner
    if tag == 0x02:  # INTEGER: a private key's version is one byte, 0 to 3; a public modulus is long
        return data[outer[1] + 1:outer[1] + 2] == b"\x01" and contents < len(data) and data[contents] <= 3
    if tag == 0x30:
        oid = _der_header(data, contents)
        if oid is None or oid[0] != 0x06:
            return False
        return any(data[oid[1]:oid[1] + len(prefix)] == prefix for prefix in _PBE_OIDS)
    return False


def der_body_is_private(text: str) -> bool:
    """Whether a base64 run starts as the body of a DER private key."""
    return is_der_private_key(b64_decoded(text, 96) or b"")


def wrapped_pem_is_public(text: str) -> bool:
    """Whether a base64 run that starts as an encoded "-----BEGIN" holds public blocks only."""
    decoded = b64_decoded(text)
    return decoded is not None and b"PRIVATE" not in decoded and _PEM_BEGIN.match(decoded) is not None


def inside_public_block(text: str, start: int) -> bool:
    """Whether `start` lies in a block whose BEGIN line (before it, not yet ended) names no private key."""
    before = text[:start]
    begin = before.rfind("-----BEGIN ")
    if begin == -1 or "-----END " in before[begin:]:
        return False
    return "PRIVATE" not in before[begin:before.find("-----", begin + 11) + 5]


def after_ssh_key_type(text: str, start: int) -> bool:
    """Whether `start` follows an SSH key type on its line (`ssh-ed25519 AAAA...`): a public key."""
    line_start = text.rfind("\n", 0, start) + 1
    return _SSH_PUBLIC_KEY_TYPE.search(text, max(line_start, start - 64), start) is not None
