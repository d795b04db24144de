"""What engine code receives: the store, the config, the embeddings, the clock, notes and hooks.

Engine packages (``ingest/``, ``retrieval/``, ``embeddings/``, ``wiki/``, ``memory/``, ``skills/``)
take a :class:`Context`, never the knowledge base or a face. Where the engine must trigger
something that lives above it (regenerate wiki pages after an ingest, invalidate the skills index,
add wiki hits to a search), it calls a hook that the layer above registered on
:attr:`Context.hooks`; with no hook registered the call does nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .config import Config
from .store import Store

__all__ = ["Context", "Hooks", "utc_now", "AFTER_INGEST", "AFTER_DELETE", "WIKI_DEFERRED", "WIKI_FLUSH",
           "WIKI_FLUSH_DUE", "DELETE_DOCUMENT", "SKILLS_CHANGED", "FIND_ENTITY", "SEARCH_WIKI"]

# The hooks the engine calls, registered by kb.py (signatures and owners in docs/architecture.md).
AFTER_INGEST = "after_ingest"  # (doc_id, node_ids, warnings): inside the ingest transaction
AFTER_DELETE = "after_delete"  # (doc_id, kept node_ids, removed node_ids): inside the delete transaction
WIKI_DEFERRED = "wiki_deferred"  # (flush=bool) -> context manager: page regeneration held until its end
WIKI_FLUSH = "wiki_flush"  # (warnings) -> dict: regenerate every page still pending
WIKI_FLUSH_DUE = "wiki_flush_due"  # (warnings): regenerate pending pages when enough documents piled up
DELETE_DOCUMENT = "delete_document"  # (doc_id): delete a document with its pages and graph leftovers
SKILLS_CHANGED = "skills_changed"  # (): the stored skills changed; drop cached indexes
FIND_ENTITY = "find_entity"  # (name) -> Node | None: an entity by name or alias
SEARCH_WIKI = "search_wiki"  # (query, k, ...) -> hits: wiki pages for search (kb.wiki.search_wiki)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class Hooks:
    """Named callbacks registered by the layers above the engine.

    A hook name maps to a list of callables; :meth:`call` runs them in registration order and
    returns their results. Names in use are listed in docs/architecture.md; a new one needs no
    change here.
    """

    def __init__(self) -> None:
        self._hooks: dict[str, list[Callable[..., Any]]] = {}

    def register(self, name: str, fn: Callable[..., Any]) -> None:
        self._hooks.setdefault(name, []).append(fn)

    def has(self, name: str) -> bool:
        return bool(self._hooks.get(name))

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Run every callable registered under ``name``; ``[]`` when there is none."""
        return [fn(*args, **kwargs) for fn in self._hooks.get(name, ())]

    def first(self, name: str, *args: Any, default: Any = None, **kwargs: Any) -> Any:
        """The result of the first callable registered under ``name`` (``default`` if none)."""
        fns = self._hooks.get(name)
        return fns[0](*args, **kwargs) if fns else default


@dataclass(eq=False)  # identity: one open knowledge base, usable as a (weak) dict key for caches
class Context:
    """One open knowledge base as the engine sees it.

    ``embeddings`` is the knowledge base's embedding manager (set once it is built, since the
    manager itself receives this context).
    """

    home: Path
    config: Config
    store: Store
    clock: Callable[[], datetime] = utc_now
    embeddings: Any = None
    notes: list[str] = field(default_factory=list)
    hooks: Hooks = field(default_factory=Hooks)

    @property
    def read_only(self) -> bool:
        return bool(self.store.read_only)

    def now(self) -> str:
        """Current time as an ISO-8601 UTC string with milliseconds (from the injectable clock)."""
        return self.clock().astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def warn(self, message: str) -> None:
        """Record a note for the caller (also issued as a Python warning)."""
        self.notes.append(message)
        warnings.warn(message, stacklevel=3)
