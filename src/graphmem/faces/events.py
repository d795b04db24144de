"""``kb.events``: the append-only change log (one entry per change, written in the same
transaction as the change), and the feed over it: subscriptions, following, forwarding to a sink."""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..models import Event
from ..store import open_store
from ..store.protocols import EventStore
from ..validate import checked_inputs
from ..wiki.markdown import dump_front_matter

if TYPE_CHECKING:
    from ..feed.follow import DeliveryFailure, Subscription, Subscriptions
    from .host import FaceHost

__all__ = ["Events", "ReplayView"]


class ReplayView:
    """A read-only knowledge base as it was at an earlier event (its own copy, removed by :meth:`close`):
    ``graph``, ``memory``, ``documents``, ``search`` and the pages index answer as they did then. ``replay_stats``
    says what the replay undid."""

    def __init__(self, kb: Any, folder: Path, until: int, stats: dict[str, int]) -> None:
        self.kb = kb
        self.folder = folder
        self.until = until
        self.replay_stats = stats

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kb, name)

    def close(self) -> None:
        """Close the view and remove its copy."""
        self.kb.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> ReplayView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_ts(value: datetime) -> str:
    """A datetime in the stored timestamp form (ISO-8601 UTC, milliseconds, ``Z``)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)  # a naive time is taken as UTC, as graphmem stores it
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@checked_inputs("events")
class Events:
    """The events face of a knowledge base."""

    def __init__(self, kb: FaceHost, open_view: Callable[[Path], Any] | None = None) -> None:
        self._kb = kb
        self._subscriptions: Subscriptions | None = None
        self._open_view = open_view  # opens a folder read-only as a knowledge base (kb.py passes graphmem.open)

    def list(self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None,
             limit: int = 100) -> list[Event]:
        """Events with id greater than ``after_id``, oldest first (page with the last id seen). ``types``:
        graphmem's names or ContextKit's (``node_added``); an unknown one is InvalidInput."""
        from ..feed.types import filter_types

        return self._kb.store.list_events(after_id, filter_types(types), target, limit)

    def last_id(self) -> int:
        """The id of the newest committed event (0: empty log)."""
        return self._kb.store.last_event_id()

    # -- the feed ----------------------------------------------------------------------------------

    def _open_reader(self) -> EventStore:
        # Its own read-only connection: a follower thread must not read through the writer's connection,
        # where it would see (and deliver) events of a transaction that may still roll back.
        return open_store(self._kb.home, busy_timeout=self._kb.config.store.busy_timeout,
                          read_only="following the change log")

    def _subs(self) -> Subscriptions:
        if self._subscriptions is None:
            from ..feed.follow import Subscriptions

            self._subscriptions = Subscriptions(self._open_reader, self._kb.store.last_event_id)
        return self._subscriptions

    def subscribe(self, callback: Callable[[Event], Any], event_types: Sequence[str] | None = None,
                  from_event_id: int | None = None, scope: Mapping[str, Any] | None = None, *,
                  retries: int = 3, backoff: float = 0.05,
                  on_error: Callable[[DeliveryFailure], Any] | None = None) -> str:
        """Call ``callback(event)`` for each event with id greater than ``from_event_id`` (None: only new
        ones; 0: the whole log first), in order, at least once, whichever process wrote it. ``event_types``
        may use graphmem's types or ContextKit's names; ``scope`` keeps events of one user/agent/run/tenant.
        A raising callback is retried with backoff, then reported to ``on_error`` (default: a warning).
        Returns a token for :meth:`unsubscribe`."""
        return self._subs().subscribe(callback, event_types, from_event_id, scope, retries=retries,
                                      backoff=backoff, on_error=on_error)

    def unsubscribe(self, token: str) -> bool:
        """Stop a subscription; False if ``token`` names none (already stopped)."""
        if not isinstance(token, str):
            raise InvalidInput(f"token: expected the string subscribe() returned, got {token!r}")
        return self._subscriptions is not None and self._subscriptions.unsubscribe(token)

    def subscription(self, token: str) -> Subscription:
        """A subscription's state: ``last_delivered`` event id and ``failures``."""
        sub = self._subscriptions.get(token) if self._subscriptions is not None else None
        if sub is None:
            raise InvalidInput(f"token: no subscription {token!r} in this process; subscribe() first")
        return sub

    def follow(self, after_id: int = 0, types: Sequence[str] | None = None, scope: Mapping[str, Any] | None = None,
               poll: float = 0.05, stop: threading.Event | None = None) -> Iterator[Event]:
        """Events after ``after_id``, the backlog then every new commit, until ``stop`` is set."""
        if not isinstance(after_id, int) or after_id < 0:
            raise InvalidInput(f"after_id: expected a non-negative event id, got {after_id!r}")
        from ..feed.follow import check_scope, follow  # the feed (and its webhook sinks' urllib) on first use

        return follow(self._open_reader, after_id, [types] if isinstance(types, str) else types,
                      check_scope(scope), poll, stop)

    def cursor(self, name: str) -> int | None:
        """Where the named consumer (e.g. ``webhook:<url>``) got to; None if it never ran."""
        return self._kb.store.feed_cursor(name)

    def forward(self, sink: Callable[[Event], Any], name: str, from_event_id: int = 0,
                types: Sequence[str] | None = None, poll: float = 0.2, stop: threading.Event | None = None,
                max_events: int | None = None) -> int:
        """Send every event to ``sink`` in order, recording in the knowledge base after each one where the
        consumer ``name`` got to, so that a restart resumes after the last event handled (``from_event_id``
        applies only to a consumer that never ran). Runs until ``stop`` is set or ``max_events`` were sent;
        returns how many were sent."""
        if not isinstance(name, str) or not name:
            raise InvalidInput("name: the consumer needs a non-empty name to record its position under")
        store = self._kb.store
        stored = store.feed_cursor(name)
        start = stored if stored is not None else from_event_id
        stop = stop or threading.Event()
        sent = 0
        from ..feed.types import graphmem_types

        for event in self.follow(start, graphmem_types(types) if types else None, None, poll, stop):
            sink(event)
            with store.transaction():
                store.set_feed_cursor(name, event.id, self._kb.now())
            sent += 1
            if max_events is not None and sent >= max_events:
                stop.set()
        return sent

    # -- replay ----------------------------------------------------------------------------------------

    def resolve(self, until: int | datetime | str) -> int:
        """The event id ``until`` names: an id, or a time (datetime or ISO-8601 string: the last event at or
        before it)."""
        if isinstance(until, bool):
            raise InvalidInput(f"until: expected an event id or a time, got {until!r}")
        if isinstance(until, int):
            return until
        if isinstance(until, str):
            text = until.strip()
            if text.isdigit():
                return int(text)
            try:
                until = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise InvalidInput(f"until: {text!r} is neither an event id nor an ISO-8601 time "
                                   "(e.g. 2026-01-31T12:00:00Z)") from None
        if not isinstance(until, datetime):
            raise InvalidInput(f"until: expected an event id or a time, got {until!r}")
        return self._kb.store.event_id_at(_as_ts(until))

    def replay(self, until: int | datetime | str) -> ReplayView:
        """A read-only view of the knowledge base as it was right after event ``until`` (an id, or a time:
        the last event at or before it). Built by undoing, on a copy, the changes logged since (cost grows
        with the changes undone, not with the history before). Close it when done."""
        if self._open_view is None:
            raise InvalidInput("replay: this knowledge base was built without a way to open views")
        event_id = self.resolve(until)
        folder = Path(tempfile.mkdtemp(prefix="graphmem-replay-"))
        try:
            stats = self._kb.store.replay_to(folder / "graph.db", event_id)
            if (self._kb.home / "config.toml").is_file():  # the same settings (embedding model, presets)
                shutil.copy2(self._kb.home / "config.toml", folder / "config.toml")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "opened read-only": that is the point of a view
                view = self._open_view(folder)
            self._wiki_as_of(folder, view.store)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return ReplayView(view, folder, event_id, {"until": event_id, **stats})

    def _wiki_as_of(self, folder: Path, then: Any) -> None:
        """The view's page files: a page unchanged since is the current file, copied; a page changed or
        deleted since is written from its row as it was (its front matter and body)."""
        current = {r["slug"]: r["content_hash"] for _, r in self._kb.store.dump_rows(["pages"])}
        src, dst = self._kb.home / "wiki", folder / "wiki"
        for _, row in then.dump_rows(["pages"]):
            slug, rel, content_hash = row["slug"], row["path"], row["content_hash"]
            front_matter, content = row["front_matter"], row["content"]
            target = (dst / rel).resolve()
            if not target.is_relative_to(dst.resolve()):
                continue  # never write outside the view's wiki folder
            target.parent.mkdir(parents=True, exist_ok=True)
            here = src / rel
            if current.get(slug) == content_hash and here.is_file() and not here.is_symlink():
                shutil.copy2(here, target)
            else:
                target.write_text(dump_front_matter(json.loads(front_matter or "{}")) + content, encoding="utf-8")

    def close(self) -> None:
        """Stop this process's subscriptions."""
        if self._subscriptions is not None:
            self._subscriptions.close()
