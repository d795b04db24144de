"""What a face receives from the layer that builds it.

Faces sit below ``kb.py`` and may not import it (not even for type checking). ``kb.py`` passes the
knowledge base itself, which satisfies this protocol; once every engine function takes a
:class:`~graphmem.context.Context`, the faces can take ``kb.ctx`` instead (it has all of this but
``graph``, which the wiki uses to resolve an entity by name).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..config import Config
    from ..context import Context
    from ..embeddings.manager import EmbeddingManager
    from ..models import Node
    from ..store import Store

__all__ = ["FaceHost", "EntityFinder"]


class EntityFinder(Protocol):
    """What the wiki needs of the graph face (a protocol, so faces/graph.py and this module do not
    import each other)."""

    def find(self, name_or_id: str) -> Node | None: ...


class FaceHost(Protocol):
    """The open knowledge base as the faces see it."""

    home: Path
    config: Config
    store: Store
    ctx: Context
    embeddings: EmbeddingManager

    @property
    def graph(self) -> EntityFinder:
        """The graph face (read-only here, so the knowledge base's ``Graph`` satisfies it)."""
        ...

    def now(self) -> str:
        """Current time, ISO-8601 UTC (the injectable clock)."""
        ...

    def warn(self, message: str) -> None:
        """A note for the caller (also a Python warning)."""
        ...
