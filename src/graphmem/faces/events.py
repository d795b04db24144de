"""``kb.events``: the append-only change log (one entry per change, written in the same
transaction as the change), and the feed over it: subscriptions, following, forwarding to a sink."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..feed.follow import DeliveryFailure, Subscription, Subscriptions, check_scope, follow
from ..feed.types import graphmem_types
from ..models import Event
from ..store import open_store
from ..store.protocols import EventStore
from ..validate import checked_inputs

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["Events"]


@checked_inputs("events")
class Events:
    """The events face of a knowledge base."""

    def __init__(self, kb: FaceHost) -> None:
        self._kb = kb
        self._subscriptions: Subscriptions | None = None

    def list(self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None,
             limit: int = 100) -> list[Event]:
        """Events with id greater than ``after_id``, oldest first (page with the last id seen)."""
        if not isinstance(limit, int) or limit < 0:
            raise InvalidInput(f"limit: expected a non-negative integer, got {limit!r}")
        if isinstance(types, str):
            types = [types]
        return self._kb.store.list_events(after_id, types, target, limit)

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
        for event in self.follow(start, graphmem_types(types) if types else None, None, poll, stop):
            sink(event)
            with store.transaction():
                store.set_feed_cursor(name, event.id, self._kb.now())
            sent += 1
            if max_events is not None and sent >= max_events:
                stop.set()
        return sent

    def close(self) -> None:
        """Stop this process's subscriptions."""
        if self._subscriptions is not None:
            self._subscriptions.close()
