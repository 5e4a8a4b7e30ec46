"""What reading a transcript costs, against parsing its JSON alone, timed in the same run.

    python bench/bench_transcripts.py [--records N] [--repeat N]

A Claude Code session of `--records` records is built in the shapes Claude Code 2.1
writes (a task, then rounds of a tool call, its result, attachments and bookkeeping
lines, with every other round's result written before its call, as parallel calls are),
and read with `load_claude_code` (pairing results with calls across the whole file,
ordering records after their parent, classifying every record and judging each tool
result's provenance). The baseline is `json.loads` of every line of the same file: the
floor any reader pays. Median of `--repeat`; the ratio is reader / baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lessons.learning.transcripts.claude_code import load_claude_code  # noqa: E402
from lessons.learning.interventions import extract_interventions  # noqa: E402

CWD = "/home/ana/project"


def session(records: int) -> list[dict]:
    out: list[dict] = []
    parent = None

    def add(kind: str, **fields: object) -> None:
        nonlocal parent
        uuid = f"u{len(out)}"
        out.append({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "bench", "cwd": CWD,
                    "isSidechain": False, "entrypoint": "cli", "timestamp": "2026-12-01T10:00:00.000Z", **fields})
        parent = uuid

    add("user", message={"role": "user", "content": "tidy the docs"})
    n = 0
    while len(out) < records:
        call = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": f"{CWD}/doc{n}.md"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "# Doc\n" + "text " * 200}
        add("assistant", message={"role": "assistant", "content": [{"type": "text", "text": "Reading."}, call]})
        add("user", message={"role": "user", "content": [result]}, toolUseResult={"type": "text"})
        if n % 2:  # a result written before its call
            out[-1], out[-2] = out[-2], out[-1]
        add("attachment", attachment={"type": "task_reminder", "content": [], "itemCount": 0})
        out.append({"type": "progress", "data": {"type": "hook_progress"}, "sessionId": "bench"})
        n += 1
    return out


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "session.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in session(args.records)))
        size = path.stat().st_size

        def baseline() -> None:
            with path.open("rb") as stream:
                for line in stream:
                    json.loads(line)

        def reader() -> None:
            extract_interventions(load_claude_code(path))

        base = median_time(baseline, args.repeat)
        measured = median_time(reader, args.repeat)
    print(f"transcript read: {args.records} records, {size / 1e6:.1f} MB: reader {measured * 1000:.0f} ms, "
          f"json.loads of every line {base * 1000:.0f} ms, ratio {measured / base:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
