"""ContextKit's ``WebhookSink(url, secret=...)`` with ``.send(event)``: graphmem's signed webhook sink
(HMAC-SHA256 over ``timestamp + "." + body``, retries with backoff, a dead-letter file; receivers check a
delivery with :func:`graphmem.feed.verify`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....errors import InvalidInput
from ....feed.sinks import Delivery, verify
from ....feed.sinks import WebhookSink as _GraphmemWebhookSink
from ....models import Event

__all__ = ["WebhookSink", "verify"]


class WebhookSink(_GraphmemWebhookSink):
    """``POST`` each change to ``url``, signed with ``secret``; ``send`` takes a graphmem event or ContextKit's
    ``ChangeEvent``."""

    def __init__(self, url: str, secret: str | None = None, *, retries: int = 5, backoff: float = 0.5,
                 timeout: float = 10.0, dead_letter: str | Path | None = None, **kwargs: Any) -> None:
        if secret is None:
            raise InvalidInput("secret: ContextKit's WebhookSink needs secret= to sign deliveries (HMAC-SHA256)")
        super().__init__(url, secret, retries=retries, backoff=backoff, timeout=timeout, dead_letter=dead_letter,
                         **kwargs)

    def send(self, event: Any) -> Delivery:
        """Deliver one change (a :class:`graphmem.models.Event` or a ``ChangeEvent``)."""
        if not isinstance(event, Event):
            event_id = getattr(event, "event_id", None)
            if not isinstance(event_id, int):
                raise InvalidInput(f"event: expected a graphmem Event or a ChangeEvent, got {event!r}")
            event = Event(event_id, getattr(event, "graphmem_type", "") or event.event_type, event.node_id,
                          event.timestamp, dict(event.payload))
        return super().send(event)

    __call__ = send
