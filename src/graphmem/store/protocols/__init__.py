"""The store as small protocols: what every backend (SQLite now, PostgreSQL next) provides.

Engine code talks to a store only through these methods; no SQL outside ``store/<backend>/``.
Each protocol has a contract suite in ``tests/store_contract/`` that runs against every backend,
and a test there fails when a protocol method has no contract test: a new backend is written by
making that suite pass (add its factory to ``tests/store_contract/conftest.py``).

Rules every method follows unless its docstring says otherwise:

- **Writes** are made inside ``with store.transaction():`` (one public operation, with the events
  it appends, is one transaction). A write that breaks a constraint (a duplicate id, an edge or a
  mention pointing at a missing row) raises :class:`~graphmem.errors.BackendError` when the
  transaction ends, and nothing of that transaction is written. On a read-only store
  ``transaction()`` itself raises BackendError.
- **Batch reads** (an ``Iterable`` of ids in, a ``dict`` out) leave missing ids out of the result;
  an empty input gives an empty result; a repeated id counts once.
- **Single reads** return None for a missing id; list reads return ``[]``.
- **Updates and deletes** of a missing id change nothing and raise nothing, unless documented.
- **Full-text** methods never read user text as query syntax (quotes, ``*``, ``NEAR``, ``-``, ``:``
  are plain characters); text without a word gives no hits, and so does ``k`` <= 0.
- Timestamps are ISO-8601 strings; scores are floats, higher is better. The contract pins orders
  and signs of scores, never their values, so another ranking function (ts_rank) can pass.

Notes for a new backend (what SQLite does implicitly): row ids (``rowid``/``rid``/``rowid_``,
event and vector ids) only grow, and they are the resume cursors of the ``*_to_embed`` and
``*_after`` methods; a replaced vector takes a new row id and bumps the deletions counter of
:meth:`VectorStore.vector_state`; ``slugs_taken`` compares slugs bytewise (SQLite's BINARY
collation: use ``COLLATE "C"``); deleting a node cascades to its names, edges, mentions, memory
and skill rows and vector; provenance has no foreign key to its item (it is pruned explicitly).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .documents import DocumentStore
from .events import EventStore
from .evidence import EvidenceStore
from .graph import GraphStore
from .lifecycle import Lifecycle
from .memory import MemoryStore
from .portable import PortableStore
from .skills import SkillStore
from .vectors import VectorStore
from .wiki import WikiStore

__all__ = [
    "Lifecycle", "EventStore", "DocumentStore", "GraphStore", "EvidenceStore", "VectorStore", "WikiStore",
    "SkillStore", "MemoryStore", "PortableStore", "Store", "PROTOCOLS",
]


@runtime_checkable
class Store(Lifecycle, EventStore, DocumentStore, GraphStore, EvidenceStore, VectorStore, WikiStore, SkillStore,
            MemoryStore, PortableStore, Protocol):
    """Everything a backend provides: the union of the protocols above.

    Engine code that needs only part of it should ask for that protocol (a function reading
    evidence takes an ``EvidenceStore``), so that what it touches is visible in its signature.
    """


PROTOCOLS: tuple[type, ...] = (Lifecycle, EventStore, DocumentStore, GraphStore, EvidenceStore, VectorStore,
                               WikiStore, SkillStore, MemoryStore, PortableStore)
"""The protocols ``Store`` is made of (the contract suite checks each method is tested)."""
