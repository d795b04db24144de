"""The marks (and page subjects) of generated pages: ``doc:<document id>`` for a document's summary
page, ``entity:<node id>`` for an entity's page."""

from __future__ import annotations

__all__ = ["DOC", "ENT"]

DOC = "doc:"
ENT = "entity:"
