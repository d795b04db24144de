"""The change feed: event types (graphmem's and ContextKit's names), following the log from any process,
subscriptions with retries, and sinks (signed webhooks, JSONL files)."""

from __future__ import annotations

from .follow import DeliveryFailure, Subscription, Subscriptions, follow
from .sinks import JsonlSink, SignatureError, WebhookSink, verify
from .types import CONTEXTKIT_TYPES, EVENT_TYPES, contextkit_name, graphmem_types

__all__ = ["follow", "Subscriptions", "Subscription", "DeliveryFailure", "WebhookSink", "JsonlSink", "verify",
           "SignatureError", "EVENT_TYPES", "CONTEXTKIT_TYPES", "contextkit_name", "graphmem_types"]
