"""Following the change log: the log in the store is the source, so a follower sees the writes of this
process and of every other process alike, in commit order.

Why polling is enough: SQLite has one writer at a time (every write transaction starts with BEGIN
IMMEDIATE), so event ids are assigned and committed in increasing order and a reader that asks for
"ids greater than the last one I saw" can never skip an event that commits later with a smaller id.
Each follower reads through its own read-only connection, so it never sees another thread's
uncommitted events and never takes the write lock.
"""

from __future__ import annotations

import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput
from ..models import Event
from ..store.protocols import EventStore
from .types import SCOPE_FIELDS, filter_types, matches_scope

__all__ = ["follow", "Subscriptions", "Subscription", "DeliveryFailure", "check_scope", "wait_for"]

ReaderFactory = Callable[[], EventStore]
"""Opens a fresh read connection to the store (closed by the follower when it stops)."""

_BATCH = 500


def check_scope(scope: Mapping[str, Any] | None) -> dict[str, str] | None:
    """``scope`` as a filter, or :class:`InvalidInput` naming the unknown field."""
    if scope is None:
        return None
    if not isinstance(scope, Mapping):
        raise InvalidInput(f"scope: expected a mapping of {', '.join(SCOPE_FIELDS)}, got {scope!r}")
    bad = [k for k in scope if k not in SCOPE_FIELDS]
    if bad:
        raise InvalidInput(f"scope: unknown field {bad[0]!r}; use {', '.join(SCOPE_FIELDS)}")
    return {k: str(v) for k, v in scope.items() if v is not None}


def follow(open_reader: ReaderFactory, after_id: int = 0, types: Sequence[str] | None = None,
           scope: Mapping[str, Any] | None = None, poll: float = 0.05,
           stop: threading.Event | None = None,
           on_position: Callable[[int], None] | None = None) -> Iterator[Event]:
    """Events with id greater than ``after_id``, oldest first, forever (until ``stop`` is set): the
    whole backlog first, then each new event once it is committed, by any process. ``types`` may mix
    graphmem types and ContextKit names. ``on_position(id)`` hears how far the log has been read
    (filtered-out events included) once every event read so far was yielded."""
    stop = stop or threading.Event()
    wanted = filter_types(types) if types else None
    reader = open_reader()
    try:
        cursor = after_id
        while not stop.is_set():
            # Read the head first: with a type filter the batch ends at the last match, but everything
            # up to the head has been looked at once the batch comes back short.
            head = reader.last_event_id()
            batch = reader.list_events(cursor, wanted, None, _BATCH)
            for event in batch:
                cursor = event.id
                if matches_scope(event.payload, scope):
                    yield event
                if stop.is_set():
                    return
            if len(batch) < _BATCH:
                cursor = max(cursor, head)
            if on_position is not None:
                on_position(cursor)
            if len(batch) < _BATCH:
                stop.wait(poll)
    finally:
        close = getattr(reader, "close", None)
        if close is not None:
            close()


@dataclass(frozen=True)
class DeliveryFailure:
    """An event a callback kept failing on (reported once its retries are spent, then skipped)."""

    token: str
    event_id: int
    event_type: str
    attempts: int
    error: str


@dataclass
class Subscription:
    """One callback following the log on its own thread: ``last_delivered`` is the id of the last event
    handed to the callback, ``position`` how far the log has been read (events filtered out included)."""

    token: str
    callback: Callable[[Event], Any]
    types: list[str] | None
    scope: dict[str, str] | None
    after_id: int
    retries: int
    backoff: float
    on_error: Callable[[DeliveryFailure], Any] | None
    stop: threading.Event = field(default_factory=threading.Event)
    last_delivered: int = 0
    position: int = 0
    failures: list[DeliveryFailure] = field(default_factory=list)
    thread: threading.Thread | None = None


