"""A live view of a run on a terminal: per task, its step, seat, attempt and elapsed time."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from failres.engine.progress import FINAL_STEPS


@dataclass
class _Row:
    step: str
    seat: str
    attempt: str
    started: float
    finished: float | None = None


class LiveProgress:
    """Redraws one table in place (rich Live) while tasks run; leaves the final state on screen."""

    def __init__(self, clock=time.monotonic) -> None:
        from rich.console import Console
        from rich.live import Live

        self.clock = clock
        self.rows: dict[str, _Row] = {}
        # Tasks of a --jobs run report from their own threads while the display redraws.
        self.lock = threading.Lock()
        self.console = Console(stderr=True)
        self.live = Live(self._table(), console=self.console, refresh_per_second=4, transient=False,
                         get_renderable=self._table)
        self.live.start()

    def _table(self):
        from rich.table import Table

        table = Table(title="failres run", title_justify="left", expand=False)
        for column in ("task", "step", "seat", "attempt", "elapsed"):
            table.add_column(column)
        now = self.clock()
        with self.lock:
            rows = list(self.rows.items())
        for key, row in rows:
            end = row.finished if row.finished is not None else now
            table.add_row(key, row.step, row.seat, row.attempt, f"{end - row.started:.1f}s")
        return table

    def step(self, slug: str, task: str, step: str, *, seat: str | None = None, attempt: int | None = None) -> None:
        key = f"{slug}/{task}"
        with self.lock:
            row = self.rows.get(key)
            if row is None or step == "worktree":
                row = self.rows[key] = _Row(step, "", "", self.clock())
            row.step = step
            if seat is not None:
                row.seat = seat
            if attempt is not None:
                row.attempt = str(attempt)
            if step in FINAL_STEPS:
                row.finished = self.clock()
        if step in FINAL_STEPS:
            self.live.refresh()

    def close(self) -> None:
        """Leave the final table on screen, once. Whatever is printed next goes below it:
        a line written while the display is live would be drawn over at its next refresh."""
        if self.live.is_started:
            self.live.stop()
