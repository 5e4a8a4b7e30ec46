"""`live.log` is redacted as it is written: a known value is never split where a long line is cut."""

from __future__ import annotations

import io

from failres.engine import live_log
from lessons.redaction import known_secrets


class Kept(io.BytesIO):
    def close(self) -> None:  # keep the bytes readable after the writer closes it
        self.kept = self.getvalue()
        super().close()


def test_a_known_value_across_the_cut_of_a_long_line_is_redacted(monkeypatch) -> None:
    monkeypatch.setattr(known_secrets, "_values", frozenset())
    secret = "included-value-0123456789"
    known_secrets.remember_secret_values([secret])
    out = Kept()
    writer = live_log.RedactingLive(out)
    # One line, no newline yet, longer than the writer holds: the value straddles the old cut.
    head = b"x" * (live_log._MAX_PENDING - 10)
    writer.write(head + secret.encode()[:15])
    writer.write(secret.encode()[15:] + b" and more" + b"y" * 100)
    writer.close()
    assert secret.encode() not in out.kept
    assert known_secrets.MARKER.encode() in out.kept
    assert out.kept.startswith(b"x" * 1000) and out.kept.endswith(b"y" * 100)
