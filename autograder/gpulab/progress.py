"""Progress of a batch: done / total, what each GPU worker grades now, elapsed and ETA.

On a terminal it is a live rich display (Debian's python3-rich); elsewhere (a job log, a pipe,
a test) one plain line per event, so that a Slurm or CI log reads top to bottom.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress


def eta(done: int, total: int, elapsed: float) -> str:
    if done == 0:
        return "?"
    left = elapsed / done * (total - done)
    return f"{int(left // 3600)}h{int(left % 3600 // 60):02d}m" if left >= 3600 else f"{int(left // 60)}m{int(left % 60):02d}s"


class Progress:
    """Events from graders ({"ev": "start"|"done", "worker", "name", "what", "failed"}) turned into
    progress. `log` given: plain lines to it (None: stderr, live when stderr is a terminal)."""

    def __init__(self, total: int, workers: list[str], log: Callable[[str], None] | None = None) -> None:
        self.total, self.done, self.failed = total, 0, 0
        self.start = time.monotonic()
        self._lock = threading.Lock()
        self._live: Live | None = None
        self._log = log or (lambda m: print(m, file=sys.stderr, flush=True))
        if log is None and sys.stderr.isatty() and total > 0:
            # One bar for the batch; one line per GPU: its current submission and for how long.
            self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
            self._overall = self._bar.add_task("batch", total=total)
            self._gpus = RichProgress(TextColumn("  {task.description}"), TimeElapsedColumn())
            self._rows = {w: self._gpus.add_task(f"{w}: idle", total=None, start=False) for w in workers}
            self._live = Live(Group(self._bar, self._gpus), console=Console(stderr=True), refresh_per_second=4)

    def __enter__(self) -> "Progress":
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.stop()

    def note(self, message: str) -> None:
        if self._live is not None:
            self._live.console.print(message, markup=False, highlight=False)
        else:
            self._log(message)

    def event(self, ev: dict[str, Any]) -> None:
        with self._lock:
            worker, name = str(ev.get("worker", "")), str(ev.get("name", ""))
            if ev.get("ev") == "start":
                if self._live is not None and worker in self._rows:
                    self._gpus.reset(self._rows[worker], description=f"{worker}: {name}")
                return
            if ev.get("ev") != "done":
                return
            self.done += 1
            self.failed += bool(ev.get("failed"))
            line = (f"[{self.done}/{self.total}] {name}: {ev.get('what', '')}  ({worker}; "
                    f"ETA {eta(self.done, self.total, time.monotonic() - self.start)})")
            if self._live is not None:
                self._bar.advance(self._overall)
                if worker in self._rows:
                    self._gpus.reset(self._rows[worker], description=f"{worker}: idle", start=False)
            self.note(line)