class Subscriptions:
    """The subscriptions of one open knowledge base; each runs on its own daemon thread, so a slow or
    failing callback delays only itself, never a writer or another subscriber."""

    def __init__(self, open_reader: ReaderFactory, last_id: Callable[[], int], poll: float = 0.02) -> None:
        self._open_reader = open_reader
        self._last_id = last_id
        self._poll = poll
        self._subs: dict[str, Subscription] = {}
        self._lock = threading.Lock()

    def subscribe(self, callback: Callable[[Event], Any], event_types: Sequence[str] | None = None,
                  from_event_id: int | None = None, scope: Mapping[str, Any] | None = None, *,
                  retries: int = 3, backoff: float = 0.05,
                  on_error: Callable[[DeliveryFailure], Any] | None = None) -> str:
        """Call ``callback(event)`` for every event with id greater than ``from_event_id`` (None: only
        events committed from now on; 0: the whole log first), in order, at least once. A callback that
        raises is retried ``retries`` times with exponential backoff from ``backoff`` seconds, then the
        failure goes to ``on_error`` (default: a warning) and delivery moves on. Returns the token for
        :meth:`unsubscribe`."""
        if not callable(callback):
            raise InvalidInput(f"callback: expected a callable, got {callback!r}")
        if from_event_id is not None and (not isinstance(from_event_id, int) or from_event_id < 0):
            raise InvalidInput(f"from_event_id: expected a non-negative event id, got {from_event_id!r}")
        filter_types(event_types, "event_types")  # an unknown name would never be delivered
        if isinstance(event_types, str):
            event_types = [event_types]
        if not isinstance(retries, int) or retries < 0:
            raise InvalidInput(f"retries: expected a non-negative integer, got {retries!r}")
        if not isinstance(backoff, (int, float)) or backoff < 0:
            raise InvalidInput(f"backoff: expected a non-negative number of seconds, got {backoff!r}")
        after = self._last_id() if from_event_id is None else from_event_id
        sub = Subscription("sub_" + uuid.uuid4().hex[:16], callback, list(event_types) if event_types else None,
                           check_scope(scope), after, retries, float(backoff), on_error, last_delivered=after,
                           position=after)
        sub.thread = threading.Thread(target=self._run, args=(sub,), name=f"graphmem-{sub.token}", daemon=True)
        with self._lock:
            self._subs[sub.token] = sub
        sub.thread.start()
        return sub.token

    def unsubscribe(self, token: str, timeout: float = 5.0) -> bool:
        """Stop the subscription ``token`` (waits up to ``timeout`` s for its callback to return);
        False if no such subscription."""
        with self._lock:
            sub = self._subs.pop(token, None)
        if sub is None:
            return False
        sub.stop.set()
        if sub.thread is not None and sub.thread is not threading.current_thread():
            sub.thread.join(timeout)
        return True

    def get(self, token: str) -> Subscription | None:
        """The subscription ``token`` (its ``last_delivered`` id and ``failures``), or None."""
        return self._subs.get(token)

    def close(self) -> None:
        """Stop every subscription."""
        for token in list(self._subs):
            self.unsubscribe(token)

    def _run(self, sub: Subscription) -> None:
        def read_up_to(event_id: int) -> None:
            sub.position = event_id

        for event in follow(self._open_reader, sub.after_id, sub.types, sub.scope, self._poll, sub.stop,
                            read_up_to):
            self._deliver(sub, event)
            sub.last_delivered = event.id

    def _deliver(self, sub: Subscription, event: Event) -> None:
        delay = sub.backoff
        for attempt in range(1, sub.retries + 2):
            try:
                sub.callback(event)
                return
            except Exception as exc:  # a subscriber's bug must not kill the feed: retry, then report
                if attempt > sub.retries or sub.stop.is_set():
                    failure = DeliveryFailure(sub.token, event.id, event.type, attempt, f"{type(exc).__name__}: {exc}")
                    sub.failures.append(failure)
                    if sub.on_error is not None:
                        sub.on_error(failure)
                    else:
                        warnings.warn(f"subscription {sub.token}: event {event.id} ({event.type}) not delivered "
                                      f"after {attempt} attempts: {failure.error}", stacklevel=2)
                    return
                sub.stop.wait(delay)
                delay = min(delay * 2, 30.0)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0, poll: float = 0.01) -> bool:
    """Poll ``predicate`` until true or ``timeout`` s passed (for callers that wait on a subscriber)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(poll)
    return predicate()
