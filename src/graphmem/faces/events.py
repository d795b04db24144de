"""``kb.events``: the append-only change log (one entry per change, written in the same
transaction as the change)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..models import Event
from ..validate import checked_inputs

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["Events"]


@checked_inputs("events")
class Events:
    """The events face of a knowledge base."""

    def __init__(self, kb: FaceHost) -> None:
        self._kb = kb

    def list(self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None,
             limit: int = 100) -> list[Event]:
        """Events with id greater than ``after_id``, oldest first (page with the last id seen)."""
        if not isinstance(limit, int) or limit < 0:
            raise InvalidInput(f"limit: expected a non-negative integer, got {limit!r}")
        if isinstance(types, str):
            types = [types]
        return self._kb.store.list_events(after_id, types, target, limit)
