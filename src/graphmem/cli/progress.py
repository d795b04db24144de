"""Progress on stderr for long CLI work: a rich bar on a terminal, plain lines otherwise, nothing with --json."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

__all__ = ["_Progress", "_progress_mode"]


class _Progress:
    """Rich progress bar on a terminal, plain lines otherwise, nothing with --json."""

    def __init__(self, mode: str, label: str = "ingest") -> None:
        self.mode = mode
        self.label = label
        self.bar: Any = None
        self.task: Any = None
        self._last = 0.0

    def __enter__(self) -> _Progress:
        if self.mode == "rich":
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[rate]}/s"), TimeElapsedColumn(),
                                TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[doc]}"),
                                transient=False)
            self.bar.__enter__()
            self.task = self.bar.add_task(self.label, total=None, rate="-", doc="")
        return self

    def __call__(self, done: int, total: int, doc_id: str) -> None:
        if self.mode == "rich":
            elapsed = self.bar.tasks[0].elapsed or 0.0
            rate = f"{done / elapsed:.0f}" if elapsed > 0 else "-"
            self.bar.update(self.task, completed=done, total=total, rate=rate, doc=doc_id[-40:])
        elif self.mode == "plain":
            now = time.monotonic()
            if now - self._last >= 2.0 or done == total:
                self._last = now
                click.echo(f"{self.label}: {done}/{total} ({doc_id})" if doc_id else f"{self.label}: {done}/{total}",
                           err=True)

    def stage(self, what: str) -> None:
        """A step without a count (embedding, the final wiki flush): say it is running."""
        if self.mode == "rich":
            self.bar.update(self.task, doc=what)  # the label says what runs; the elapsed time keeps going
        elif self.mode == "plain":
            click.echo(f"{self.label}: {what}", err=True)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _progress_mode(as_json: bool) -> str:
    """How to show progress: nothing with --json, a bar on a terminal, plain lines on stderr otherwise."""
    return "none" if as_json else ("rich" if sys.stderr.isatty() else "plain")
