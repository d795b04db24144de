"""Faces: thin views over one store (documents, graph, events; later wiki, memory, skills)."""

from .documents import Documents
from .events import Events
from .graph import Graph

__all__ = ["Documents", "Events", "Graph"]
