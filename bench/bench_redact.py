"""Redaction stays linear on text shaped to make regular expressions backtrack.

    .venv/bin/python bench/bench_redact.py [--size N]

Every write path redacts what a seat printed, and a seat prints any bytes: a text
built so that one pattern retries a long run from every position would cost
quadratic time, and a 4 MB log would hold a run up for hours. For each hostile
shape the text is redacted at N and at 8N characters; the baseline is an ordinary
log of the same length, redacted in the same run. The ratio printed is
(hostile at 8N / hostile at N) / (ordinary at 8N / ordinary at N): about 1 when the
hostile text grows as ordinary text does, about 8 when it is quadratic.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lessons.redaction.redact import forget_judged, redact  # noqa: E402

LINE = "2026-12-01 09:00:00 INFO tests/test_calc.py::test_add PASSED in 0.01s (worker 3)\n"

HOSTILE: dict[str, Callable[[int], str]] = {
    "key body lines": lambda n: ("A" * 64 + "\n") * (n // 65),
    "escaped line breaks": lambda n: "AAAA\\n" * (n // 6),
    "one base64 run": lambda n: "Ab1+" * (n // 4),
    "names and colons": lambda n: "a:" * (n // 2),
    "names and equals": lambda n: "a=" * (n // 2),
    "flags": lambda n: "--a " * (n // 4),
    "curl users": lambda n: "-u a:" * (n // 5),
    "netrc words": lambda n: "machine x " * (n // 10),
    "jwt pieces": lambda n: "eyJaaaaaaaaa." * (n // 13),
    "url users": lambda n: "ab://a:" * (n // 7),
    "DER starts": lambda n: ("M" + "A" * 60 + "-") * (n // 62),
    "wrapped PEM starts": lambda n: ("LS0tLS1CRUdJTi" + "A" * 50 + " ") * (n // 65),
    "quotes": lambda n: '"' * n,
}


def timed(text: str, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        forget_judged()  # a text redaction has judged is not judged again: time the judging
        start = time.perf_counter()
        redact(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    small, big = args.size, args.size * 8
    ordinary = timed(LINE * (big // len(LINE)), args.rounds) / timed(LINE * (small // len(LINE)), args.rounds)
    print(f"{'shape':22} {'at N':>10} {'at 8N':>10}  ratio (1: linear, 8: quadratic)")
    worst = 0.0
    for name, build in HOSTILE.items():
        at_small, at_big = timed(build(small), args.rounds), timed(build(big), args.rounds)
        ratio = (at_big / at_small) / ordinary
        worst = max(worst, ratio)
        print(f"{name:22} {at_small * 1000:8.1f}ms {at_big * 1000:8.1f}ms  {ratio:.2f}")
    print(f"worst ratio {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
