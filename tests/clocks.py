"""A deterministic clock for knowledge bases under test: each reading is one second after the last, from
2026-01-01 UTC, so timestamps (and anything pinned from them) are the same on every run."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone


def ticking_clock(start: datetime = datetime(2026, 1, 1, tzinfo=timezone.utc),
                  step: timedelta = timedelta(seconds=1)) -> Callable[[], datetime]:
    """``graphmem.open(..., clock=ticking_clock())``: a fresh clock per knowledge base."""
    now = [start]

    def tick() -> datetime:
        now[0] += step
        return now[0]
    return tick
